//! The vectorised functions built from the core ones (`kernels::vmath`'s `log1p`, `log2`,
//! `log10`, `tan`, `asin`, `acos`, `atan`, `atan2`, `hypot`, `sinh`, `cosh`, `asinh`,
//! `acosh`, `atanh`) against an independent reference: for `f32`, std's `f64` function rounded to
//! `f32`; for `f64`, the C library's function (glibc: under 1 ulp). The bounds asserted here
//! are the ones docs/design.md P2 documents.

use crate::vector_math::{assert_within, near_multiples_of_pi_2, ulps32, ulps64};
use tessera::kernels::vmath::{self, TRIG_LIMIT};

// The C library's inverse hyperbolic functions: std's `f64::asinh`, `acosh` and `atanh` are
// computed in Rust by formulas that overflow or cancel (`asinh(1e308) = inf`), so they are no
// reference.
unsafe extern "C" {
    #[link_name = "asinh"]
    safe fn c_asinh(x: f64) -> f64;
    #[link_name = "acosh"]
    safe fn c_acosh(x: f64) -> f64;
    #[link_name = "atanh"]
    safe fn c_atanh(x: f64) -> f64;
}

/// The C library's `asinh`.
pub(crate) fn asinh(x: f64) -> f64 {
    c_asinh(x)
}

/// The C library's `acosh`.
pub(crate) fn acosh(x: f64) -> f64 {
    c_acosh(x)
}

/// The C library's `atanh`.
pub(crate) fn atanh(x: f64) -> f64 {
    c_atanh(x)
}

type Case = (
    &'static str,
    fn(f32) -> f32,
    fn(f64) -> f64,
    fn(f64) -> f64,
    u64,
    u64,
);

/// (name, f32 fn, f64 fn, reference, f32 bound, f64 bound).
fn cases() -> Vec<Case> {
    vec![
        (
            "log1p",
            vmath::f32::log1p,
            vmath::f64::log1p,
            f64::ln_1p,
            1,
            1,
        ),
        ("log2", vmath::f32::log2, vmath::f64::log2, f64::log2, 2, 2),
        (
            "log10",
            vmath::f32::log10,
            vmath::f64::log10,
            f64::log10,
            2,
            2,
        ),
        ("tan", vmath::f32::tan, vmath::f64::tan, f64::tan, 2, 3),
        ("asin", vmath::f32::asin, vmath::f64::asin, f64::asin, 2, 2),
        ("acos", vmath::f32::acos, vmath::f64::acos, f64::acos, 1, 1),
        ("atan", vmath::f32::atan, vmath::f64::atan, f64::atan, 2, 2),
        ("sinh", vmath::f32::sinh, vmath::f64::sinh, f64::sinh, 2, 3),
        ("cosh", vmath::f32::cosh, vmath::f64::cosh, f64::cosh, 2, 3),
        ("asinh", vmath::f32::asinh, vmath::f64::asinh, asinh, 2, 1),
        ("acosh", vmath::f32::acosh, vmath::f64::acosh, acosh, 2, 2),
        ("atanh", vmath::f32::atanh, vmath::f64::atanh, atanh, 2, 1),
    ]
}

/// `n + 1` evenly spaced points of `[lo, hi]`.
fn sweep(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    (0..=n).map(move |k| lo + (hi - lo) * k as f64 / n as f64)
}

/// The points where the reductions switch (`tan(π/8)`, `tan(3π/8)`, `±1`, the `log(x) +
/// ln 2` cut of `asinh`/`acosh`, the overflow cut of `sinh`/`cosh`), with 64 neighbours on
/// each side.
fn thresholds() -> Vec<f64> {
    let mut v = Vec::new();
    for t in [
        std::f64::consts::SQRT_2 - 1.0,
        std::f64::consts::SQRT_2 + 1.0,
        1.0,
        0.5,
        8192.0,
        268_435_456.0,
        709.0,
        710.4,
    ] {
        let bits = t.to_bits();
        for d in 0..64u64 {
            for b in [bits + d, bits - d] {
                let x = f64::from_bits(b);
                v.extend([x, -x]);
            }
        }
    }
    v
}

#[test]
fn f32_functions_within_their_ulp_bounds() {
    let mut xs: Vec<f32> = (0..=u32::MAX / 1021)
        .map(|k| f32::from_bits(k * 1021))
        .collect();
    xs.extend(sweep(-1.0, 1.0, 400_000).map(|x| x as f32));
    xs.extend(sweep(-12.0, 12.0, 400_000).map(|x| x as f32));
    xs.extend(thresholds().into_iter().map(|x| x as f32));
    for (name, f, _, reference, bound, _) in cases() {
        assert_within(name, &xs, f, reference, bound, name == "tan");
    }
}

/// The largest distance in whole ulps of `f` from `reference` rounded to `f32`, over the
/// bit patterns `bits`, with the `x` where it occurs (in parallel: the exhaustive sweeps).
pub(crate) fn worst32(
    f: fn(f32) -> f32,
    reference: fn(f64) -> f64,
    bits: std::ops::Range<u32>,
) -> (u64, f32) {
    use rayon::prelude::*;
    bits.into_par_iter()
        .map(|b| {
            let x = f32::from_bits(b);
            (ulps32(f(x), reference(x as f64) as f32), x)
        })
        .reduce(|| (0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
}

/// Every positive `f32` (and every one above -1 for `log1p`) through `log` and `log1p`,
/// against `f64`, whose suite bounds are 1 ulp, through `log2` and `log10` (bound 2, the
/// 16-entry table) and through `asinh` and `atanh` (bound 2, the C library's `f64` functions
/// as reference): about five minutes on two cores in release, on demand (`cargo test
/// --release -p tessera --test suite f32_logs_exhaustive -- --ignored --nocapture`).
#[test]
#[ignore = "exhaustive: about five minutes in release; run on demand"]
fn f32_logs_exhaustive() {
    let positive = 1..f32::INFINITY.to_bits();
    let (e, x) = worst32(vmath::f32::log, f64::ln, positive.clone());
    println!("log f32: max {e} ulp at {x:e}");
    assert!(e <= 1, "log({x:e}): {e} ulp");
    for (name, f, reference) in [
        (
            "log2",
            vmath::f32::log2 as fn(f32) -> f32,
            f64::log2 as fn(f64) -> f64,
        ),
        ("log10", vmath::f32::log10, f64::log10),
    ] {
        let (e, x) = worst32(f, reference, positive.clone());
        println!("{name} f32: max {e} ulp at {x:e}");
        assert!(e <= 2, "{name}({x:e}): {e} ulp");
    }
    let negative = 0x8000_0001..(-1.0f32).to_bits();
    for range in [positive, negative] {
        let (e, x) = worst32(vmath::f32::log1p, f64::ln_1p, range);
        println!("log1p f32: max {e} ulp at {x:e}");
        assert!(e <= 1, "log1p({x:e}): {e} ulp");
    }
    // Both are odd: the positive half.
    let (e, x) = worst32(vmath::f32::atanh, atanh, 0..1.0f32.to_bits() + 1);
    println!("atanh f32: max {e} ulp at {x:e}");
    assert!(e <= 2, "atanh({x:e}): {e} ulp");
    let (e, x) = worst32(vmath::f32::asinh, asinh, 0..f32::INFINITY.to_bits());
    println!("asinh f32: max {e} ulp at {x:e}");
    assert!(e <= 2, "asinh({x:e}): {e} ulp");
}

/// Every `f32` in `[-1, 1]` through `asin` and `acos`, against `f64` (the suite's bounds, 2
/// and 1 ulp): about a minute on two cores in release, on demand (`cargo test --release -p
/// tessera --test suite f32_inverse_sines_exhaustive -- --ignored --nocapture`).
#[test]
#[ignore = "exhaustive: about a minute in release; run on demand"]
fn f32_inverse_sines_exhaustive() {
    let one = 1.0f32.to_bits();
    let halves = [0..one + 1, 0x8000_0000..(-1.0f32).to_bits() + 1];
    for (name, f, reference, bound) in [
        (
            "asin",
            vmath::f32::asin as fn(f32) -> f32,
            f64::asin as fn(f64) -> f64,
            2,
        ),
        ("acos", vmath::f32::acos, f64::acos, 1),
    ] {
        for bits in halves.clone() {
            let (e, x) = worst32(f, reference, bits);
            println!("{name} f32: max {e} ulp at {x:e}");
            assert!(e <= bound, "{name}({x:e}): {e} ulp");
        }
    }
}

#[test]
fn f64_functions_within_their_ulp_bounds() {
    let mut xs: Vec<f64> = (0..1u64 << 20)
        .map(|k| f64::from_bits(k << 44 | k))
        .collect();
    for (lo, hi) in [
        (-1.0, 1.0),
        (1.0, 3.0),
        (-12.0, 12.0),
        (-1e-6, 1e-6),
        (0.0, 1e9),
    ] {
        xs.extend(sweep(lo, hi, 200_000));
    }
    xs.extend(thresholds());
    xs.extend(near_multiples_of_pi_2());
    for (name, _, f, reference, _, bound) in cases() {
        assert_within(name, &xs, f, reference, bound, name == "tan");
    }
}

/// Zeros, infinities, NaN, the ends of the domains and the values just past them: where the
/// reference is NaN, zero or infinite, exactly that (signed zeros included); elsewhere within
/// the function's bound.
#[test]
fn special_values_exactly() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let specials = [
        0.0,
        -0.0,
        inf,
        -inf,
        nan,
        1.0,
        -1.0,
        2.0,
        -2.0,
        0.5,
        -0.5,
        1e-310,
        -1e-310,
        1e-30,
        -1e-30,
        1e300,
        -1e300,
        800.0,
        -800.0,
        710.0,
        -710.0,
        f64::MAX,
        f64::MIN_POSITIVE,
    ];
    let exact = |w: f64| w.is_nan() || w == 0.0 || w.is_infinite();
    for (name, f32_fn, f64_fn, reference, b32, b64) in cases() {
        for x in specials {
            if name == "tan" && x.abs() > TRIG_LIMIT {
                continue; // the callers send these to the C library
            }
            let (got, want) = (f64_fn(x), reference(x));
            let ok = if exact(want) {
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
            } else {
                ulps64(got, want) <= b64
            };
            assert!(ok, "{name} f64({x:e}) = {got:e}, want {want:e}");
            let x32 = x as f32;
            let (got, want) = (f32_fn(x32), reference(x32 as f64) as f32);
            let ok = if exact(want as f64) {
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
            } else {
                ulps32(got, want) <= b32
            };
            assert!(ok, "{name} f32({x32:e}) = {got:e}, want {want:e}");
        }
    }
}

/// Name, the two widths' functions, the `f64` reference, and the ulp bounds for `f32` and
/// `f64`.
type BinaryCase = (
    &'static str,
    fn(f32, f32) -> f32,
    fn(f64, f64) -> f64,
    fn(f64, f64) -> f64,
    (u64, u64),
);

/// `log(exp(x) + exp(y))` from the C library's `exp` and `log1p` (each within 1 ulp), the
/// larger operand factored out; `x + ln 2` for equal operands (equal infinities).
fn logaddexp(x: f64, y: f64) -> f64 {
    if x == y {
        return x + std::f64::consts::LN_2;
    }
    let d = x - y;
    if d > 0.0 {
        x + (-d).exp().ln_1p()
    } else {
        y + d.exp().ln_1p()
    }
}

/// `atan2`, `hypot` and `logaddexp` over pairs of magnitudes and signs, against the C
/// library, and their C99 special values (signed zeros, infinities, NaN) exactly.
#[test]
fn binary_functions_within_their_bounds_and_special_values_exactly() {
    let cases: [BinaryCase; 3] = [
        (
            "atan2",
            vmath::f32::atan2,
            vmath::f64::atan2,
            f64::atan2,
            (2, 2),
        ),
        (
            "hypot",
            vmath::f32::hypot,
            vmath::f64::hypot,
            f64::hypot,
            (2, 2),
        ),
        (
            "logaddexp",
            vmath::f32::logaddexp,
            vmath::f64::logaddexp,
            logaddexp,
            // Against the same formula through glibc (f64: its `exp`/`log1p` within 1 ulp
            // each, results near ln 2 in these samples); f32 is computed in f64. The strip
            // where the sum is near 0 is the next test's.
            (1, 4),
        ),
    ];
    for (name, f32_fn, f64_fn, reference, (bound32, bound)) in cases {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut w32, mut w64) = (0u64, 0u64);
        for _ in 0..400_000 {
            let (r, s) = (next(), next());
            // Magnitudes within a few binades of each other, and far apart.
            let y = f64::from_bits(r >> 2 | (r & 1) << 63).clamp(-1e300, 1e300);
            let scale = [1.0, 1e-3, 7.5, 1e12, 0.999][(s % 5) as usize];
            let sign = if s & 8 == 0 { 1.0 } else { -1.0 };
            let x = y * scale * sign + (s >> 40) as f64 * 1e-9;
            w64 = w64.max(ulps64(f64_fn(y, x), reference(y, x)));
            let y32 = (s as u32 % 2001) as f32 * 0.01 - 10.0;
            let x32 = (r as u32 % 2001) as f32 * 0.01 - 10.0;
            let want = reference(y32 as f64, x32 as f64) as f32;
            w32 = w32.max(ulps32(f32_fn(y32, x32), want));
        }
        println!("{name}: max {w32} ulp (f32), {w64} ulp (f64)");
        assert!(
            w64 <= bound && w32 <= bound32,
            "{name}: {w32} ulp (f32), {w64} ulp (f64)"
        );
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        // With magnitudes where `y + x` overflows (`atan2` halves them there) and a subnormal
        // next to a moderate one (which it must not halve).
        let vals = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            inf,
            -inf,
            nan,
            1e-310,
            -3.5,
            1e300,
            f64::MAX,
            -0.6 * f64::MAX,
            5e-324,
        ];
        for y in vals {
            for x in vals {
                let (got, want) = (f64_fn(y, x), reference(y, x));
                assert!(
                    got.to_bits() == want.to_bits()
                        || (got.is_nan() && want.is_nan())
                        || (ulps64(got, want) <= bound && want != 0.0 && want.is_finite()),
                    "{name}({y:e}, {x:e}) = {got:e}, want {want:e}"
                );
                let (y32, x32) = (y as f32, x as f32);
                let (got, want) = (f32_fn(y32, x32), reference(y32 as f64, x32 as f64) as f32);
                assert!(
                    got.to_bits() == want.to_bits()
                        || (got.is_nan() && want.is_nan())
                        || (ulps32(got, want) <= bound32 && want != 0.0 && want.is_finite()),
                    "f32 {name}({y32:e}, {x32:e}) = {got:e}, want {want:e}"
                );
            }
        }
        for (y, x) in [
            (f32::MAX, 0.7 * f32::MAX),
            (-0.6 * f32::MAX, f32::MAX),
            (1e-45, 1.5),
            (3e-45, -1.5),
        ] {
            let (got, want) = (f32_fn(y, x), reference(y as f64, x as f64) as f32);
            assert!(
                ulps32(got, want) <= bound32,
                "f32 {name}({y:e}, {x:e}) = {got:e}, want {want:e}"
            );
        }
    }
}

/// `logaddexp` over (-50, 50) and along the strip where `e^x + e^y` is near 1, where its two
/// terms cancel: the `f64` function within `4 eps max(1, |x|, |y|)` (an absolute bound) of
/// the same formula through the C library, and the `f32` one (computed in `f64`) within 1 ulp
/// wherever the result is above `1e-6`.
#[test]
fn logaddexp_error_is_absolute_where_the_terms_cancel() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut worst64, mut worst32) = (0.0f64, 0u64);
    for k in 0..400_000 {
        let x = if k % 2 == 0 {
            next() * 100.0 - 50.0
        } else {
            -next() * 0.69
        };
        // On the strip: e^y = 1 - e^x (|x| < ln 2 keeps 1 - e^x in (0, 1)), nudged.
        let y = if k % 2 == 0 {
            next() * 100.0 - 50.0
        } else {
            (-x.exp()).ln_1p() + (next() - 0.5) * 1e-6
        };
        let (got, want) = (vmath::f64::logaddexp(x, y), logaddexp(x, y));
        let scale = 1f64.max(x.abs()).max(y.abs());
        worst64 = worst64.max((got - want).abs() / (scale * f64::EPSILON));
        let (x32, y32) = (x as f32, y as f32);
        let want32 = logaddexp(x32 as f64, y32 as f64);
        if want32.abs() > 1e-6 {
            worst32 = worst32.max(ulps32(vmath::f32::logaddexp(x32, y32), want32 as f32));
        }
    }
    println!("logaddexp: {worst64:.2} eps * scale (f64), {worst32} ulp (f32 above 1e-6)");
    assert!(worst64 <= 4.0, "f64: {worst64} eps * max(1, |x|, |y|)");
    assert!(worst32 <= 1, "f32: {worst32} ulp");
}

/// `log2(2^k) = k` and `log10(10^k) = k` exactly in `f64`, as the C library gives them.
#[test]
fn f64_logarithms_of_powers_of_their_base_are_exact() {
    for k in -1074i32..=1023 {
        // 2^k from its bits (subnormal below 2^-1022; `powi` underflows on the way there).
        let x = match k {
            -1022.. => f64::from_bits(((k + 1023) as u64) << 52),
            _ => f64::from_bits(1 << (k + 1074)),
        };
        assert_eq!(vmath::f64::log2(x), k as f64, "log2(2^{k})");
    }
    for k in 0..=22 {
        let x = format!("1e{k}").parse::<f64>().unwrap();
        assert_eq!(vmath::f64::log10(x), k as f64, "log10(10^{k})");
    }
}

/// The tensor ops give exactly the scalar function of each element, on the flat loop's
/// layouts (contiguous, transposed, over `PAR_MIN_COSTLY` elements) and the generic driver's
/// (strided, broadcast); `atan2`, `hypot` and `logaddexp` through both of their paths too.
#[test]
fn tensor_results_are_the_scalar_function_on_every_layout() {
    use tessera::{DType, MathBinaryOp, MathOp, Tensor, UnaryOp};
    let vals: Vec<f64> = (0..270_000)
        .map(|i| ((i * 7919) % 20011) as f64 * 0.0003 - 3.0)
        .collect();
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let ops = [
        MathOp::Log1p,
        MathOp::Log2,
        MathOp::Log10,
        MathOp::Tan,
        MathOp::Asin,
        MathOp::Acos,
        MathOp::Atan,
        MathOp::Sinh,
        MathOp::Cosh,
        MathOp::Asinh,
        MathOp::Acosh,
        MathOp::Atanh,
    ];
    // Over the parallel cut-over, below it (broadcast operands are copied) and small.
    for (dtype, (r, c)) in [DType::F32, DType::F64]
        .into_iter()
        .flat_map(|d| [(d, (1350, 200)), (d, (27, 20)), (d, (9, 6))])
    {
        let base = Tensor::from_slice(&vals[..r * c], &[r, c])
            .unwrap()
            .astype(dtype)
            .unwrap();
        let layouts = [
            ("contiguous", base.clone()),
            ("transposed", base.t().unwrap()),
            (
                "strided",
                base.as_strided(&[r, c / 2], &[c as isize, 2], 1).unwrap(),
            ),
            (
                "broadcast",
                base.narrow(0, r / 2, 1)
                    .unwrap()
                    .expand(&[r as isize, c as isize])
                    .unwrap(),
            ),
        ];
        for (what, t) in &layouts {
            let xs = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            for (op, (name, f32_fn, f64_fn, _, _, _)) in ops.iter().zip(cases()) {
                let got = t.math(*op).unwrap();
                assert_eq!(got.dtype(), dtype);
                let got = got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                for (k, (&x, &g)) in xs.iter().zip(&got).enumerate() {
                    let want = match dtype {
                        DType::F32 => f32_fn(x as f32) as f64,
                        _ => f64_fn(x),
                    };
                    assert!(
                        same(g, want),
                        "{name} {dtype} {what} [{k}]: {g:e} vs {want:e}"
                    );
                }
            }
            type Pair = (MathBinaryOp, fn(f32, f32) -> f32, fn(f64, f64) -> f64);
            let pairs: [Pair; 3] = [
                (MathBinaryOp::Atan2, vmath::f32::atan2, vmath::f64::atan2),
                (MathBinaryOp::Hypot, vmath::f32::hypot, vmath::f64::hypot),
                (
                    MathBinaryOp::Logaddexp,
                    vmath::f32::logaddexp,
                    vmath::f64::logaddexp,
                ),
            ];
            // A flipped partner or a row of lower rank takes the element-wise driver, or
            // below 256 elements for `f64` `atan2` and `logaddexp` the operands gathered on
            // the stack (`zip_gathered`); `exp(t)`, laid out as `t` (P6), the flat loop when
            // `t` is one run.
            let cols = t.shape()[1] as isize;
            let row = t.narrow(0, 1, 1).unwrap().reshape(&[cols]).unwrap();
            for other in [
                t.flip(Some(&[0])).unwrap(),
                t.unary(UnaryOp::Exp).unwrap(),
                row,
            ] {
                let wide = other.broadcast_to(t.shape()).unwrap();
                let ys = wide.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                for (op, f32_fn, f64_fn) in pairs {
                    let got = t.math_binary(&other, op).unwrap();
                    let got = got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                    for (k, ((&x, &y), &g)) in xs.iter().zip(&ys).zip(&got).enumerate() {
                        let want = match dtype {
                            DType::F32 => f32_fn(x as f32, y as f32) as f64,
                            _ => f64_fn(x, y),
                        };
                        let msg = format!("{op:?} {dtype} {what} [{k}]: {g:e} vs {want:e}");
                        assert!(same(g, want), "{msg}");
                    }
                }
            }
        }
    }
}

/// `vals` as a 1-D tensor of `dtype` (`f32` or `f64`), and its elements read back as `f64`.
pub(crate) fn tensor_of(vals: &[f64], dtype: tessera::DType) -> (tessera::Tensor, Vec<f64>) {
    let t = tessera::Tensor::from_slice(vals, &[vals.len()])
        .unwrap()
        .astype(dtype)
        .unwrap();
    let xs = t
        .astype(tessera::DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    (t, xs)
}

/// The scalar function of `dtype`'s width at `x` (an element of that dtype), as `f64`.
fn scalar_at(dtype: tessera::DType, f32_fn: fn(f32) -> f32, f64_fn: fn(f64) -> f64, x: f64) -> f64 {
    match dtype {
        tessera::DType::F32 => f32_fn(x as f32) as f64,
        _ => f64_fn(x),
    }
}

/// The logarithms' flat loops run a block of inputs that are all positive, normal and finite
/// through the functions' `_normal` forms: the same bits as the full functions, which the
/// blocks holding a zero, a subnormal, a negative, an infinity or a NaN take. Checked on
/// positive inputs with such values dropped at chosen places, across block edges and tails,
/// against the scalar functions.
#[test]
fn logarithm_blocks_of_normal_inputs_give_the_full_functions_bits() {
    use tessera::{DType, MathOp, UnaryOp};
    let specials = [
        0.0,
        -0.0,
        1e-310,
        -2.0,
        f64::INFINITY,
        f64::NAN,
        1.0,
        2.0,
        1e300,
    ];
    for n in [1usize, 63, 64, 65, 200, 1000] {
        let mut vals: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 20011) as f64 * 0.013 + 1e-3)
            .collect();
        // Blocks of 64: leave the first clean, spoil the second at its last element, and so on.
        for (j, k) in (127..n).step_by(131).enumerate() {
            vals[k] = specials[j % specials.len()];
        }
        for dtype in [DType::F32, DType::F64] {
            let (t, xs) = tensor_of(&vals, dtype);
            type Case = (&'static str, fn(f32) -> f32, fn(f64) -> f64);
            let cases: [Case; 3] = [
                ("log", vmath::f32::log, vmath::f64::log),
                ("log2", vmath::f32::log2, vmath::f64::log2),
                ("log10", vmath::f32::log10, vmath::f64::log10),
            ];
            for (name, f32_fn, f64_fn) in cases {
                let got = match name {
                    "log" => t.unary(UnaryOp::Log),
                    "log2" => t.math(MathOp::Log2),
                    _ => t.math(MathOp::Log10),
                }
                .unwrap();
                let got = got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                for (k, (&x, &g)) in xs.iter().zip(&got).enumerate() {
                    let want = scalar_at(dtype, f32_fn, f64_fn, x);
                    let same = g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan());
                    assert!(
                        same,
                        "{name} {dtype} n={n} [{k}] of {x:e}: {g:e} vs {want:e}"
                    );
                }
            }
        }
    }
    // The block test itself, against its rule.
    let clean = [1.0f32, f32::MIN_POSITIVE, f32::MAX, 3.5];
    assert!(vmath::f32::all_positive_normal(&clean));
    for bad in [
        0.0f32,
        -0.0,
        1e-40,
        -1.0,
        f32::INFINITY,
        f32::NAN,
        -f32::NAN,
    ] {
        let mut v = clean.to_vec();
        v[2] = bad;
        assert!(!vmath::f32::all_positive_normal(&v), "{bad:e}");
        // A subnormal `f32` is a normal `f64`: the `f64` check takes its own subnormal.
        let wide = if bad == 1e-40 { 1e-310 } else { bad as f64 };
        assert!(!vmath::f64::all_positive_normal(&[1.0, wide]), "{wide:e}");
    }
}
