//! Dense 2-D matrix product `a @ b`.
//!
//! Operands are promoted to a common dtype ([`crate::promote::result_type`]); the kernel is
//! chosen by that dtype ([`Product`], reached through [`with_dtype!`](crate::with_dtype)):
//! - `f32` and `f64` run the `gemm` crate (packing and SIMD microkernels picked at run time)
//!   on the operands' own row and column strides: a transposed, flipped (negative strides),
//!   expanded (stride 0) or offset view is read in place, never copied. Products of at least
//!   [`PARALLEL_MIN_WORK`] multiply-adds may split across rayon's pool.
//! - `f16`/`bf16` are converted to `f32`, multiplied there, and the result rounded once.
//! - Integers (wrapping on overflow) and `bool` (the logical (or, and) product, as NumPy) run an
//!   exact cache-blocked loop on contiguous copies.
//!
//! Empty dims give zeros (`k == 0`: an `[m, n]` of zeros).

use std::marker::PhantomData;

use half::{bf16, f16};
use rayon::prelude::*;

use super::Tensor;
use crate::dtype::{DType, Element};
use crate::error::{Result, TesseraError};
use crate::kernels::scalar_math::Arith;
use crate::layout::Layout;
use crate::promote::result_type;
use crate::with_dtype;

/// Products with at least this many multiply-adds (`m * k * n`) hand `gemm` rayon's pool when
/// parallel work is allowed ([`crate::kernels::parallel::enabled`]); smaller ones run on the
/// calling thread and never touch the pool. Past this bound `gemm` applies its own threshold
/// per block (`gemm::get_threading_threshold`, 48 * 48 * 256 by default), so squares up to
/// about 84 still run on one thread; on 2 cores the first square that gains from two threads
/// was 96 (measured figures: docs/performance.md).
const PARALLEL_MIN_WORK: usize = 64 * 64 * 64;

/// Rows of `a` per parallel task (exact kernel).
const ROW_BLOCK: usize = 64;
/// Depth (shared dim) per block: a `DEPTH_BLOCK × COL_BLOCK` panel of `b` stays in cache.
const DEPTH_BLOCK: usize = 256;
/// Columns per block.
const COL_BLOCK: usize = 512;

impl Tensor {
    /// Matrix product of two 2-D tensors: `[m, k] @ [k, n] -> [m, n]`.
    ///
    /// Errors: `InvalidArgument` unless both operands are 2-D, `ShapeMismatch` when the inner
    /// dims differ, `DType` when the dtypes have no common type.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let a = Tensor::from_slice(&[1f32, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
    /// let b = Tensor::from_slice(&[1f32, 0., 0., 1., 1., 1.], &[3, 2]).unwrap();
    /// let c = a.matmul(&b).unwrap();
    /// assert_eq!(c.shape(), &[2, 2]);
    /// assert_eq!(c.to_vec::<f32>().unwrap(), vec![4., 5., 10., 11.]);
    /// // A transposed operand is read through its strides, without a copy.
    /// let at = Tensor::from_slice(&[1f32, 4., 2., 5., 3., 6.], &[3, 2]).unwrap().t().unwrap();
    /// assert_eq!(at.matmul(&b).unwrap().to_vec::<f32>().unwrap(), vec![4., 5., 10., 11.]);
    /// assert!(a.matmul(&a).is_err());
    /// ```
    pub(crate) fn matmul_dense(&self, other: &Tensor) -> Result<Tensor> {
        let (m, k, n) = matmul_dims(self.shape(), other.shape())?;
        let dt = result_type(self.dtype(), other.dtype())?;
        with_dtype!(dt, T => T::product(self, other, [m, k, n]))
    }
}

/// `(m, k, n)` of a product of shapes `a` and `b`, or a typed error.
pub(crate) fn matmul_dims(a: &[usize], b: &[usize]) -> Result<(usize, usize, usize)> {
    if a.len() != 2 || b.len() != 2 {
        return Err(TesseraError::InvalidArgument(format!(
            "matmul needs two 2-D tensors, got shapes {a:?} and {b:?}"
        )));
    }
    if a[1] != b[0] {
        return Err(TesseraError::ShapeMismatch(
            format!("matmul: inner dims differ in {a:?} @ {b:?}").into(),
        ));
    }
    Ok((a[0], a[1], b[1]))
}

/// The product kernel of one result dtype: `a @ b` as a new `[m, n]` tensor of `Self`'s dtype,
/// for operands of any dtypes that promote to it (shapes already checked: `mkn = [m, k, n]`).
trait Product: Element {
    fn product(a: &Tensor, b: &Tensor, mkn: [usize; 3]) -> Result<Tensor>;
}

macro_rules! exact_product {
    ($($t:ty),*) => {$(
        impl Product for $t {
            fn product(a: &Tensor, b: &Tensor, mkn: [usize; 3]) -> Result<Tensor> {
                exact::<$t>(a, b, mkn)
            }
        }
    )*};
}
exact_product!(bool, u8, i8, i32, i64);

macro_rules! via_f32_product {
    ($($t:ty),*) => {$(
        impl Product for $t {
            /// Accumulates in `f32` and rounds once (as the elementwise `f16` arithmetic).
            fn product(a: &Tensor, b: &Tensor, mkn: [usize; 3]) -> Result<Tensor> {
                let (a, b) = (a.astype_dense(DType::F32)?, b.astype_dense(DType::F32)?);
                f32::product(&a, &b, mkn)?.astype_dense(<$t>::DTYPE)
            }
        }
    )*};
}
via_f32_product!(f16, bf16);

macro_rules! gemm_product {
    ($($t:ty),*) => {$(
        impl Product for $t {
            fn product(a: &Tensor, b: &Tensor, mkn: [usize; 3]) -> Result<Tensor> {
                // Miri cannot run `gemm`'s SIMD intrinsics: the exact loop stands in there.
                if cfg!(miri) {
                    return exact::<$t>(a, b, mkn);
                }
                strided_gemm::<$t>(&a.astype_if(<$t>::DTYPE)?, &b.astype_if(<$t>::DTYPE)?, mkn)
            }
        }
    )*};
}
gemm_product!(f32, f64);

/// `a @ b` for `f32`/`f64` operands of that dtype through `gemm::gemm`, reading both operands
/// in place through their strides.
fn strided_gemm<T: Element>(a: &Tensor, b: &Tensor, [m, k, n]: [usize; 3]) -> Result<Tensor> {
    // The dense gate first, so a sparse operand errors as every dense kernel does.
    let (sa, sb) = (a.dense_storage()?, b.dense_storage()?);
    let out = Tensor::zeros(&[m, n], T::DTYPE)?;
    if m == 0 || n == 0 || k == 0 {
        return Ok(out);
    }
    // The read guards live until the end of the call. One guard when both operands share a
    // storage (as in `a.matmul(&a.t())`): a second read lock could wait behind a queued
    // writer, which itself waits for the first guard.
    let ga = sa.read_as::<T>();
    let gb = if a.shares_storage(b) {
        None
    } else {
        Some(sb.read_as::<T>())
    };
    let lhs = Strided::new(&ga, a.layout())?;
    let rhs = Strided::new(gb.as_deref().unwrap_or(&ga), b.layout())?;
    // A fresh storage: no other guard on it can exist.
    let mut dst = out.dense_storage()?.write_as::<T>();
    debug_assert_eq!(dst.len(), m * n);
    // `n <= m * n`, the length of an allocation: fits `isize`.
    let dst_rs = isize::try_from(n).map_err(|_| TesseraError::ShapeOverflow(format!("{n}")))?;
    let parallelism = parallelism(m.saturating_mul(k).saturating_mul(n));
    let (zero, one) = (T::from_f64(0.0), T::from_f64(1.0));
    // SAFETY: `T` is `f32` or `f64` (the only instantiations, by `gemm_product!`), which
    // `gemm` supports. `lhs` and `rhs` point at element (0, 0) of an `[m, k]` and a `[k, n]`
    // operand whose every element `(i, j)` (at `ptr + i * rs + j * cs`) lies inside the slice
    // of a read guard held until after the call (`Strided::new` checked it with checked
    // arithmetic, so no offset overflows either); the guards exclude writers, so nothing
    // changes the operands meanwhile, and reads from several threads are fine. `dst` is the
    // `m * n` slice of a new storage under its write guard, row-major (row stride `n`, column
    // stride 1), disjoint from both operands; with `read_dst == false` `gemm` overwrites it
    // with `1 * lhs @ rhs` without reading it.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs,
            false,
            lhs.ptr,
            lhs.cs,
            lhs.rs,
            rhs.ptr,
            rhs.cs,
            rhs.rs,
            zero,
            one,
            false,
            false,
            false,
            parallelism,
        );
    }
    drop(dst);
    Ok(out)
}

/// `gemm`'s threading for a product of `work` multiply-adds: rayon's current pool (all its
/// threads) when kernels may use it and the product is large enough, else the calling thread.
fn parallelism(work: usize) -> gemm::Parallelism {
    // Size first, as the other kernels: a small product never touches rayon's pool (nor
    // starts it), and `Parallelism::None` does not use it.
    if work >= PARALLEL_MIN_WORK && crate::kernels::parallel::enabled() {
        gemm::Parallelism::Rayon(rayon::current_num_threads())
    } else {
        gemm::Parallelism::None
    }
}

/// A 2-D operand as `gemm` reads it: a pointer to element (0, 0) and signed row and column
/// strides in elements, valid while the borrowed slice (a storage guard's) lives.
struct Strided<'a, T> {
    ptr: *const T,
    rs: isize,
    cs: isize,
    _slice: PhantomData<&'a [T]>,
}

impl<'a, T> Strided<'a, T> {
    /// The operand with `layout` (2-D, no zero dim) over storage slice `s`; errors unless every
    /// element it reaches lies in `s`.
    fn new(s: &'a [T], layout: &Layout) -> Result<Self> {
        let (dims, strides) = (layout.dims(), layout.strides());
        let (rs, cs) = (strides[0], strides[1]);
        check_reach(s.len(), layout.offset(), [dims[0], dims[1]], [rs, cs])?;
        Ok(Strided {
            // In bounds: `check_reach` showed `offset < s.len()`. `wrapping_add` keeps the
            // slice's provenance, which negative strides need (they reach below the offset).
            ptr: s.as_ptr().wrapping_add(layout.offset()),
            rs,
            cs,
            _slice: PhantomData,
        })
    }
}

/// Errors unless every element `offset + i * strides[0] + j * strides[1]`
/// (`i < dims[0]`, `j < dims[1]`, both dims non-zero) lies in `0..len`, computed with checked
/// arithmetic (an overflow is an error too). A layout that passed its own bounds check always
/// passes; this is the local proof the `gemm` call relies on.
fn check_reach(len: usize, offset: usize, dims: [usize; 2], strides: [isize; 2]) -> Result<()> {
    let out_of_range = || {
        TesseraError::OutOfBounds(format!(
            "matmul operand with dims {dims:?}, strides {strides:?} and offset {offset} reaches \
             outside its storage of {len} elements"
        ))
    };
    let (mut lo, mut hi) = (0isize, 0isize);
    for (d, s) in dims.into_iter().zip(strides) {
        let last = d.checked_sub(1).ok_or_else(out_of_range)?;
        let reach = isize::try_from(last)
            .ok()
            .and_then(|l| l.checked_mul(s))
            .ok_or_else(out_of_range)?;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or_else(out_of_range)?;
        } else {
            hi = hi.checked_add(reach).ok_or_else(out_of_range)?;
        }
    }
    let offset = isize::try_from(offset).map_err(|_| out_of_range())?;
    let first = offset.checked_add(lo).ok_or_else(out_of_range)?;
    let last = offset.checked_add(hi).ok_or_else(out_of_range)?;
    // `last >= first`: non-negative past the first test.
    if first < 0 || last.unsigned_abs() >= len {
        return Err(out_of_range());
    }
    Ok(())
}

/// The exact product: operands cast to `T` and made contiguous, then [`blocked`].
fn exact<T: Arith>(a: &Tensor, b: &Tensor, [m, k, n]: [usize; 3]) -> Result<Tensor> {
    let a = cast_contiguous(a, T::DTYPE)?;
    let b = cast_contiguous(b, T::DTYPE)?;
    let out = Tensor::zeros(&[m, n], T::DTYPE)?;
    // Both operands are contiguous: read them in place (one guard when they share a storage,
    // as in `a.matmul(&a)`; a second read lock could wait behind a writer).
    let ga = a.dense_storage()?.read_as::<T>();
    let gb = if a.shares_storage(&b) {
        None
    } else {
        Some(b.dense_storage()?.read_as::<T>())
    };
    let (oa, ob) = (a.layout().offset(), b.layout().offset());
    // `get` rather than indexing: an empty operand may carry any offset.
    let av = ga.get(oa..oa + m * k).unwrap_or(&[]);
    let bv = gb
        .as_deref()
        .unwrap_or(&ga)
        .get(ob..ob + k * n)
        .unwrap_or(&[]);
    let mut cv = out.dense_storage()?.write_as::<T>();
    blocked::<T>(av, bv, &mut cv, m, k, n);
    drop(cv);
    Ok(out)
}

fn cast_contiguous(t: &Tensor, dt: DType) -> Result<Tensor> {
    if t.dtype() == dt {
        t.contiguous_dense()
    } else {
        t.astype_dense(dt)
    }
}

/// `c[m, n] += a[m, k] @ b[k, n]`, all row-major and contiguous, with [`Arith`]'s `add` and
/// `mul` (wrapping integers; or/and for `bool`).
fn blocked<T: Arith>(a: &[T], b: &[T], c: &mut [T], m: usize, k: usize, n: usize) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let block = |(blk, c_rows): (usize, &mut [T])| {
        let i0 = blk * ROW_BLOCK;
        let rows = c_rows.len() / n;
        for k0 in (0..k).step_by(DEPTH_BLOCK) {
            let k1 = (k0 + DEPTH_BLOCK).min(k);
            for j0 in (0..n).step_by(COL_BLOCK) {
                let j1 = (j0 + COL_BLOCK).min(n);
                for r in 0..rows {
                    let a_row = &a[(i0 + r) * k..(i0 + r + 1) * k];
                    let c_row = &mut c_rows[r * n + j0..r * n + j1];
                    for (kk, &aik) in a_row[k0..k1].iter().enumerate() {
                        let b_row = &b[(k0 + kk) * n + j0..(k0 + kk) * n + j1];
                        for (cv, &bv) in c_row.iter_mut().zip(b_row) {
                            *cv = cv.add(aik.mul(bv));
                        }
                    }
                }
            }
        }
    };
    // Sequential in a forked child (the pool has no threads there), on a one-thread pool, or
    // for a single row block (one task: rayon's pool is not touched, nor started).
    if m > ROW_BLOCK && crate::kernels::parallel::enabled() {
        c.par_chunks_mut(ROW_BLOCK * n).enumerate().for_each(block);
    } else {
        c.chunks_mut(ROW_BLOCK * n).enumerate().for_each(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_reach_accepts_exactly_the_layouts_inside_the_storage() {
        // Contiguous 3x4 in 12 elements, and at offset 1 it overruns by one.
        assert!(check_reach(12, 0, [3, 4], [4, 1]).is_ok());
        assert!(check_reach(12, 1, [3, 4], [4, 1]).is_err());
        // Transposed, flipped (the base is the last element), expanded (stride 0).
        assert!(check_reach(12, 0, [4, 3], [1, 4]).is_ok());
        assert!(check_reach(12, 11, [3, 4], [-4, -1]).is_ok());
        assert!(check_reach(12, 10, [3, 4], [-4, -1]).is_err());
        assert!(check_reach(4, 0, [1000, 4], [0, 1]).is_ok());
        // Mixed signs: the row stride reaches 8 below the offset, the columns 3 above.
        assert!(check_reach(12, 8, [3, 4], [-4, 1]).is_ok());
        assert!(check_reach(12, 7, [3, 4], [-4, 1]).is_err());
    }

    #[test]
    fn check_reach_reports_overflow_and_empty_dims_as_errors() {
        let e = check_reach(usize::MAX, 0, [usize::MAX, 2], [2, 1]).unwrap_err();
        assert!(matches!(e, TesseraError::OutOfBounds(_)), "{e}");
        assert!(check_reach(usize::MAX, 0, [3, 3], [isize::MAX, 1]).is_err());
        assert!(check_reach(usize::MAX, usize::MAX, [1, 1], [1, 1]).is_err());
        assert!(check_reach(10, 0, [0, 3], [3, 1]).is_err());
    }

    #[test]
    fn float_products_read_strided_operands_and_match_the_exact_loop() {
        // Small sizes: under Miri this runs the exact loop for both sides.
        let a = Tensor::from_vec((0..12).map(f64::from).collect(), &[3, 4]).unwrap();
        let b = Tensor::from_vec((0..20).map(|v| f64::from(v) - 7.0).collect(), &[4, 5]).unwrap();
        let fa = a.flip_dense(None).unwrap();
        let tb = b
            .t_dense()
            .unwrap()
            .contiguous_dense()
            .unwrap()
            .t_dense()
            .unwrap();
        let got = fa.matmul_dense(&tb).unwrap();
        let want = exact::<f64>(&fa, &tb, [3, 4, 5]).unwrap();
        assert_eq!(got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
        // The same storage on both sides takes one guard.
        let aat = a.matmul_dense(&a.t_dense().unwrap()).unwrap();
        assert_eq!(aat.to_vec::<f64>().unwrap()[..3], [14.0, 38.0, 62.0]);
    }
}
