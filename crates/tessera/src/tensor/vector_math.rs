//! The routing of `exp`, `expm1`, `log`, `sin`, `cos` and `tanh` on `f32`/`f64` tensors to the
//! vectorised functions of [`kernels::vmath`](crate::kernels::vmath) (docs/design.md P2).
//!
//! Both the contiguous and the strided paths apply the same function to every element, so
//! a result does not depend on the layout. `sin` and `cos` reduce their argument correctly
//! up to [`TRIG_LIMIT`]; a tensor holding a larger magnitude (or an infinity) is computed by
//! the C library's functions instead (`f32` through `f64`, rounded once), found by one
//! read-only pass first.
//!
//! When the input and the fresh output are laid out alike (a contiguous input, or a permuted
//! one whose output follows its order, docs/design.md P6), the function runs as one flat
//! loop per piece of the two buffers, with the function inlined into the loop's AVX2 copy
//! (`flat_loop!`); other layouts (strided, broadcast, flipped) go through the generic driver.

use super::flat::fill_flat;
use super::map::{map_into, map_new};
use super::reduce::resolve_axes;
use super::Tensor;
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::elementwise::PAR_MIN_COSTLY;
use crate::kernels::flat::drive_flat;
use crate::kernels::reduce::Reducer;
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::has_avx2;
use crate::kernels::vmath::{self, TRIG_LIMIT};

/// A function with a vectorised implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VecFn {
    Exp,
    Expm1,
    Log,
    Sin,
    Cos,
    Tanh,
}

/// Whether some element's magnitude exceeds a limit (NaN does not).
struct AnyAbove(f64);

macro_rules! any_above {
    ($($t:ty),*) => {$(
        impl Reducer<$t> for AnyAbove {
            type Acc = bool;
            fn identity(&self) -> bool {
                false
            }
            fn combine(&self, a: bool, b: bool) -> bool {
                a | b
            }
            fn lift(&self, x: $t) -> bool {
                x.abs() as f64 > self.0
            }
        }
    )*};
}
any_above!(f32, f64);

/// Whether `t` (of element type `T`) holds an element of magnitude above `limit`.
fn any_above<T: Element>(t: &Tensor, limit: f64) -> Result<bool>
where
    AnyAbove: Reducer<T, Acc = bool>,
{
    let all = resolve_axes(t.shape(), None, false)?;
    Ok(t.reduce_with::<T, _>(&all, &AnyAbove(limit))?[0])
}

/// The flat loop of one vectorised function over one float type, `out[i] = f(a[i])`, with
/// the function called directly: it is `#[inline(always)]`, so it is inlined into the AVX2
/// copy of the loop whatever its size. The generic elementwise driver takes it as a closure
/// called from several loops, and LLVM kept a large one (`tanh` on `f64`) out of line,
/// compiled for SSE2 and called once per element: three times slower.
macro_rules! flat_loop {
    ($t:ident, $f:ident) => {
        flat_loop!($t, path vmath::$t::$f)
    };
    ($t:ident, path $f:path) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn wide(out: &mut [$t], a: &[$t]) {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = $f(x);
            }
        }
        fn base(out: &mut [$t], a: &[$t]) {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = $f(x);
            }
        }
        |out: &mut [$t], a: &[$t]| {
            #[cfg(target_arch = "x86_64")]
            if has_avx2() {
                // SAFETY: `wide` only needs AVX2 and FMA, which `has_avx2` has just confirmed.
                return unsafe { wide(out, a) };
            }
            base(out, a)
        }
    }};
}

/// The flat loop (`flat_loop!`) of `$f` for element type `$t`, as a `&dyn Fn`.
macro_rules! vec_loop {
    ($t:ident, $f:expr) => {{
        let run: &(dyn Fn(&mut [$t], &[$t]) + Sync) = match $f {
            VecFn::Exp => &flat_loop!($t, exp),
            VecFn::Expm1 => &flat_loop!($t, expm1),
            VecFn::Log => &flat_loop!($t, log),
            VecFn::Tanh => &flat_loop!($t, tanh),
            VecFn::Sin => &flat_loop!($t, sin),
            VecFn::Cos => &flat_loop!($t, cos),
        };
        run
    }};
}

/// Whether a slice holds a magnitude above [`TRIG_LIMIT`] (or an infinity), which `sin` and
/// `cos` send to the C library.
fn holds_huge<T: Element>(a: &[T]) -> bool
where
    AnyAbove: Reducer<T, Acc = bool>,
{
    let above = AnyAbove(TRIG_LIMIT);
    a.iter().any(|&x| above.lift(x))
}

/// `f(src)` into a fresh tensor in `src`'s memory order for an `f32`/`f64` tensor: the flat
/// loop straight into a buffer nobody shares when `src` is one small run ([`fill_flat`]),
/// else [`vector_math_into`]. `None` for other dtypes (the caller's generic loop).
pub(crate) fn vector_math(f: VecFn, src: &Tensor) -> Result<Option<Tensor>> {
    macro_rules! flat {
        ($t:ident) => {{
            let (trig, run) = (matches!(f, VecFn::Sin | VecFn::Cos), vec_loop!($t, f));
            fill_flat::<$t, $t>(src, |o, a| {
                if trig && holds_huge(a) {
                    return false;
                }
                drive_flat(o, a, run);
                true
            })?
        }};
    }
    let flat = match src.dtype() {
        DType::F32 => flat!(f32),
        DType::F64 => flat!(f64),
        _ => return Ok(None),
    };
    if flat.is_some() {
        return Ok(flat);
    }
    let out = Tensor::for_overwrite_in_order(src.layout(), src.dtype())?;
    Ok(vector_math_into(f, src, &out)?.then_some(out))
}

/// The `f32` functions computed with the `f64` ones (`vmath::f32_via_f64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ViaF64 {
    Sinh,
    Cosh,
    Log2,
    Log10,
}

/// `f(src)` for an `f32` tensor, in `src`'s memory order. One small flat run goes through a
/// loop with the function inlined into its AVX2 copy (`flat_loop!`: called from the generic
/// element-wise loop, `sinh`, `log2` and `log10` stayed out of line, at about 90
/// instructions per element); other inputs take the generic loop (`map_new`).
pub(crate) fn via_f64(f: ViaF64, src: &Tensor) -> Result<Tensor> {
    use vmath::f32_via_f64 as w;
    macro_rules! run {
        ($g:path) => {{
            let run = flat_loop!(f32, path $g);
            let flat = fill_flat::<f32, f32>(src, |o, a| {
                drive_flat(o, a, &run);
                true
            })?;
            match flat {
                Some(out) => Ok(out),
                None => map_new::<f32, f32>(src, $g),
            }
        }};
    }
    match f {
        ViaF64::Sinh => run!(w::sinh),
        ViaF64::Cosh => run!(w::cosh),
        ViaF64::Log2 => run!(w::log2),
        ViaF64::Log10 => run!(w::log10),
    }
}

/// Where `src`'s elements start in its storage when they and `out`'s can be walked as two
/// flat slices in one order: `out` is fresh at offset 0 over exactly its elements (so a dense
/// block, from [`Tensor::for_overwrite_in_order`]) and `src` has the same strides on every
/// dim longer than 1 (so it is the same block at its own offset).
fn flat_offset(src: &Tensor, out: &Tensor, out_len: usize) -> Option<usize> {
    let fresh = out.layout().offset() == 0 && out_len == out.numel();
    let block = out.is_contiguous() || out.layout().is_dense_block();
    (fresh && block && src.layout().walks_like(out.layout())).then(|| src.layout().offset())
}

/// `out = f(src)` elementwise when both are `f32` or both `f64` (same shape, `out` fresh from
/// [`Tensor::for_overwrite_in_order`]); `Ok(false)`, with nothing written, for other dtypes.
fn vector_math_into(f: VecFn, src: &Tensor, out: &Tensor) -> Result<bool> {
    macro_rules! run {
        ($t:ident) => {{
            use vmath::$t as m;
            let trig = matches!(f, VecFn::Sin | VecFn::Cos);
            let n = src.numel();
            // Whether a trig argument is huge: found up front for a large source (a parallel
            // reduction); for a small one in the slice the flat loop reads (the reduction
            // machinery cost more than a 16-element `sin`), or by the reduction when the flat
            // loop does not apply.
            let mut big = match (trig, n >= PAR_MIN_COSTLY) {
                (false, _) => Some(false),
                (true, true) => Some(any_above::<$t>(src, TRIG_LIMIT)?),
                (true, false) => None,
            };
            let run = vec_loop!($t, f);
            let mut done = false;
            if big != Some(true) {
                let mut o = out.dense_storage()?.write_as::<$t>();
                let a = src.dense_storage()?.read_as::<$t>();
                let at = flat_offset(src, out, o.len());
                if let (Some(o), Some(a)) =
                    (o.get_mut(..n), at.and_then(|at| a.get(at..)?.get(..n)))
                {
                    let huge = *big.get_or_insert_with(|| holds_huge(a));
                    if !huge {
                        drive_flat(o, a, run);
                        done = true;
                    }
                }
            }
            let big = match big {
                Some(b) => b,
                None => any_above::<$t>(src, TRIG_LIMIT)?,
            };
            if !done {
                match f {
                    VecFn::Exp => map_into::<$t, $t>(out, src, |_, x| m::exp(x))?,
                    VecFn::Expm1 => map_into::<$t, $t>(out, src, |_, x| m::expm1(x))?,
                    VecFn::Log => map_into::<$t, $t>(out, src, |_, x| m::log(x))?,
                    VecFn::Tanh => map_into::<$t, $t>(out, src, |_, x| m::tanh(x))?,
                    VecFn::Sin if big => {
                        map_into::<$t, $t>(out, src, |_, x| (x as f64).sin() as $t)?
                    }
                    VecFn::Cos if big => {
                        map_into::<$t, $t>(out, src, |_, x| (x as f64).cos() as $t)?
                    }
                    VecFn::Sin => map_into::<$t, $t>(out, src, |_, x| m::sin(x))?,
                    VecFn::Cos => map_into::<$t, $t>(out, src, |_, x| m::cos(x))?,
                }
            }
        }};
    }
    match (src.dtype(), out.dtype()) {
        (DType::F32, DType::F32) => run!(f32),
        (DType::F64, DType::F64) => run!(f64),
        _ => return Ok(false),
    }
    Ok(true)
}
