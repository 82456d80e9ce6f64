//! `argmax` and `argmin` along one axis or over the flattened tensor: the index of the first
//! extreme element, or of the first NaN when there is one (NumPy's rule: NaN is the extreme
//! value both ways). An empty lane has no extreme: an error, as in NumPy.
//!
//! Three loops, none of which copies a tensor that is contiguous in some order:
//! - the axis is constant (stride 0) or of length 1: every index is 0;
//! - lanes contiguous in memory (the axis innermost): `f32`, `f64` and `i64` lanes in one
//!   AVX-512 pass where the CPU has it (`argext.rs`); the others scanned in blocks, a
//!   block's extreme found in vector lanes and only a block that beats the best so far
//!   searched for its position (float lanes in AVX-512 where the CPU has it);
//! - the axis outer to contiguous rows (`t.argmax(axis=0)` of a C-contiguous matrix): the
//!   rows are folded into a row of best values and their indices, elementwise (vertical,
//!   as the outer-axis reductions of docs/design.md P5).
//!
//! Other layouts are made C-contiguous first; dims the input broadcasts (stride 0) are
//! reduced once and the result repeated.

use super::lanes::{fill, read, Lanes};
use super::sort::{for_lanes_from, is_nan};
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result};
use crate::kernels::elementwise::PAR_MIN;
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::{has_avx2, has_avx512};
use crate::layout::normalize_axis;
use crate::tensor::Tensor;
use crate::with_dtype;

/// Elements per block of the lane scan.
const SCAN_BLOCK: usize = 256;
/// Independent lanes of a block's extreme: one AVX-512 register of `f32`, two of `f64`.
/// With 32 lanes, or with the lanes folded pairwise at the end, LLVM scalarised the loops
/// (2x slower, measured).
const LANES: usize = 16;

/// Whether `x` is beyond `best`: greater (`MAX`) or smaller.
#[inline(always)]
fn beyond<T: PartialOrd, const MAX: bool>(x: T, best: T) -> bool {
    if MAX {
        x > best
    } else {
        x < best
    }
}

/// The largest (`MAX`) or smallest element of a non-empty block, and whether the block
/// holds a NaN, folded in [`LANES`] lanes of `T`: a lane takes an element beyond it or a NaN,
/// and keeps a NaN once it has one (one compare-and-blend per vector, which the compiler
/// vectorises in the element's width).
#[inline(always)]
fn block_extreme<T: Element, const MAX: bool>(xs: &[T]) -> (T, bool) {
    let mut r = [xs[0]; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        let c: &[T; LANES] = c.try_into().expect("chunks_exact");
        for j in 0..LANES {
            let x = c[j];
            r[j] = if beyond::<T, MAX>(x, r[j]) || is_nan(&x) {
                x
            } else {
                r[j]
            };
        }
    }
    let mut m = r[0];
    let mut any = false;
    for &x in r.iter().chain(chunks.remainder()) {
        m = if beyond::<T, MAX>(x, m) { x } else { m };
        any |= is_nan(&x);
    }
    (m, any)
}

/// The index of the first element of `xs` that `hit` accepts (0 if none), tested
/// [`LANES`] at a time: a group's hits are gathered into a bit mask (a vector compare and
/// a mask move), and the first set bit is the position.
#[inline(always)]
fn first<T: Copy>(xs: &[T], hit: impl Fn(T) -> bool + Copy) -> usize {
    let mut groups = xs.chunks_exact(LANES);
    for (k, group) in (&mut groups).enumerate() {
        let group: &[T; LANES] = group.try_into().expect("chunks_exact");
        let mut mask = 0u32;
        for (j, &x) in group.iter().enumerate() {
            mask |= (hit(x) as u32) << j;
        }
        if mask != 0 {
            return k * LANES + mask.trailing_zeros() as usize;
        }
    }
    let rest = xs.len() - groups.remainder().len();
    rest + groups.remainder().iter().position(|&x| hit(x)).unwrap_or(0)
}

/// The index of the first maximum (`MAX`) or minimum of a non-empty lane; the first NaN
/// wins. Blocks whose extreme does not beat the best so far are not searched. Inlined into
/// its caller's `with_simd` copy (a function of its own would be built for the baseline).
#[inline(always)]
fn arg_extreme_lane<T: Element, const MAX: bool>(v: &[T]) -> i64 {
    let (mut best, mut at) = (v[0], 0usize);
    for (k, block) in v.chunks(SCAN_BLOCK).enumerate() {
        let (m, nan) = block_extreme::<T, MAX>(block);
        let start = k * SCAN_BLOCK;
        if nan {
            return (start + first(block, |x| is_nan(&x))) as i64;
        }
        if beyond::<T, MAX>(m, best) {
            best = m;
            // The first element equal to the block's extreme (either zero for a zero).
            at = start + first(block, |x| x == m);
        }
    }
    at as i64
}

/// The lane search in the widest copy that pays: `f32`/`f64`/`i64` lanes take the one-pass
/// AVX-512 kernel (`argext.rs`); other float lanes run [`arg_extreme_lane`] 512 bits wide
/// where the CPU has AVX-512 (their AVX2 code shuffles, 2-4x slower, measured); other
/// integer lanes were faster in AVX2.
#[inline(always)]
fn lane_widest<T: Element, const MAX: bool>(v: &[T]) -> i64 {
    /// The lane scan compiled with AVX-512 (the scan is inlined here whatever its size; a
    /// closure passed to a feature-enabling wrapper was left out of line, at the baseline).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    fn widest<T: Element, const MAX: bool>(v: &[T]) -> i64 {
        arg_extreme_lane::<T, MAX>(v)
    }
    // f32, f64 and i64 lanes: one pass in AVX-512 registers, indices carried in lanes.
    if let Some(at) = super::argext::lane_avx512::<T, MAX>(v) {
        return at;
    }
    #[cfg(target_arch = "x86_64")]
    if T::DTYPE.is_float() && has_avx512() {
        // SAFETY: `widest` only needs the features `has_avx512` has just confirmed.
        return unsafe { widest::<T, MAX>(v) };
    }
    /// The lane scan compiled with AVX2 (inlined by force, as `widest`: the `with_simd`
    /// closure that stood here was left out of line, at the baseline; `scripts/check-simd`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn wide<T: Element, const MAX: bool>(v: &[T]) -> i64 {
        arg_extreme_lane::<T, MAX>(v)
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `wide` only needs the features `has_avx2` has just confirmed.
        return unsafe { wide::<T, MAX>(v) };
    }
    arg_extreme_lane::<T, MAX>(v)
}

/// The first extreme of each column of `len` rows of `inner` elements (`data` row-major,
/// `len >= 1`), into `out` (`inner` indices): every row updates a row of best values and
/// their indices elementwise. A NaN replaces a best that is not NaN; nothing replaces a NaN.
#[inline(always)]
fn arg_extreme_rows<T: Element, const MAX: bool>(data: &[T], inner: usize, out: &mut [i64]) {
    let mut best = data[..inner].to_vec();
    out.fill(0);
    for (i, row) in data.chunks_exact(inner).enumerate().skip(1) {
        for ((b, o), &x) in best.iter_mut().zip(out.iter_mut()).zip(row) {
            let take = beyond::<T, MAX>(x, *b) || (is_nan(&x) && !is_nan(b));
            *b = if take { x } else { *b };
            *o = if take { i as i64 } else { *o };
        }
    }
}

/// [`arg_extreme_rows`] in the widest copy: AVX-512 where the CPU has it, else AVX2. Its
/// updates store back what they loaded where a row loses, which AVX2 code makes masked
/// stores (`vmaskmovps`, microcoded on AMD: `argmax(axis=0)` of 256 x 256 `f32` at 1.8
/// NumPy's time); AVX-512's masked stores are plain ones.
#[inline(always)]
fn rows_widest<T: Element, const MAX: bool>(data: &[T], inner: usize, out: &mut [i64]) {
    /// The row updates compiled with AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    fn wide<T: Element, const MAX: bool>(data: &[T], inner: usize, out: &mut [i64]) {
        arg_extreme_rows::<T, MAX>(data, inner, out)
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: `wide` only needs the features `has_avx512` has just confirmed.
        return unsafe { wide::<T, MAX>(data, inner, out) };
    }
    /// The row updates compiled with AVX2 (inlined by force: the `with_simd` closure that
    /// stood here was left out of line, at the baseline; `scripts/check-simd`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn avx2<T: Element, const MAX: bool>(data: &[T], inner: usize, out: &mut [i64]) {
        arg_extreme_rows::<T, MAX>(data, inner, out)
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `avx2` only needs the features `has_avx2` has just confirmed.
        return unsafe { avx2::<T, MAX>(data, inner, out) };
    }
    arg_extreme_rows::<T, MAX>(data, inner, out)
}

impl Tensor {
    /// The dense kernel of [`Tensor::argmax`] (`max`) and [`Tensor::argmin`].
    pub(crate) fn arg_extreme_dense(
        &self,
        axis: Option<isize>,
        keepdims: bool,
        max: bool,
    ) -> Result<Tensor> {
        let name = if max { "argmax" } else { "argmin" };
        let flattened = axis.is_none();
        let (src, axis) = match axis {
            Some(a) => (self.clone(), normalize_axis(a, self.rank())?),
            None => (self.reshape_dense(&[-1])?, 0),
        };
        if src.shape()[axis] == 0 {
            return Err(ErrorKind::InvalidArgument(format!(
                "{name} of an empty sequence (axis of length 0)"
            ))
            .into());
        }
        let out = if max {
            arg_extreme_kept::<true>(&src, axis)?
        } else {
            arg_extreme_kept::<false>(&src, axis)?
        };
        let mut dims: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
        match (flattened, keepdims) {
            (true, true) => dims.iter_mut().for_each(|d| *d = 1),
            (true, false) => dims.clear(),
            (false, true) => dims[axis] = 1,
            (false, false) => {
                dims.remove(axis);
            }
        }
        out.reshape_dense(&dims)
    }
}

/// The first-extreme indices of `x` along `axis` (non-empty), with `axis` kept at size 1.
fn arg_extreme_kept<const MAX: bool>(x: &Tensor, axis: usize) -> Result<Tensor> {
    let strides = x.layout().strides();
    let mut kept: Vec<usize> = x.shape().to_vec();
    kept[axis] = 1;
    // A constant axis, or no lanes at all (another dim of size 0).
    if strides[axis] == 0 || x.shape()[axis] == 1 || x.numel() == 0 {
        return Tensor::zeros(&kept, DType::I64);
    }
    // A broadcast dim: the same lanes repeat along it; reduce one copy, repeat the result.
    if let Some(d) = (0..x.rank()).find(|&d| d != axis && strides[d] == 0 && x.shape()[d] > 1) {
        let once = arg_extreme_kept::<MAX>(&x.narrow_dense(d as isize, 0, 1)?, axis)?;
        return once.broadcast_to_dense(&kept)?.contiguous_dense();
    }
    let mut perm: Vec<isize> = (0..x.rank() as isize)
        .filter(|&d| d != axis as isize)
        .collect();
    perm.push(axis as isize);
    if x.permute_dense(&perm)?.is_contiguous() {
        return arg_extreme_lanes::<MAX>(x, axis);
    }
    let c = x.contiguous_dense()?;
    let inner: usize = c.shape()[axis + 1..].iter().product();
    if inner == 1 {
        return arg_extreme_lanes::<MAX>(&c, axis);
    }
    let len = c.shape()[axis];
    with_dtype!(c.dtype(), T => {
        read::<T, _>(&c, |s| {
            fill::<i64>(&kept, |dst| {
                for (block, o) in s.chunks_exact(len * inner).zip(dst.chunks_exact_mut(inner)) {
                    rows_widest::<T, MAX>(block, inner, o);
                }
                Ok(())
            })
        })?
    })
}

/// [`arg_extreme_kept`] of a tensor whose lanes along `axis` are contiguous (after
/// [`Lanes::new`], which then copies nothing).
fn arg_extreme_lanes<const MAX: bool>(x: &Tensor, axis: usize) -> Result<Tensor> {
    let l = Lanes::new(x, axis as isize)?;
    let n = l.len;
    let out = with_dtype!(x.dtype(), T => {
        read::<T, _>(&l.data, |s| {
            fill::<i64>(&l.dims_with(1), |dst| {
                // One comparison an element: the reductions' cut-over, not the sorts'.
                for_lanes_from(PAR_MIN, s, n, dst, 1, |v, d, _| {
                    d[0] = lane_widest::<T, MAX>(v);
                    Ok(())
                })
            })
        })??
    });
    l.restore(out)
}
