//! The routing of `exp`, `expm1`, `log`, `sin`, `cos` and `tanh` on `f32`/`f64` tensors to the
//! vectorised functions of [`kernels::vmath`](crate::kernels::vmath) (docs/design.md P2).
//!
//! Both the contiguous and the strided paths apply the same function to every element, so
//! a result does not depend on the layout. `sin` and `cos` reduce their argument correctly
//! up to [`TRIG_LIMIT`]; a tensor holding a larger magnitude (or an infinity) is computed by
//! the C library's functions instead (`f32` through `f64`, rounded once), found by one
//! read-only pass first.

use super::map::map_into;
use super::reduce::resolve_axes;
use super::Tensor;
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::reduce::Reducer;
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

/// `out = f(src)` elementwise when both are `f32` or both `f64` (same shape, `out` fresh);
/// `Ok(false)`, with nothing written, for other dtypes.
pub(crate) fn vector_math_into(f: VecFn, src: &Tensor, out: &Tensor) -> Result<bool> {
    macro_rules! run {
        ($t:ident) => {{
            use vmath::$t as m;
            let big = matches!(f, VecFn::Sin | VecFn::Cos) && any_above::<$t>(src, TRIG_LIMIT)?;
            match f {
                VecFn::Exp => map_into::<$t, $t>(out, src, |_, x| m::exp(x))?,
                VecFn::Expm1 => map_into::<$t, $t>(out, src, |_, x| m::expm1(x))?,
                VecFn::Log => map_into::<$t, $t>(out, src, |_, x| m::log(x))?,
                VecFn::Tanh => map_into::<$t, $t>(out, src, |_, x| m::tanh(x))?,
                VecFn::Sin if big => map_into::<$t, $t>(out, src, |_, x| (x as f64).sin() as $t)?,
                VecFn::Cos if big => map_into::<$t, $t>(out, src, |_, x| (x as f64).cos() as $t)?,
                VecFn::Sin => map_into::<$t, $t>(out, src, |_, x| m::sin(x))?,
                VecFn::Cos => map_into::<$t, $t>(out, src, |_, x| m::cos(x))?,
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
