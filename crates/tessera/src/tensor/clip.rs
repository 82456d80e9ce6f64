//! `clip` with 0-d bounds of the input's dtype (what `ts.clip(x, -1, 1)` passes) in one
//! pass: `minimum(maximum(x, lo), hi)` element by element, the same two scalar functions as
//! the composed ops, so the same bits (NaN in `x` or a bound propagates; where `lo > hi`
//! the result is `hi`). The composed form read and wrote the whole tensor twice: f64 64 Ki
//! took 22 us against NumPy's 13, one pass 10.4.
//!
//! Only an input that is one flat run takes it: below the parallel cut-over `map_flat`, with
//! its AVX2/AVX-512 copies of the loop; from it, when no bound is NaN, `map_dense`, the same
//! loop in pieces across threads (16 Mi, 1 thread, Rust loop: f32 16.2 -> 8.6 ms, f64 37 ->
//! 20 ms, where NumPy takes about 16 and 32). Through the general walk, whose loop is not
//! vectorised for these NaN-aware functions, one pass was slower than the composed ops'
//! two: f32 broadcast 64 Ki 40 us against 11, f32 16 Mi 13 ms against 7 (2 threads).

use super::distinct::Distinct;
use super::flat::{map_dense, map_flat};
use super::Tensor;
use crate::error::Result;
use crate::kernels::real_math::{with_float_dtype, with_int_dtype};
use crate::kernels::scalar_math::Arith;

impl Tensor {
    /// `clip(self, min, max)` in one pass, or `None` when it is not that simple case: a
    /// bound that is not 0-d or not of `self`'s dtype, no bound at all, a dtype that is not
    /// a real number, or an input that is not one flat run below the parallel cut-over. The
    /// caller has checked that every input is dense and none requires a gradient (others
    /// take the composed ops, which dispatch and record).
    pub(crate) fn clip_scalar_bounds(
        &self,
        min: Option<&Tensor>,
        max: Option<&Tensor>,
    ) -> Result<Option<Tensor>> {
        let dt = self.dtype();
        let scalar = |b: Option<&Tensor>| b.is_none_or(|b| b.rank() == 0 && b.dtype() == dt);
        if (min.is_none() && max.is_none()) || !scalar(min) || !scalar(max) {
            return Ok(None);
        }
        // A broadcast input: clipped once per distinct element and copied out, one pass
        // that writes, where the composed ops walked the broadcast input twice (f32 64 Ki,
        // one row of 256 repeated, 1 thread: 16.2 -> 6.0 us).
        if let Some(d) = Distinct::of(&[self])? {
            if let Some(y) = d.operands[0].clip_scalar_bounds(min, max)? {
                return Ok(Some(d.spread(&y)?));
            }
        }
        macro_rules! run {
            ($T:ty) => {{
                let lo = min.map(|b| b.item::<$T>()).transpose()?;
                let hi = max.map(|b| b.item::<$T>()).transpose()?;
                // One loop per case, the bounds in registers (no per-element branch).
                #[allow(clippy::eq_op)] // `b != b`: a NaN bound
                let nan = |b: Option<$T>| b.is_some_and(|b| b != b);
                if !nan(lo) && !nan(hi) {
                    // With bounds that are not NaN, `maximum(x, lo)` is `lo` exactly where
                    // `lo >= x` (a NaN `x` compares false and stays; `-0` against a bound of
                    // `+0` gives the bound, as `maximum` does), and `minimum(t, hi)` is `hi`
                    // where `hi <= t`: one compare and one blend a bound, where the NaN-aware
                    // functions took two compares, an `or` and a blend (64 Ki, 1 thread, Rust
                    // loop: f32 9.9 -> 7.3 us, f64 22.3 -> 15 to 17).
                    return Ok(match (lo, hi) {
                        (Some(lo), Some(hi)) => map_dense::<$T, $T>(self, move |x| {
                            let t = if lo >= x { lo } else { x };
                            if hi <= t {
                                hi
                            } else {
                                t
                            }
                        })?,
                        (Some(lo), None) => {
                            map_dense::<$T, $T>(self, move |x| if lo >= x { lo } else { x })?
                        }
                        (None, Some(hi)) => {
                            map_dense::<$T, $T>(self, move |x| if hi <= x { hi } else { x })?
                        }
                        (None, None) => unreachable!("no bound was refused above"),
                    });
                }
                match (lo, hi) {
                    (Some(lo), Some(hi)) => map_flat::<$T, $T>(self, move |x| {
                        Arith::minimum(Arith::maximum(x, lo), hi)
                    })?,
                    (Some(lo), None) => map_flat::<$T, $T>(self, move |x| Arith::maximum(x, lo))?,
                    (None, Some(hi)) => map_flat::<$T, $T>(self, move |x| Arith::minimum(x, hi))?,
                    (None, None) => unreachable!("no bound was refused above"),
                }
            }};
        }
        Ok(
            with_float_dtype!(dt, T => run!(T), else => with_int_dtype!(dt, T => run!(T), else => None)),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::{DType, Tensor};

    /// Which inputs take the one-pass form (the results of both forms are compared with the
    /// naive rule in `tests/elementwise_fns.rs`).
    #[test]
    fn one_pass_only_for_flat_inputs_and_scalar_bounds_of_the_same_dtype() {
        let x = Tensor::from_slice(&[-2.0f64, 0.5, 3.0, 1.0], &[2, 2]).unwrap();
        let lo = Tensor::scalar(-1.0, DType::F64).unwrap();
        let hi = Tensor::scalar(1.0, DType::F64).unwrap();
        let one = |t: &Tensor, lo: Option<&Tensor>, hi: Option<&Tensor>| {
            t.clip_scalar_bounds(lo, hi).unwrap().is_some()
        };
        assert!(one(&x, Some(&lo), Some(&hi)));
        assert!(one(&x.t().unwrap(), Some(&lo), None));
        assert!(one(&x, None, Some(&hi)));
        assert!(!one(&x, None, None));
        let row = x.narrow(0, 0, 1).unwrap().expand(&[2, 2]).unwrap();
        assert!(!one(&row, Some(&lo), Some(&hi)), "broadcast");
        let lo32 = Tensor::scalar(-1.0, DType::F32).unwrap();
        assert!(!one(&x, Some(&lo32), Some(&hi)), "a bound of another dtype");
        let lo1 = Tensor::from_slice(&[-1.0f64], &[1]).unwrap();
        assert!(!one(&x, Some(&lo1), None), "a bound that is not 0-d");
        let b = x.astype(DType::Bool).unwrap();
        let lob = Tensor::scalar(0.0, DType::F64)
            .unwrap()
            .astype(DType::Bool)
            .unwrap();
        assert!(!one(&b, Some(&lob), None), "bool");
        // Above the parallel cut-over, bounds that are not NaN take the one pass in pieces;
        // a NaN bound takes the composed ops there.
        let big = Tensor::zeros(&[1 << 20], DType::F32).unwrap();
        let lo_f32 = Tensor::scalar(0.0, DType::F32).unwrap();
        assert!(
            one(&big, Some(&lo_f32), None),
            "above the parallel cut-over"
        );
        let nan_f32 = Tensor::scalar(f32::NAN, DType::F32).unwrap();
        assert!(!one(&big, Some(&nan_f32), None), "a NaN bound, large");
        assert!(one(&big.narrow(0, 0, 100).unwrap(), Some(&nan_f32), None));
    }
}
