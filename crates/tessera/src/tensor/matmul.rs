//! Dense matrix product `a @ b` with NumPy's `matmul` semantics: 2-D operands are matrices;
//! N-D operands are stacks of matrices in their last two dims, the leading (batch) dims
//! broadcast against each other; a 1-D lhs is a row `[1, k]` and a 1-D rhs a column `[k, 1]`,
//! and the added dim is removed from the result ([`MatmulShape`]).
//!
//! Operands are promoted to a common dtype ([`crate::promote::result_type`]); the kernel is
//! chosen by that dtype ([`Product`], reached through [`with_dtype!`](crate::with_dtype)):
//! - `f32`, `f64`, `complex64` and `complex128` run faer's matrix product (packing and SIMD
//!   microkernels picked at run time, AVX-512 included; docs/design.md M1) on the operands'
//!   own row and column strides: a transposed, flipped (negative strides), expanded (stride 0)
//!   or offset view is read in place, never copied. Products of at least
//!   [`PARALLEL_MIN_WORK`] multiply-adds may split across rayon's pool.
//! - `f16`/`bf16` are converted to `f32`, multiplied there, and the result rounded once.
//! - Integers (wrapping on overflow) and `bool` (the logical (or, and) product, as NumPy) run an
//!   exact cache-blocked loop on contiguous copies.
//! - Under Miri (which cannot run SIMD intrinsics) every dtype runs the exact loop.
//!
//! Empty dims give zeros (`k == 0`: an `[m, n]` of zeros). The batch runs one product per
//! matrix: in parallel over the batch when each product is small, else one after another with
//! each product parallel inside faer's.

use faer::{Accum, MatMut, MatRef, Par};
use half::{bf16, f16};
use rayon::prelude::*;

use super::Tensor;
use crate::complex::{C128, C64};
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result, TesseraError};
use crate::kernels::scalar_math::Arith;
use crate::layout::{broadcast_shapes, Layout};
use crate::promote::result_type;
use crate::with_dtype;

/// Products with at least this many multiply-adds (`m * k * n`) hand faer rayon's pool when
/// parallel work is allowed ([`crate::kernels::parallel::enabled`]); smaller ones run on the
/// calling thread and never touch the pool. Past this bound faer applies its own threshold
/// per block, so small squares still run on one thread (measured figures:
/// docs/performance.md).
const PARALLEL_MIN_WORK: usize = 64 * 64 * 64;

/// Rows of `a` per parallel task (exact kernel).
const ROW_BLOCK: usize = 64;
/// Depth (shared dim) per block: a `DEPTH_BLOCK × COL_BLOCK` panel of `b` stays in cache.
const DEPTH_BLOCK: usize = 256;
/// Columns per block.
const COL_BLOCK: usize = 512;

impl Tensor {
    /// NumPy `matmul` of two tensors of rank 1 or more (shapes: [`MatmulShape`]).
    ///
    /// Errors: `InvalidArgument` for a 0-D operand, `ShapeMismatch` when the inner dims differ
    /// or the batch dims do not broadcast, `DType` when the dtypes have no common type.
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
        let s = MatmulShape::new(self.shape(), other.shape())?;
        let dt = result_type(self.dtype(), other.dtype())?;
        let (a, b) = s.operands(self, other)?;
        let out = with_dtype!(dt, T => T::product(&a, &b, &s))?;
        let dims: Vec<isize> = s.out_shape().iter().map(|&d| d as isize).collect();
        out.view_dense(&dims)
    }
}

/// The shapes of a NumPy `matmul`: the broadcast batch dims, `m`, `k`, `n`, and which operand
/// was 1-D (its added dim is not in the result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MatmulShape {
    /// The leading dims of the result (both operands' batch dims, broadcast).
    pub batch: Vec<usize>,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// The lhs was 1-D (a row), the rhs was 1-D (a column).
    pub a_vec: bool,
    pub b_vec: bool,
}

impl MatmulShape {
    /// The shapes of `a @ b`, or a typed error.
    pub fn new(a: &[usize], b: &[usize]) -> Result<MatmulShape> {
        if a.is_empty() || b.is_empty() {
            return Err(ErrorKind::InvalidArgument(format!(
                "matmul needs operands of rank 1 or more, got shapes {a:?} and {b:?}"
            ))
            .into());
        }
        let (a_vec, b_vec) = (a.len() == 1, b.len() == 1);
        let (m, k) = if a_vec {
            (1, a[0])
        } else {
            (a[a.len() - 2], a[a.len() - 1])
        };
        let (k2, n) = if b_vec {
            (b[0], 1)
        } else {
            (b[b.len() - 2], b[b.len() - 1])
        };
        if k != k2 {
            return Err(ErrorKind::ShapeMismatch(
                format!("matmul: inner dims differ in {a:?} @ {b:?} ({k} and {k2})").into(),
            )
            .into());
        }
        let lead = |s: &[usize]| s[..s.len().saturating_sub(2)].to_vec();
        let batch = broadcast_shapes(&lead(a), &lead(b)).map_err(|_| {
            ErrorKind::ShapeMismatch(
                format!("matmul: batch dims of {a:?} and {b:?} do not broadcast").into(),
            )
        })?;
        Ok(MatmulShape {
            batch,
            m,
            k,
            n,
            a_vec,
            b_vec,
        })
    }

    /// The result's shape: the batch dims, then `m` unless the lhs was 1-D and `n` unless the
    /// rhs was 1-D.
    pub fn out_shape(&self) -> Vec<usize> {
        let mut s = self.batch.clone();
        if !self.a_vec {
            s.push(self.m);
        }
        if !self.b_vec {
            s.push(self.n);
        }
        s
    }

    /// The operands as views `[batch.., m, k]` and `[batch.., k, n]` (1-D ones as a row or a
    /// column, batch dims broadcast with stride 0): no copy.
    pub fn operands(&self, a: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor)> {
        let full = |t: &Tensor, vec_axis: isize, rows: usize, cols: usize| -> Result<Tensor> {
            let t = if t.rank() == 1 {
                t.unsqueeze_dense(vec_axis)?
            } else {
                t.clone()
            };
            let mut dims = self.batch.clone();
            dims.extend([rows, cols]);
            t.broadcast_to_dense(&dims)
        };
        Ok((full(a, 0, self.m, self.k)?, full(b, 1, self.k, self.n)?))
    }

    /// Matrices in the batch.
    fn count(&self) -> usize {
        self.batch.iter().product()
    }
}

/// The product kernel of one result dtype: `a @ b` as a new contiguous `[batch.., m, n]`
/// tensor of `Self`'s dtype, for operands `[batch.., m, k]` and `[batch.., k, n]` of any
/// dtypes that promote to it ([`MatmulShape::operands`]).
trait Product: Element {
    fn product(a: &Tensor, b: &Tensor, s: &MatmulShape) -> Result<Tensor>;
}

macro_rules! exact_product {
    ($($t:ty),*) => {$(
        impl Product for $t {
            fn product(a: &Tensor, b: &Tensor, s: &MatmulShape) -> Result<Tensor> {
                exact::<$t>(a, b, s)
            }
        }
    )*};
}
exact_product!(bool, u8, i8, u16, i16, u32, i32, u64, i64);

macro_rules! via_f32_product {
    ($($t:ty),*) => {$(
        impl Product for $t {
            /// Accumulates in `f32` and rounds once (as the elementwise `f16` arithmetic).
            fn product(a: &Tensor, b: &Tensor, s: &MatmulShape) -> Result<Tensor> {
                let (a, b) = (a.astype_dense(DType::F32)?, b.astype_dense(DType::F32)?);
                f32::product(&a, &b, s)?.astype_dense(<$t>::DTYPE)
            }
        }
    )*};
}
via_f32_product!(f16, bf16);

/// The element types faer multiplies: `Self` is `F` itself or a `#[repr(transparent)]`
/// wrapper of it (`C64`, `C128` over `num_complex::Complex`), so a pointer to `Self` may be
/// read as a pointer to `F`. Implemented for exactly those four pairs.
trait FaerElement: Arith {
    type F: faer::traits::ComplexField + Copy;
    /// 1 as faer's element.
    fn one() -> Self::F;
}

macro_rules! faer_element {
    ($($t:ty => $f:ty, $one:expr);*) => {$(
        impl FaerElement for $t {
            type F = $f;
            fn one() -> $f {
                $one
            }
        }
    )*};
}
faer_element!(f32 => f32, 1.0; f64 => f64, 1.0;
    C64 => num_complex::Complex<f32>, num_complex::Complex::new(1.0, 0.0);
    C128 => num_complex::Complex<f64>, num_complex::Complex::new(1.0, 0.0));

macro_rules! faer_product {
    ($($t:ty),*) => {$(
        impl Product for $t {
            fn product(a: &Tensor, b: &Tensor, s: &MatmulShape) -> Result<Tensor> {
                // Miri cannot run faer's SIMD intrinsics: the exact loop stands in there.
                if cfg!(miri) {
                    return exact::<$t>(a, b, s);
                }
                strided_product::<$t>(&a.astype_if(<$t>::DTYPE)?, &b.astype_if(<$t>::DTYPE)?, s)
            }
        }
    )*};
}
faer_product!(f32, f64, C64, C128);

/// `a @ b` for operands of dtype `T` through faer's `matmul`, reading both operands in place
/// through their strides (batch dims included, broadcast ones with stride 0).
fn strided_product<T: FaerElement>(a: &Tensor, b: &Tensor, s: &MatmulShape) -> Result<Tensor> {
    // The dense gate first, so a sparse operand errors as every dense kernel does.
    let (sa, sb) = (a.dense_storage()?, b.dense_storage()?);
    let (m, k, n) = (s.m, s.k, s.n);
    let mut dims = s.batch.clone();
    dims.extend([m, n]);
    if k == 0 {
        return Tensor::zeros(&dims, T::DTYPE);
    }
    // Every product below overwrites its whole `m x n` block (faer's `Accum::Replace`, or
    // `small_product`'s fill), so the output needs no clearing: clearing a reused 16 MiB
    // buffer was a tenth of a 1024 x 64^3 batch.
    let out = Tensor::for_overwrite(&dims, T::DTYPE)?;
    if out.numel() == 0 {
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
    let (va, vb): (&[T], &[T]) = (&ga, gb.as_deref().unwrap_or(&ga));
    // Every matrix of each operand, checked to lie inside its storage.
    let lhs = matrices(va, a.layout(), s)?;
    let rhs = matrices(vb, b.layout(), s)?;
    // A fresh storage: no other guard on it can exist.
    let mut dst = out.dense_storage()?.write_as::<T>();
    debug_assert_eq!(dst.len(), s.count() * m * n);
    // `n <= m * n`, the length of an allocation: fits `isize`.
    let dst_rs = isize::try_from(n)
        .map_err(|_| TesseraError::from(ErrorKind::ShapeOverflow(format!("{n}"))))?;
    let work = m.saturating_mul(k).saturating_mul(n);
    let product = |c: &mut [T], (l, r): (&Strided<T>, &Strided<T>), par: Par| {
        // SAFETY: `T` is `T::F` or a `#[repr(transparent)]` wrapper of it (`FaerElement`), so
        // the pointer casts keep element size, alignment and validity. `l` and `r` point at
        // element (0, 0) of an `[m, k]` and a `[k, n]` matrix whose every element `(i, j)`
        // (at `ptr + i * rs + j * cs`) lies inside the slice of a read guard held until after
        // the call (`matrices` checked it with checked arithmetic, so no offset overflows
        // either); the guards exclude writers, so nothing changes the operands meanwhile, and
        // reads from several threads are fine. `c` is an `m * n` slice of a new storage under
        // its write guard (each call gets its own chunk), row-major (row stride `n`, column
        // stride 1), disjoint from both operands, and borrowed mutably for the view's life.
        let (lm, rm, cm) = unsafe {
            (
                MatRef::<T::F>::from_raw_parts(l.ptr.cast(), m, k, l.rs, l.cs),
                MatRef::<T::F>::from_raw_parts(r.ptr.cast(), k, n, r.rs, r.cs),
                MatMut::<T::F>::from_raw_parts_mut(c.as_mut_ptr().cast(), m, n, dst_rs, 1),
            )
        };
        // `Replace` overwrites `c` with `1 * l @ r` without reading it.
        let parts = match par {
            Par::Seq => 1,
            Par::Rayon(t) => t.get(),
        };
        split_product(cm, lm, rm, T::one(), parts);
    };
    let pairs = lhs.iter().zip(rhs.iter());
    let product = |c: &mut [T], (l, r): (&Strided<T>, &Strided<T>), par: Par| {
        if work <= SMALL_WORK {
            small_product(c, l, r, [m, k, n]);
        } else {
            product(c, (l, r), par);
        }
    };
    // A batch of products each under BATCH_TASK_MAX_WORK, at least one per thread: one
    // product per task (splitting each small product across threads costs more than it
    // gains); otherwise one after another, each split across the pool.
    let per_task = work < PARALLEL_MIN_WORK
        || (lhs.len() >= crate::kernels::parallel::num_threads() && work < BATCH_TASK_MAX_WORK);
    if lhs.len() > 1
        && per_task
        && matches!(parallelism(work.saturating_mul(lhs.len())), Par::Rayon(_))
    {
        dst.par_chunks_mut(m * n)
            .zip(pairs.collect::<Vec<_>>())
            .for_each(|(c, p)| product(c, p, Par::Seq));
    } else {
        for (c, p) in dst.chunks_mut(m * n).zip(pairs) {
            product(c, p, parallelism(work));
        }
    }
    drop(dst);
    Ok(out)
}

/// Products of a batch with fewer multiply-adds than this run one per rayon task when the
/// batch has at least one per thread (docs/performance.md: 1024 products of 64³ took 2.1x
/// longer on 2 threads split inside each product than on 1).
const BATCH_TASK_MAX_WORK: usize = 256 * 256 * 256;

/// `c = l @ r` on faer, split across `par`'s threads by blocks of `c`: the larger of its
/// dims is cut in one part per thread and the parts run as rayon tasks, each a sequential
/// product (faer's own split of one product scaled 1.5x on 2 threads here, the block split
/// 1.9x; docs/performance.md).
fn split_product<F: faer::traits::ComplexField + Copy>(
    c: MatMut<'_, F>,
    l: MatRef<'_, F>,
    r: MatRef<'_, F>,
    one: F,
    parts: usize,
) {
    let (m, n) = (c.nrows(), c.ncols());
    if parts <= 1 || m.max(n) < 2 * 64 {
        faer::linalg::matmul::matmul(c, Accum::Replace, l, r, one, Par::Seq);
        return;
    }
    let first = parts / 2;
    if n >= m {
        let j = n * first / parts;
        let (c1, c2) = c.split_at_col_mut(j);
        let (r1, r2) = r.split_at_col(j);
        rayon::join(
            || split_product(c1, l, r1, one, first),
            || split_product(c2, l, r2, one, parts - first),
        );
    } else {
        let i = m * first / parts;
        let (c1, c2) = c.split_at_row_mut(i);
        let (l1, l2) = l.split_at_row(i);
        rayon::join(
            || split_product(c1, l1, r, one, first),
            || split_product(c2, l2, r, one, parts - first),
        );
    }
}

/// Products of at most this many multiply-adds skip faer (whose packing and dispatch cost
/// more than the arithmetic of an 8 x 8 product) for [`small_product`].
const SMALL_WORK: usize = 16 * 16 * 16;

/// `c = l @ r` for a small `[m, k] @ [k, n]`: row `i` of `c` accumulates `l[i, p] * r[p, ..]`
/// over `p` (a contiguous row of `r` is read as a slice, so the inner loop vectorises).
fn small_product<T: Arith>(c: &mut [T], l: &Strided<T>, r: &Strided<T>, [m, k, n]: [usize; 3]) {
    c.fill(T::from_f64(0.0));
    for (i, row) in c.chunks_mut(n).enumerate().take(m) {
        for p in 0..k {
            let x = l.slice[l.index(i, p)];
            if r.cs == 1 {
                let at = r.index(p, 0);
                for (o, &y) in row.iter_mut().zip(&r.slice[at..at + n]) {
                    *o = o.add(x.mul(y));
                }
            } else {
                for (j, o) in row.iter_mut().enumerate() {
                    *o = o.add(x.mul(r.slice[r.index(p, j)]));
                }
            }
        }
    }
}

/// Each `[r, c]` matrix of an operand `[batch.., r, c]` over storage slice `v`, in batch order
/// (row-major), every one checked to lie inside `v`.
fn matrices<'a, T: Copy>(
    v: &'a [T],
    layout: &Layout,
    s: &MatmulShape,
) -> Result<Vec<Strided<'a, T>>> {
    let (dims, strides) = (layout.dims(), layout.strides());
    let nb = s.batch.len();
    let (mat, mat_strides) = ([dims[nb], dims[nb + 1]], [strides[nb], strides[nb + 1]]);
    let overflow =
        || TesseraError::from(ErrorKind::ShapeOverflow(format!("matmul operand {dims:?}")));
    // At most one per element of the output, which exists already.
    let mut out = crate::storage::try_with_capacity(s.count())?;
    let mut idx = vec![0usize; nb];
    for _ in 0..s.count() {
        let mut off = isize::try_from(layout.offset()).map_err(|_| overflow())?;
        for (&i, &st) in idx.iter().zip(strides) {
            let step = isize::try_from(i).ok().and_then(|i| i.checked_mul(st));
            off = step.and_then(|d| off.checked_add(d)).ok_or_else(overflow)?;
        }
        let off = usize::try_from(off).map_err(|_| overflow())?;
        out.push(Strided::at(v, off, mat, mat_strides)?);
        // The next batch index (row-major odometer).
        for d in (0..nb).rev() {
            idx[d] += 1;
            if idx[d] < s.batch[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(out)
}

/// faer's threading for a product of `work` multiply-adds: rayon's current pool (all its
/// threads) when kernels may use it and the product is large enough, else the calling thread.
fn parallelism(work: usize) -> Par {
    // Size first, as the other kernels: a small product never touches rayon's pool (nor
    // starts it), and `Parallelism::None` does not use it.
    if work >= PARALLEL_MIN_WORK && crate::kernels::parallel::enabled() {
        Par::rayon(crate::kernels::parallel::num_threads())
    } else {
        Par::Seq
    }
}

/// A 2-D operand as faer reads it: a pointer to element (0, 0) and signed row and column
/// strides in elements, valid while the borrowed slice (a storage guard's) lives; also the
/// slice and offset, for the small-product loop's checked reads.
struct Strided<'a, T> {
    ptr: *const T,
    rs: isize,
    cs: isize,
    slice: &'a [T],
    offset: usize,
}

impl<'a, T: Copy> Strided<'a, T> {
    /// The matrix with `dims` (no zero dim) and `strides` from element `offset` of storage
    /// slice `s`; errors unless every element it reaches lies in `s`.
    fn at(s: &'a [T], offset: usize, dims: [usize; 2], strides: [isize; 2]) -> Result<Self> {
        check_reach(s.len(), offset, dims, strides)?;
        Ok(Strided {
            // In bounds: `check_reach` showed `offset < s.len()`. `wrapping_add` keeps the
            // slice's provenance, which negative strides need (they reach below the offset).
            ptr: s.as_ptr().wrapping_add(offset),
            rs: strides[0],
            cs: strides[1],
            slice: s,
            offset,
        })
    }

    /// The storage index of element `(i, j)` (inside the slice for every element of the
    /// matrix, as `at` checked, so the arithmetic cannot wrap).
    #[inline(always)]
    fn index(&self, i: usize, j: usize) -> usize {
        (self.offset as isize + i as isize * self.rs + j as isize * self.cs) as usize
    }
}

// SAFETY: a `Strided` is a read-only view into a slice borrowed for `'a` (the `PhantomData`
// ties it to the borrow); sharing or sending it is sharing `&'a [T]`, which is `Sync` for the
// `T: Sync` elements here.
unsafe impl<T: Sync> Sync for Strided<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Send for Strided<'_, T> {}

/// Errors unless every element `offset + i * strides[0] + j * strides[1]`
/// (`i < dims[0]`, `j < dims[1]`, both dims non-zero) lies in `0..len`, computed with checked
/// arithmetic (an overflow is an error too). A layout that passed its own bounds check always
/// passes; this is the local proof the faer call relies on.
fn check_reach(len: usize, offset: usize, dims: [usize; 2], strides: [isize; 2]) -> Result<()> {
    let out_of_range = || {
        ErrorKind::OutOfBounds(format!(
            "matmul operand with dims {dims:?}, strides {strides:?} and offset {offset} reaches \
             outside its storage of {len} elements"
        ))
        .into()
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

/// The exact product: operands cast to `T` and made contiguous (broadcast batch dims
/// materialised), then [`blocked`] on each matrix.
fn exact<T: Arith>(a: &Tensor, b: &Tensor, s: &MatmulShape) -> Result<Tensor> {
    let (m, k, n) = (s.m, s.k, s.n);
    let a = cast_contiguous(a, T::DTYPE)?;
    let b = cast_contiguous(b, T::DTYPE)?;
    let mut dims = s.batch.clone();
    dims.extend([m, n]);
    let out = Tensor::zeros(&dims, T::DTYPE)?;
    // Both operands are contiguous: read them in place (one guard when they share a storage,
    // as in `a.matmul(&a)`; a second read lock could wait behind a writer).
    let ga = a.dense_storage()?.read_as::<T>();
    let gb = if a.shares_storage(&b) {
        None
    } else {
        Some(b.dense_storage()?.read_as::<T>())
    };
    let (oa, ob) = (a.layout().offset(), b.layout().offset());
    let count = s.count();
    // `get` rather than indexing: an empty operand may carry any offset.
    let av = ga.get(oa..oa + count * m * k).unwrap_or(&[]);
    let bv = gb
        .as_deref()
        .unwrap_or(&ga)
        .get(ob..ob + count * k * n)
        .unwrap_or(&[]);
    let mut cv = out.dense_storage()?.write_as::<T>();
    if m * n > 0 {
        for (i, c) in cv.chunks_mut(m * n).enumerate() {
            let ai = av.get(i * m * k..(i + 1) * m * k).unwrap_or(&[]);
            let bi = bv.get(i * k * n..(i + 1) * k * n).unwrap_or(&[]);
            blocked::<T>(ai, bi, c, m, k, n);
        }
    }
    drop(cv);
    Ok(out)
}

/// `t` in dtype `dt`, row-major (the exact loop reads it flat).
fn cast_contiguous(t: &Tensor, dt: DType) -> Result<Tensor> {
    if t.dtype() == dt {
        t.contiguous_dense()
    } else {
        t.astype_contiguous(dt)
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
        assert!(matches!(e.kind(), ErrorKind::OutOfBounds(_)), "{e}");
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
        let s = MatmulShape::new(&[3, 4], &[4, 5]).unwrap();
        let want = exact::<f64>(&fa, &tb, &s).unwrap();
        assert_eq!(got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
        // A batch: a [2, 3, 4] stack (the second matrix flipped) against the broadcast rhs.
        let stack = Tensor::from_vec((0..24).map(f64::from).collect(), &[2, 3, 4]).unwrap();
        let stack = stack.flip_dense(Some(&[0])).unwrap();
        let s = MatmulShape::new(&[2, 3, 4], &[4, 5]).unwrap();
        let (l, r) = s.operands(&stack, &tb).unwrap();
        let got = stack.matmul_dense(&tb).unwrap();
        assert_eq!(got.shape(), &[2, 3, 5]);
        let want = exact::<f64>(&l, &r, &s).unwrap();
        assert_eq!(got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
        // The same storage on both sides takes one guard.
        let aat = a.matmul_dense(&a.t_dense().unwrap()).unwrap();
        assert_eq!(aat.to_vec::<f64>().unwrap()[..3], [14.0, 38.0, 62.0]);
    }
}
