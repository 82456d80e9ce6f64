//! The vectorised `exp`, `expm1`, `log`, `sin`, `cos` and `tanh` (kernels::vmath) against an
//! independent reference: for `f32`, std's `f64` function rounded to `f32` (at least 29 bits
//! more than needed); for `f64`, the C library's function (glibc: under 1 ulp). The error
//! bounds asserted here are the ones docs/design.md P2 documents.

use tessera::kernels::vmath::{self, TRIG_LIMIT};

/// `bits` (a float's bits read as a signed integer whose minimum is `min`) as a count that
/// orders the representable values (`-0` and `+0` meet at 0).
fn ordered(bits: i128, min: i128) -> i128 {
    if bits < 0 {
        min - bits
    } else {
        bits
    }
}

/// Distance in ulps between two ordered keys: 0 when both values are NaN, `u64::MAX` when
/// only one is.
fn distance((a_nan, b_nan): (bool, bool), ka: i128, kb: i128) -> u64 {
    match (a_nan, b_nan) {
        (true, true) => 0,
        (false, false) => (ka - kb).unsigned_abs().min(u64::MAX as u128) as u64,
        _ => u64::MAX,
    }
}

/// Distance in units in the last place between two `f32` values (0 for `±0` or two NaNs).
pub(crate) fn ulps32(a: f32, b: f32) -> u64 {
    let key = |x: f32| ordered(x.to_bits() as i32 as i128, i32::MIN as i128);
    distance((a.is_nan(), b.is_nan()), key(a), key(b))
}

/// Distance in units in the last place between two `f64` values (0 for `±0` or two NaNs).
pub(crate) fn ulps64(a: f64, b: f64) -> u64 {
    let key = |x: f64| ordered(x.to_bits() as i64 as i128, i64::MIN as i128);
    distance((a.is_nan(), b.is_nan()), key(a), key(b))
}

/// The float types the vectorised functions come in, as the ulp checks need them.
pub(crate) trait Float: Copy + std::fmt::LowerExp {
    /// The type's name in messages.
    const NAME: &'static str;
    fn to_f64(self) -> f64;
    /// `x` rounded to this type.
    fn from_f64(x: f64) -> Self;
    /// [`ulps32`] or [`ulps64`].
    fn ulps(a: Self, b: Self) -> u64;
}

impl Float for f32 {
    const NAME: &'static str = "f32";
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn ulps(a: Self, b: Self) -> u64 {
        ulps32(a, b)
    }
}

impl Float for f64 {
    const NAME: &'static str = "f64";
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
    fn ulps(a: Self, b: Self) -> u64 {
        ulps64(a, b)
    }
}

/// The largest error in ulps of `f` against `reference` (an `f64` function, its result
/// rounded to `F`) over `xs`, skipping `|x| >` [`TRIG_LIMIT`] for the functions that send
/// those to the C library (`trig`); printed, and asserted within `bound`.
pub(crate) fn assert_within<F: Float>(
    name: &str,
    xs: &[F],
    f: fn(F) -> F,
    reference: fn(f64) -> f64,
    bound: u64,
    trig: bool,
) {
    let mut worst = (0u64, None);
    for &x in xs {
        if trig && x.to_f64().abs() > TRIG_LIMIT {
            continue;
        }
        let e = F::ulps(f(x), F::from_f64(reference(x.to_f64())));
        if e > worst.0 {
            worst = (e, Some(x));
        }
    }
    if let (e, Some(x)) = worst {
        println!("{name} {}: max {e} ulp at {x:e}", F::NAME);
        assert!(e <= bound, "{name}({x:e}): {e} ulp");
    } else {
        println!("{name} {}: exact on every input", F::NAME);
    }
}

/// The doubles nearest to multiples of π/2 and their two neighbours on each side, both
/// signs (the reduced argument is then about one ulp of x, where an imprecise π/2 shows).
pub(crate) fn near_multiples_of_pi_2() -> Vec<f64> {
    let mut xs = Vec::new();
    for k in (1..333_000u64).step_by(7).chain(1..64) {
        let x = k as f64 * std::f64::consts::FRAC_PI_2;
        for d in -2i64..=2 {
            let y = f64::from_bits((x.to_bits() as i64 + d) as u64);
            xs.extend([y, -y]);
        }
    }
    xs
}

type F32Case = (&'static str, fn(f32) -> f32, fn(f64) -> f64, u64);

fn f32_cases() -> Vec<F32Case> {
    vec![
        ("exp", vmath::f32::exp, f64::exp, 1),
        // 2 where n = 1 (half an ulp of `q` is a whole one of `q + 1/2`).
        ("expm1", vmath::f32::expm1, f64::exp_m1, 2),
        ("log", vmath::f32::log, f64::ln, 1),
        ("tanh", vmath::f32::tanh, f64::tanh, 2),
        ("sin", vmath::f32::sin, f64::sin, 2),
        ("cos", vmath::f32::cos, f64::cos, 2),
        ("sinh", vmath::f32::sinh, f64::sinh, 2),
        ("cosh", vmath::f32::cosh, f64::cosh, 2),
        ("log2", vmath::f32::log2, f64::log2, 2),
        ("log10", vmath::f32::log10, f64::log10, 2),
    ]
}

/// `f32` `expm1` over every input from `ln2/2` to `3 ln2/2` (`n = 1`), where the rounding of
/// `q = expm1(r)` is a whole ulp of `2 (q + 1/2)`: within 2 ulp there, which the sampled
/// inputs above reach only by chance.
#[test]
fn f32_expm1_where_n_is_1() {
    let (lo, hi) = (0.3466f32, 1.0398f32);
    let xs: Vec<f32> = (lo.to_bits()..=hi.to_bits()).map(f32::from_bits).collect();
    assert_within("expm1", &xs, vmath::f32::expm1, f64::exp_m1, 2, false);
}

/// Every 1021st bit pattern of `f32` (NaNs, infinities, subnormals and both zeros among
/// them), plus the values around each function's thresholds.
fn f32_inputs() -> Vec<f32> {
    let mut v: Vec<f32> = (0..=u32::MAX / 1021)
        .map(|k| f32::from_bits(k * 1021))
        .collect();
    v.extend((0..20_000).map(|k| -15.0 - k as f32 * 0.00015));
    for k in (1..333_000u32).step_by(7) {
        let x = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
        v.extend([
            x,
            -x,
            f32::from_bits(x.to_bits() + 1),
            f32::from_bits(x.to_bits() - 1),
        ]);
    }
    for t in [
        0.0f32,
        88.7,
        89.0,
        -103.9,
        -104.0,
        -17.9,
        -18.0,
        9.0,
        0.3466,
        std::f32::consts::FRAC_PI_4,
        1.0,
    ] {
        let mut x = t;
        for _ in 0..64 {
            v.extend([x, -x]);
            x = f32::from_bits(x.to_bits() + 1);
        }
    }
    v
}

#[test]
fn f32_functions_within_their_ulp_bounds() {
    let xs = f32_inputs();
    for (name, f, reference, bound) in f32_cases() {
        assert_within(
            name,
            &xs,
            f,
            reference,
            bound,
            name == "sin" || name == "cos",
        );
    }
}

type F64Case = (&'static str, fn(f64) -> f64, fn(f64) -> f64, u64);

#[test]
fn f64_functions_within_their_ulp_bounds() {
    let cases: Vec<F64Case> = vec![
        ("exp", vmath::f64::exp, f64::exp, 1),
        ("expm1", vmath::f64::expm1, f64::exp_m1, 2),
        ("log", vmath::f64::log, f64::ln, 1),
        ("tanh", vmath::f64::tanh, f64::tanh, 3),
        ("sin", vmath::f64::sin, f64::sin, 2),
        ("cos", vmath::f64::cos, f64::cos, 2),
    ];
    // Every (2^64 / 2^20)th bit pattern, then dense sweeps of the ranges that matter.
    let mut xs: Vec<f64> = (0..1u64 << 20)
        .map(|k| f64::from_bits(k << 44 | k))
        .collect();
    for (lo, hi) in [
        (-750.0, 750.0),
        (-40.0, 40.0),
        (-1.0, 1.0),
        (1e-300, 1e-280),
        (0.5, 2.0),
    ] {
        let n = 200_000;
        xs.extend((0..=n).map(|k| lo + (hi - lo) * k as f64 / n as f64));
    }
    xs.extend(near_multiples_of_pi_2());
    xs.extend((0..20_000).map(|k| -30.0 - k as f64 * 0.0005));
    for (name, f, reference, bound) in cases {
        assert_within(
            name,
            &xs,
            f,
            reference,
            bound,
            name == "sin" || name == "cos",
        );
    }
}

/// The f64 hyperbolic functions against correctly rounded values (computed with 200-bit
/// mpmath) where glibc's own `tanh` is 2 ulp off, so the bounds against glibc above do not
/// show the true error: within 2 ulp of the true values.
#[test]
fn f64_hyperbolic_within_2_ulp_of_correctly_rounded_values() {
    let table: [(f64, [f64; 3]); 3] = [
        (
            0.5439135165757265,
            [0.49594463395201904, 0.5711317636523298, 1.1516038778384783],
        ),
        (
            14.706936612807164,
            [0.9999999999996637, 1219302.3784892377, 1219302.378489648],
        ),
        (
            0.19726562500725164,
            [0.1947460558690737, 0.19854750671346505, 1.019520040225857],
        ),
    ];
    for (x, [tanh, sinh, cosh]) in table {
        for (name, got, want) in [
            ("tanh", vmath::f64::tanh(x), tanh),
            ("sinh", vmath::f64::sinh(x), sinh),
            ("cosh", vmath::f64::cosh(x), cosh),
        ] {
            assert!(
                ulps64(got, want) <= 2,
                "{name}({x:e}) = {got:e}, want {want:e}"
            );
            assert_eq!(ulps64(-got, -want), ulps64(got, want));
        }
    }
}

#[test]
fn special_values_exactly() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    type Fns = [(fn(f64) -> f64, fn(f32) -> f32); 6];
    let fns: Fns = [
        (vmath::f64::exp, vmath::f32::exp),
        (vmath::f64::expm1, vmath::f32::expm1),
        (vmath::f64::log, vmath::f32::log),
        (vmath::f64::tanh, vmath::f32::tanh),
        (vmath::f64::sin, vmath::f32::sin),
        (vmath::f64::cos, vmath::f32::cos),
    ];
    // (input, exp, expm1, log, tanh, sin, cos) as C99 Annex F and NumPy give them.
    let table = [
        (0.0, 1.0, 0.0, -inf, 0.0, 0.0, 1.0),
        (-0.0, 1.0, -0.0, -inf, -0.0, -0.0, 1.0),
        (inf, inf, inf, inf, 1.0, nan, nan),
        (-inf, 0.0, -1.0, nan, -1.0, nan, nan),
        (nan, nan, nan, nan, nan, nan, nan),
        (
            -1.0,
            (-1.0f64).exp(),
            (-1.0f64).exp_m1(),
            nan,
            (-1.0f64).tanh(),
            (-1.0f64).sin(),
            (-1.0f64).cos(),
        ),
        (1e-310, 1.0, 1e-310, (1e-310f64).ln(), 1e-310, 1e-310, 1.0),
        (
            800.0,
            inf,
            inf,
            (800.0f64).ln(),
            1.0,
            (800.0f64).sin(),
            (800.0f64).cos(),
        ),
        (
            -800.0,
            0.0,
            -1.0,
            nan,
            -1.0,
            (-800.0f64).sin(),
            (-800.0f64).cos(),
        ),
    ];
    for row in table {
        let (x, want) = (row.0, [row.1, row.2, row.3, row.4, row.5, row.6]);
        for (k, ((f64fn, f32fn), w)) in fns.iter().zip(want).enumerate() {
            if k >= 4 && x.abs() > TRIG_LIMIT {
                continue; // sin and cos of infinities go to the C library (the callers' rule)
            }
            let got = f64fn(x);
            assert!(
                same(got, w) || (ulps64(got, w) <= 2 && x.is_finite() && x != 0.0),
                "fn {k} f64({x:e}) = {got:e}, want {w:e}"
            );
            let (x32, w32) = (x as f32, w as f32);
            let want32 = if x32 == 0.0 && x != 0.0 {
                f32fn(x32)
            } else {
                w32
            }; // 1e-310 -> 0 in f32
            let got32 = f32fn(x32);
            assert!(
                got32.to_bits() == want32.to_bits()
                    || (got32.is_nan() && want32.is_nan())
                    || (ulps32(got32, want32) <= 2 && x.is_finite() && x != 0.0),
                "fn {k} f32({x32:e}) = {got32:e}, want {want32:e}"
            );
        }
    }
}

/// The tensor ops behind the vectorised functions give exactly the scalar function of each
/// element on every layout: the flat loop (contiguous, sliced and permuted inputs, over
/// `PAR_MIN_COSTLY` elements so in parallel pieces) and the generic driver (strided, flipped,
/// broadcast inputs) compute the same bits; permuted results keep the input's order (P6).
#[test]
fn tensor_results_are_the_scalar_function_on_every_layout() {
    use tessera::{DType, MathOp, Tensor, UnaryOp};
    let vals: Vec<f64> = (0..270_000)
        .map(|i| ((i * 7919) % 20011) as f64 * 0.002 - 20.0)
        .collect();
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    for dtype in [DType::F32, DType::F64] {
        let base = Tensor::from_slice(&vals, &[1350, 200])
            .unwrap()
            .astype(dtype)
            .unwrap();
        let layouts = [
            ("contiguous", base.clone()),
            ("transposed", base.t().unwrap()),
            ("row slice", base.narrow(0, 3, 1340).unwrap()),
            (
                "strided",
                base.as_strided(&[1350, 100], &[200, 2], 1).unwrap(),
            ),
            ("flipped", base.flip(Some(&[1])).unwrap()),
            (
                "broadcast",
                base.narrow(0, 7, 1).unwrap().expand(&[1350, 200]).unwrap(),
            ),
        ];
        type Case = (&'static str, fn(f64) -> f64, fn(f32) -> f32);
        let fns: [Case; 6] = [
            ("exp", vmath::f64::exp, vmath::f32::exp),
            ("expm1", vmath::f64::expm1, vmath::f32::expm1),
            ("log", vmath::f64::log, vmath::f32::log),
            ("sin", vmath::f64::sin, vmath::f32::sin),
            ("cos", vmath::f64::cos, vmath::f32::cos),
            ("tanh", vmath::f64::tanh, vmath::f32::tanh),
        ];
        for (what, t) in &layouts {
            let xs = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            for (name, f64_fn, f32_fn) in fns {
                let got = match name {
                    "exp" => t.unary(UnaryOp::Exp),
                    "log" => t.unary(UnaryOp::Log),
                    "sin" => t.unary(UnaryOp::Sin),
                    "tanh" => t.unary(UnaryOp::Tanh),
                    "cos" => t.math(MathOp::Cos),
                    _ => t.math(MathOp::Expm1),
                }
                .unwrap();
                assert_eq!(got.dtype(), dtype);
                if *what == "transposed" {
                    assert_eq!(got.strides(), t.strides(), "{name} keeps the order");
                }
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
        }
    }
}

#[test]
fn a_huge_trig_argument_sends_the_whole_tensor_to_the_c_library() {
    // The rule (docs/design.md P2): one element above TRIG_LIMIT and every element of the
    // tensor is computed with libm; small tensors (checked in the flat loop's slice) and large
    // ones (checked by a reduction), flat and strided, alike.
    use tessera::{DType, MathOp, Tensor, UnaryOp};
    for n in [16usize, 270_000] {
        for huge_at in [None, Some(0), Some(n - 1)] {
            let mut vals: Vec<f64> = (0..n).map(|i| (i % 97) as f64 * 0.37 - 17.0).collect();
            if let Some(k) = huge_at {
                vals[k] = 3.0e6;
            }
            for dtype in [DType::F32, DType::F64] {
                let base = Tensor::from_slice(&vals, &[n / 8, 8])
                    .unwrap()
                    .astype(dtype)
                    .unwrap();
                for (what, t) in [
                    ("contiguous", base.clone()),
                    ("transposed", base.t().unwrap()),
                    (
                        "strided",
                        base.as_strided(&[n / 16, 8], &[16, 1], 0).unwrap(),
                    ),
                    // Computed on its first row, then copied out: huge only when that row is.
                    (
                        "broadcast",
                        base.narrow(0, 0, 1)
                            .unwrap()
                            .expand(&[n as isize / 8, 8])
                            .unwrap(),
                    ),
                ] {
                    let xs = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                    let big = xs.iter().any(|x| x.abs() > TRIG_LIMIT);
                    for cos in [false, true] {
                        let got = if cos {
                            t.math(MathOp::Cos)
                        } else {
                            t.unary(UnaryOp::Sin)
                        }
                        .unwrap()
                        .astype(DType::F64)
                        .unwrap()
                        .to_vec::<f64>()
                        .unwrap();
                        for (k, (&x, &g)) in xs.iter().zip(&got).enumerate() {
                            let want = match (dtype, big, cos) {
                                (DType::F32, true, false) => (x.sin() as f32) as f64,
                                (DType::F32, true, true) => (x.cos() as f32) as f64,
                                (DType::F32, false, false) => vmath::f32::sin(x as f32) as f64,
                                (DType::F32, false, true) => vmath::f32::cos(x as f32) as f64,
                                (_, true, false) => x.sin(),
                                (_, true, true) => x.cos(),
                                (_, false, false) => vmath::f64::sin(x),
                                (_, false, true) => vmath::f64::cos(x),
                            };
                            assert_eq!(
                                g.to_bits(),
                                want.to_bits(),
                                "n={n} {dtype} {what} cos={cos} huge={big} [{k}]: {g:e} vs {want:e}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// The f32 `sinh`, `cosh`, `log2` and `log10`: special values and signed zeros as C99
/// Annex F gives them, overflow where f32 overflows, and exact logarithms of powers of their
/// base.
#[test]
fn f32_hyperbolic_and_logarithm_special_values_and_exact_powers() {
    use vmath::f32 as w;
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    // (x, sinh, cosh, log2, log10)
    let table = [
        (0.0, 0.0, 1.0, -inf, -inf),
        (-0.0, -0.0, 1.0, -inf, -inf),
        (inf, inf, inf, inf, inf),
        (-inf, -inf, inf, nan, nan),
        (nan, nan, nan, nan, nan),
        (
            -1.0,
            (-1.0f64).sinh() as f32,
            (1.0f64).cosh() as f32,
            nan,
            nan,
        ),
        (
            1.0,
            (1.0f64).sinh() as f32,
            (1.0f64).cosh() as f32,
            0.0,
            0.0,
        ),
        (100.0, inf, inf, (100f64).log2() as f32, 2.0),
        (-100.0, -inf, inf, nan, nan),
        (
            89.0,
            (89f64).sinh() as f32,
            (89f64).cosh() as f32,
            (89f64).log2() as f32,
            (89f64).log10() as f32,
        ),
    ];
    for (x, s, c, l2, l10) in table {
        for (name, got, want) in [
            ("sinh", w::sinh(x), s),
            ("cosh", w::cosh(x), c),
            ("log2", w::log2(x), l2),
            ("log10", w::log10(x), l10),
        ] {
            // Special values and signed zeros exactly; other values within the bound.
            let close = want.is_finite() && want != 0.0 && ulps32(got, want) <= 2;
            assert!(
                same(got, want) || close,
                "{name}({x:e}) = {got:e}, want {want:e}"
            );
        }
    }
    assert!(w::sinh(89.0).is_finite() && w::sinh(89.5).is_infinite());
    for k in -149i32..=127 {
        // 2^k from its bits (subnormal below 2^-126; `powi` overflows on the way there).
        let x = match k {
            -126.. => f32::from_bits(((k + 127) as u32) << 23),
            _ => f32::from_bits(1 << (k + 149)),
        };
        assert_eq!(w::log2(x), k as f32, "log2(2^{k})");
    }
    for k in 0..=10 {
        assert_eq!(w::log10(10f32.powi(k)), k as f32, "log10(10^{k})");
    }
}
