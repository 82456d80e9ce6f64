//! The scans for trig arguments above [`TRIG_LIMIT`] (or infinities): `sin`, `cos` and `f64`'s
//! `tan` reduce their argument correctly only up to that limit, so a tensor holding a larger
//! magnitude goes to the C library's functions instead (docs/design.md P2). [`HugeScan`] checks
//! one flat run of elements, fast enough to run just before each block is computed;
//! [`any_above`] checks a tensor of any layout, through the reduction engine.

use super::reduce::resolve_axes;
use super::Tensor;
use crate::dtype::Element;
use crate::error::Result;
use crate::kernels::reduce::Reducer;
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::has_avx512;
use crate::kernels::simd::with_simd;
use crate::kernels::vmath::TRIG_LIMIT;

/// Whether some element's magnitude exceeds a limit (NaN does not).
pub(super) struct AnyAbove(f64);

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
pub(super) fn any_above<T: Element>(t: &Tensor, limit: f64) -> Result<bool>
where
    AnyAbove: Reducer<T, Acc = bool>,
{
    let all = resolve_axes(t.shape(), None, false)?;
    Ok(t.reduce_with::<T, _>(&all, &AnyAbove(limit))?[0])
}

/// The float types whose trig arguments are scanned for magnitudes above [`TRIG_LIMIT`] (or
/// infinities), which `sin`, `cos` and `f64`'s `tan` send to the C library.
pub(super) trait HugeScan: Sized {
    fn holds_huge(a: &[Self]) -> bool;
}

macro_rules! huge_scan {
    ($($t:ident => $bits:ident),*) => {$(
        impl HugeScan for $t {
            fn holds_huge(a: &[$t]) -> bool {
                // The magnitudes' bits, folded by an unsigned maximum per block of
                // `SCAN_CHUNK` (in the AVX-512 copy where the CPU has it): the
                // bits of non-negative floats order as the floats do, and `TRIG_LIMIT` (2^19)
                // is exact in both widths, so a maximum at most the limit's bits means no
                // huge magnitude. Above, the block holds a huge magnitude, an infinity or a
                // NaN, and the comparison in floats (NaN is not huge) decides. An integer
                // maximum reassociates, so the fold vectorises (two instructions a vector);
                // a huge value found early still ends the scan at its block. An early exit
                // per element kept the scan scalar (about 1 ns an element, more than `sin`
                // itself); a count of `x.abs() > LIMIT` per block took a tenth of the `f32`
                // `tan` loop's time, and a fold of the float maximum stayed scalar (it does
                // not reassociate).
                const LIMIT: $t = TRIG_LIMIT as $t;
                const MAGNITUDE: $bits = <$bits>::MAX >> 1;
                #[inline(always)]
                fn scan(a: &[$t]) -> bool {
                    a.chunks(SCAN_CHUNK).any(|c| {
                        let top = c.iter().fold(0, |m: $bits, x| m.max(x.to_bits() & MAGNITUDE));
                        top > LIMIT.to_bits() && c.iter().any(|x| x.abs() > LIMIT)
                    })
                }
                #[cfg(target_arch = "x86_64")]
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
                fn widest(a: &[$t]) -> bool {
                    scan(a)
                }
                #[cfg(target_arch = "x86_64")]
                if has_avx512() {
                    // SAFETY: `widest` only needs the features `has_avx512` has just confirmed.
                    return unsafe { widest(a) };
                }
                with_simd(|| scan(a))
            }
        }
    )*};
}
huge_scan!(f32 => u32, f64 => u64);

/// The elements [`HugeScan`] folds at a time.
const SCAN_CHUNK: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values around the limit, the infinities and NaN, among ordinary ones.
    fn trig_arg() -> impl Strategy<Value = f64> {
        let lim = TRIG_LIMIT;
        prop_oneof![
            4 => -1e3f64..1e3,
            1 => prop::sample::select(vec![
                lim,
                -lim,
                f64::from_bits(lim.to_bits() + 1),
                -f64::from_bits(lim.to_bits() + 1),
                (lim as f32).next_up() as f64,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                -f64::NAN,
                3.0e6,
            ]),
        ]
    }

    proptest! {
        /// The scan against the naive rule (a magnitude above `TRIG_LIMIT`, compared in `f64`;
        /// NaN is not huge), at lengths across the [`SCAN_CHUNK`]-element blocks, in both
        /// widths; one special value (if any) at any place among ordinary ones, so that the
        /// first huge one falls in any block.
        #[test]
        fn holds_huge_is_the_naive_rule(
            mut xs in prop::collection::vec(-1e3f64..1e3, 0..2600),
            special in prop::option::of(trig_arg()),
            at in any::<prop::sample::Index>(),
        ) {
            if let Some(v) = special {
                let k = at.index(xs.len() + 1);
                xs.insert(k, v);
            }
            let naive = |v: &[f64]| v.iter().any(|x| x.abs() > TRIG_LIMIT);
            prop_assert_eq!(HugeScan::holds_huge(&xs[..]), naive(&xs));
            let narrow: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
            let widened: Vec<f64> = narrow.iter().map(|&x| x as f64).collect();
            prop_assert_eq!(HugeScan::holds_huge(&narrow[..]), naive(&widened));
        }
    }
}
