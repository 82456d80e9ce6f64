//! The Array API's elementwise functions (`tensor/ufunc.rs`): every float function against
//! std's `f64` function per element (f64: bit-exact, same function; f32: computed in f64, so
//! exactly the f64 result rounded to f32 (0 ulp); f16: computed in f32, within 1 ulp of the
//! rounded f64 result), except the vectorised `cos` and `expm1` (kernels::vmath), within
//! their documented 2 ulp of the reference for f32 and f64 (docs/design.md P2); integer `//`, `%`, shifts and bitwise ops against naive `i128`
//! references; special values; strided, broadcast, empty and 0-d operands; dtype errors.

use proptest::prelude::*;
use tessera::half::{bf16, f16};
use tessera::{DType, ErrorKind, MathBinaryOp, MathOp, Tensor};

use crate::vector_math::{ulps32, ulps64};

/// The `f64` reference of each float function.
fn reference(op: MathOp) -> Option<fn(f64) -> f64> {
    use MathOp::*;
    Some(match op {
        Acos => f64::acos,
        Acosh => crate::vector_math_derived::acosh,
        Asin => f64::asin,
        Asinh => crate::vector_math_derived::asinh,
        Atan => f64::atan,
        Atanh => crate::vector_math_derived::atanh,
        Cos => f64::cos,
        Cosh => f64::cosh,
        Expm1 => f64::exp_m1,
        Log1p => f64::ln_1p,
        Log2 => f64::log2,
        Log10 => f64::log10,
        Sinh => f64::sinh,
        Tan => f64::tan,
        Reciprocal => |x| 1.0 / x,
        Ceil => f64::ceil,
        Floor => f64::floor,
        Trunc => f64::trunc,
        Round => f64::round_ties_even,
        Sign => |x| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x * 0.0 + 0.0 // +0 for both zeros, NaN for NaN
            }
        },
        Positive => |x| x,
        _ => return None,
    })
}

fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

const SPECIALS: [f64; 12] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1e300,
    -1e-300,
    2.5,
];

/// Ulps allowed for `op` on f64: 0 (the same function as the reference) except for the
/// vectorised functions, whose bounds docs/design.md P2 gives.
fn allowed_ulps(op: MathOp) -> u64 {
    use MathOp::*;
    match op {
        Log1p | Asinh => 1,
        Cos | Expm1 | Acos | Atan | Acosh | Atanh | Log2 | Log10 => 2,
        Tan | Asin | Sinh | Cosh => 3,
        _ => 0,
    }
}

/// Ulps allowed on f32 (docs/design.md P2).
fn allowed_ulps_f32(op: MathOp) -> u64 {
    use MathOp::*;
    match op {
        Log1p => 1,
        // f32 `tan` is within 2 ulp since 2026-12-01 (its own tests, now in vector_math_trig.rs,
        // moved to 2 then; this one kept 1 until a draw found 3.8577163, 2 ulp off).
        Tan | Cos | Expm1 | Acos | Atan | Asinh | Acosh | Atanh | Sinh | Cosh | Log2 | Log10 => 2,
        Asin => 3,
        _ => allowed_ulps(op),
    }
}

fn check_float_fn(op: MathOp, xs: &[f64]) {
    let f = reference(op).unwrap();
    let tol = allowed_ulps(op);
    let t = Tensor::from_slice(xs, &[xs.len()]).unwrap();
    let got = t.math(op).unwrap().to_vec::<f64>().unwrap();
    for (i, &x) in xs.iter().enumerate() {
        assert!(
            same_f64(got[i], f(x)) || ulps64(got[i], f(x)) <= tol,
            "{} f64 at {x}: {} vs {}",
            op.name(),
            got[i],
            f(x)
        );
    }
    let x32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let t = Tensor::from_slice(&x32, &[xs.len()]).unwrap();
    let got = t.math(op).unwrap().to_vec::<f32>().unwrap();
    for (i, &x) in x32.iter().enumerate() {
        let want = f(x as f64) as f32;
        assert!(
            ulps32(got[i], want) <= allowed_ulps_f32(op),
            "{} f32 at {x}: {} vs {want}",
            op.name(),
            got[i]
        );
    }
    let x16: Vec<f16> = xs.iter().map(|&x| f16::from_f64(x)).collect();
    let t = Tensor::from_slice(&x16, &[xs.len()]).unwrap();
    let got = t.math(op).unwrap().to_vec::<f16>().unwrap();
    for (i, &x) in x16.iter().enumerate() {
        let want = f16::from_f64(f(x.to_f64()));
        let (g, w) = (got[i].to_f64(), want.to_f64());
        let ok = same_f64(g, w) || (got[i].to_bits() as i32 - want.to_bits() as i32).abs() <= 1;
        assert!(ok, "{} f16 at {x}: {g} vs {w}", op.name());
    }
}

#[test]
fn float_functions_match_std_on_special_values() {
    for &op in MathOp::ALL {
        if reference(op).is_some() {
            check_float_fn(op, &SPECIALS);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn float_functions_match_std(xs in prop::collection::vec(-5.0f64..5.0, 1..40)) {
        for &op in MathOp::ALL {
            if reference(op).is_some() {
                check_float_fn(op, &xs);
            }
        }
    }

    /// Integer floor_divide and remainder against Python's rules computed in i128; shifts
    /// and bitwise ops against NumPy's definitions.
    #[test]
    fn integer_ops_match_python(a in prop::collection::vec(any::<i8>(), 1..30),
                                b in prop::collection::vec(any::<i8>(), 1..30)) {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let ta = Tensor::from_slice(a, &[n]).unwrap();
        let tb = Tensor::from_slice(b, &[n]).unwrap();
        let fd = ta.floor_divide(&tb).unwrap().to_vec::<i8>().unwrap();
        let rm = ta.remainder(&tb).unwrap().to_vec::<i8>().unwrap();
        let shl = ta.bitwise_left_shift(&tb).unwrap().to_vec::<i8>().unwrap();
        let shr = ta.bitwise_right_shift(&tb).unwrap().to_vec::<i8>().unwrap();
        let and = ta.bitwise_and(&tb).unwrap().to_vec::<i8>().unwrap();
        let xor = ta.bitwise_xor(&tb).unwrap().to_vec::<i8>().unwrap();
        for i in 0..n {
            let (x, y) = (a[i] as i128, b[i] as i128);
            let q = if y == 0 { 0 } else { (x as f64 / y as f64).floor() as i128 };
            let r = if y == 0 { 0 } else { x - q * y };
            prop_assert_eq!(fd[i], q as u8 as i8, "{} // {}", x, y);
            prop_assert_eq!(rm[i], r as i8, "{} % {}", x, y);
            let sl = if (0..8).contains(&y) { (x << y) as i8 } else { 0 };
            let sr = if (0..8).contains(&y) { (x >> y) as i8 } else if x < 0 { -1 } else { 0 };
            prop_assert_eq!(shl[i], sl);
            prop_assert_eq!(shr[i], sr);
            prop_assert_eq!(and[i], a[i] & b[i]);
            prop_assert_eq!(xor[i], a[i] ^ b[i]);
        }
    }

    /// The predicates into `bool` (`isnan`, `isinf`, `isfinite`, `signbit`, `logical_not`)
    /// against the naive rule, for every dtype their loops are compiled for, at lengths
    /// across vector widths and tails, contiguous and reversed (a different loop).
    #[test]
    fn predicates_match_the_naive_rule(
        xs in prop::collection::vec(prop_oneof![
            Just(f64::NAN), Just(-f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY),
            Just(0.0), Just(-0.0), Just(1.0), -300.0f64..300.0,
        ], 0..300),
    ) {
        let n = xs.len();
        let check = |t: &Tensor, x: &[f64], ints: bool| -> Result<(), TestCaseError> {
            let pred = |f: fn(&Tensor) -> tessera::Result<Tensor>| f(t).unwrap().to_vec::<bool>().unwrap();
            let (nan, inf, fin, sign, not) = (pred(Tensor::isnan), pred(Tensor::isinf),
                pred(Tensor::isfinite), pred(Tensor::signbit), pred(Tensor::logical_not));
            for (i, &v) in x.iter().enumerate() {
                prop_assert_eq!(nan[i], v.is_nan(), "isnan {}", v);
                prop_assert_eq!(inf[i], v.is_infinite(), "isinf {}", v);
                prop_assert_eq!(fin[i], v.is_finite(), "isfinite {}", v);
                // Integers: `x < 0` (NumPy's signbit of an integer), so -0 is false.
                let neg = if ints { v < 0.0 } else { v.is_sign_negative() };
                prop_assert_eq!(sign[i], neg, "signbit {}", v);
                prop_assert_eq!(not[i], v == 0.0, "logical_not {}", v);
            }
            Ok(())
        };
        let f = Tensor::from_slice(&xs, &[n]).unwrap();
        for (dt, ints) in [(DType::F64, false), (DType::F32, false), (DType::F16, false)] {
            let t = f.astype(dt).unwrap();
            let x: Vec<f64> = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            check(&t, &x, ints)?;
            let flipped = t.flip(Some(&[0])).unwrap();
            let xr: Vec<f64> = x.iter().rev().copied().collect();
            check(&flipped, &xr, ints)?;
        }
        let finite: Vec<f64> = xs.iter().map(|&v| if v.is_finite() { v.trunc() } else { 3.0 }).collect();
        let g = Tensor::from_slice(&finite, &[n]).unwrap();
        for dt in [DType::I64, DType::I32, DType::I16, DType::I8] {
            let t = g.astype(dt).unwrap();
            let x: Vec<f64> = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            check(&t, &x, true)?;
        }
        let nonneg: Vec<f64> = finite.iter().map(|v| v.abs() % 200.0).collect();
        let u = Tensor::from_slice(&nonneg, &[n]).unwrap();
        for dt in [DType::U8, DType::U16, DType::U32, DType::U64, DType::Bool] {
            let t = u.astype(dt).unwrap();
            let x: Vec<f64> = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            check(&t, &x, true)?;
        }
    }

    /// `logical_and`/`or`/`xor` against `x != 0` combined naively, for every dtype (NaN is
    /// true), at lengths across vector widths and tails: both operands flat, one reversed,
    /// and one a broadcast scalar (the loops differ for each).
    #[test]
    fn logical_ops_match_the_naive_rule(
        pairs in prop::collection::vec((
            prop_oneof![Just(f64::NAN), Just(0.0), Just(-0.0), Just(1.0), 0.0f64..4.0],
            prop_oneof![Just(f64::NAN), Just(0.0), Just(2.0), 0.0f64..4.0],
        ), 1..300),
    ) {
        let n = pairs.len();
        let (xa, xb): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
        type Op = (fn(&Tensor, &Tensor) -> tessera::Result<Tensor>, fn(bool, bool) -> bool);
        let ops: [Op; 3] = [
            (Tensor::logical_and, |p, q| p & q),
            (Tensor::logical_or, |p, q| p | q),
            (Tensor::logical_xor, |p, q| p ^ q),
        ];
        let check = |a: &Tensor, b: &Tensor, ra: &[f64], rb: &[f64]| -> Result<(), TestCaseError> {
            for (k, (op, rule)) in ops.iter().enumerate() {
                let got = op(a, b).unwrap().to_vec::<bool>().unwrap();
                prop_assert_eq!(got.len(), ra.len().max(rb.len()));
                for (i, &g) in got.iter().enumerate() {
                    let (x, y) = (ra[i.min(ra.len() - 1)], rb[i.min(rb.len() - 1)]);
                    prop_assert_eq!(g, rule(x != 0.0, y != 0.0), "op {} on {} {} ({:?})", k, x, y, a.dtype());
                }
            }
            Ok(())
        };
        let (fa, fb) = (Tensor::from_slice(&xa, &[n]).unwrap(), Tensor::from_slice(&xb, &[n]).unwrap());
        for dt in [DType::F64, DType::F32, DType::F16, DType::I64, DType::I32, DType::I16, DType::I8,
                   DType::U8, DType::U16, DType::U32, DType::U64, DType::Bool] {
            // Integers: NaN converts to 0 (checked below through the converted values).
            let (a, b) = (fa.astype(dt).unwrap(), fb.astype(dt).unwrap());
            let back = |t: &Tensor| t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            let (ra, rb) = (back(&a), back(&b));
            check(&a, &b, &ra, &rb)?;
            let flipped = b.flip(Some(&[0])).unwrap();
            let rbf: Vec<f64> = rb.iter().rev().copied().collect();
            check(&a, &flipped, &ra, &rbf)?;
            let s = b.narrow(0, 0, 1).unwrap();
            check(&a, &s, &ra, &rb[..1])?;
        }
    }

    /// Float floor_divide and remainder satisfy Python's divmod identities.
    #[test]
    fn float_divmod_identities(a in -100.0f64..100.0, b in -10.0f64..10.0) {
        prop_assume!(b != 0.0);
        let ta = Tensor::scalar(a, DType::F64).unwrap();
        let tb = Tensor::scalar(b, DType::F64).unwrap();
        let q = ta.floor_divide(&tb).unwrap().item::<f64>().unwrap();
        let r = ta.remainder(&tb).unwrap().item::<f64>().unwrap();
        prop_assert_eq!(q, q.floor());
        prop_assert!(r == 0.0 || (r < 0.0) == (b < 0.0), "{} % {} = {}", a, b, r);
        prop_assert!(r.abs() < b.abs());
        prop_assert!((q * b + r - a).abs() <= 1e-9 * (1.0 + a.abs()));
    }
}

#[test]
fn strided_broadcast_empty_and_zero_d_operands() {
    let base = Tensor::from_vec((0..12).map(|v| v as f64 - 5.5).collect(), &[3, 4]).unwrap();
    let want = |t: &Tensor| -> Vec<f64> {
        t.contiguous()
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
            .into_iter()
            .map(tessera::kernels::vmath::f64::cos)
            .collect()
    };
    for v in [
        base.t().unwrap(),
        base.flip(Some(&[0])).unwrap(),
        base.narrow(0, 1, 1).unwrap().expand(&[5, 4]).unwrap(),
    ] {
        assert_eq!(v.cos().unwrap().to_vec::<f64>().unwrap(), want(&v));
    }
    // Broadcast binary: [3, 4] with [4] transposed partner.
    let row = Tensor::from_slice(&[1.0f64, -2.0, 3.0, -4.0], &[4]).unwrap();
    let h = base.hypot(&row).unwrap();
    assert_eq!(h.shape(), &[3, 4]);
    let hv = h.to_vec::<f64>().unwrap();
    let bv = base.to_vec::<f64>().unwrap();
    for i in 0..12 {
        let want = tessera::kernels::vmath::f64::hypot(bv[i], [1.0, -2.0, 3.0, -4.0][i % 4]);
        assert_eq!(hv[i], want);
    }
    let empty = Tensor::zeros(&[0, 3], DType::F32).unwrap();
    assert_eq!(empty.atan2(&empty).unwrap().shape(), &[0, 3]);
    assert_eq!(empty.isnan().unwrap().dtype(), DType::Bool);
    let z = Tensor::scalar(-0.0, DType::F64).unwrap();
    assert!(z.signbit().unwrap().item::<bool>().unwrap());
    assert_eq!(z.sign().unwrap().item::<f64>().unwrap().to_bits(), 0);
}

#[test]
fn dtype_rules_and_errors() {
    let i = Tensor::from_slice(&[-3i32, 4], &[2]).unwrap();
    let b = Tensor::from_slice(&[true, false], &[2]).unwrap();
    let f = Tensor::from_slice(&[1.5f32, -0.5], &[2]).unwrap();
    let u = Tensor::from_slice(&[3u8, 250], &[2]).unwrap();
    assert_eq!(i.floor().unwrap().dtype(), DType::I32);
    assert_eq!(i.round().unwrap().to_vec::<i32>().unwrap(), vec![-3, 4]);
    assert_eq!(i.sign().unwrap().to_vec::<i32>().unwrap(), vec![-1, 1]);
    assert_eq!(u.sign().unwrap().to_vec::<u8>().unwrap(), vec![1, 1]);
    assert_eq!(i.cos().unwrap().dtype(), DType::F64);
    assert_eq!(u.log2().unwrap().dtype(), DType::F16);
    assert_eq!(b.floor_divide(&b).unwrap().dtype(), DType::I8);
    assert_eq!(
        i.isfinite().unwrap().to_vec::<bool>().unwrap(),
        vec![true, true]
    );
    assert_eq!(
        i.signbit().unwrap().to_vec::<bool>().unwrap(),
        vec![true, false]
    );
    assert_eq!(
        b.bitwise_invert().unwrap().to_vec::<bool>().unwrap(),
        vec![false, true]
    );
    assert_eq!(
        u.bitwise_invert().unwrap().to_vec::<u8>().unwrap(),
        vec![252, 5]
    );
    assert_eq!(
        f.logical_and(&i).unwrap().to_vec::<bool>().unwrap(),
        vec![true, true]
    );
    assert_eq!(
        f.logical_not().unwrap().to_vec::<bool>().unwrap(),
        vec![false, false]
    );
    let dtype_err = |r: tessera::Result<Tensor>| {
        matches!(r.as_ref().map_err(|e| e.kind()), Err(ErrorKind::DType(_)))
    };
    assert!(dtype_err(f.bitwise_and(&f)));
    assert!(dtype_err(f.bitwise_invert()));
    assert!(dtype_err(b.bitwise_left_shift(&b)));
    assert!(dtype_err(i.bitwise_right_shift(&f)));
    assert!(dtype_err(b.floor()));
    assert!(dtype_err(b.sign()));
    assert!(dtype_err(b.positive()));
    // Integer division by zero gives 0, no panic.
    let z = Tensor::zeros(&[2], DType::I32).unwrap();
    assert_eq!(
        i.floor_divide(&z).unwrap().to_vec::<i32>().unwrap(),
        vec![0, 0]
    );
    assert_eq!(
        i.remainder(&z).unwrap().to_vec::<i32>().unwrap(),
        vec![0, 0]
    );
    let m = Tensor::from_slice(&[i64::MIN], &[1]).unwrap();
    let neg1 = Tensor::from_slice(&[-1i64], &[1]).unwrap();
    assert_eq!(
        m.floor_divide(&neg1).unwrap().to_vec::<i64>().unwrap(),
        vec![i64::MIN]
    );
}

#[test]
fn special_cases_of_the_standard() {
    let v = |xs: &[f64]| Tensor::from_slice(xs, &[xs.len()]).unwrap();
    let get = |t: Tensor| t.to_vec::<f64>().unwrap();
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    // atan2 of signed zeros.
    let a = get(v(&[0.0, 0.0, -0.0, -0.0])
        .atan2(&v(&[0.0, -0.0, 0.0, -0.0]))
        .unwrap());
    assert_eq!(a[0].to_bits(), 0.0f64.to_bits());
    assert_eq!(a[1], std::f64::consts::PI);
    assert_eq!(a[2].to_bits(), (-0.0f64).to_bits());
    assert_eq!(a[3], -std::f64::consts::PI);
    // hypot: inf wins over NaN.
    assert_eq!(
        get(v(&[inf, nan]).hypot(&v(&[nan, -inf])).unwrap()),
        vec![inf, inf]
    );
    // copysign: the sign bit of x2, NaN's too.
    let c = get(v(&[1.0, 1.0]).copysign(&v(&[-0.0, 2.0])).unwrap());
    assert_eq!(c, vec![-1.0, 1.0]);
    // logaddexp of equal infinities.
    let l = get(v(&[inf, -inf]).logaddexp(&v(&[inf, -inf])).unwrap());
    assert_eq!(l, vec![inf, -inf]);
    // round: ties to even, signed zero kept.
    let r = get(v(&[0.5, 1.5, 2.5, -0.5, -2.5]).round().unwrap());
    assert_eq!(r, vec![0.0, 2.0, 2.0, -0.0, -2.0]);
    assert!(r[3].is_sign_negative());
    // nextafter in f32 steps one f32 ulp.
    let one = Tensor::from_slice(&[1.0f32], &[1]).unwrap();
    let two = Tensor::from_slice(&[2.0f32], &[1]).unwrap();
    let n = one.nextafter(&two).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(n, vec![1.0 + f32::EPSILON]);
    let bf = Tensor::from_slice(&[bf16::ONE], &[1]).unwrap();
    let n = bf
        .nextafter(&bf.neg().unwrap())
        .unwrap()
        .to_vec::<bf16>()
        .unwrap();
    assert_eq!(n[0].to_bits(), bf16::ONE.to_bits() - 1);
    // float // and % by zero.
    let d = get(v(&[1.0, -1.0, 0.0]).floor_divide(&v(&[0.0])).unwrap());
    assert_eq!(&d[..2], &[inf, -inf]);
    assert!(d[2].is_nan());
    assert!(get(v(&[1.0]).remainder(&v(&[0.0])).unwrap())[0].is_nan());
}

#[test]
fn in_place_forms_and_clip() {
    let a = Tensor::from_vec(vec![7i64, -7, 9, 10], &[2, 2]).unwrap();
    let col = a.t().unwrap().narrow(0, 0, 1).unwrap(); // a[:, 0] as [1, 2]
    col.math_binary_scalar_(3, MathBinaryOp::Remainder).unwrap();
    assert_eq!(a.to_vec::<i64>().unwrap(), vec![1, -7, 0, 10]);
    // In place with an aliasing operand.
    a.math_binary_(&a.flip(Some(&[0])).unwrap(), MathBinaryOp::BitwiseXor)
        .unwrap();
    assert_eq!(a.to_vec::<i64>().unwrap(), vec![1, -13, 1, -13]);
    let f = Tensor::zeros(&[2], DType::F32).unwrap();
    assert!(matches!(
        a.math_binary_(&f, MathBinaryOp::FloorDivide)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::DType(_))
    ));
    let x = Tensor::from_slice(&[-5i32, 0, 5], &[3]).unwrap();
    let lo = Tensor::scalar(-1.5, DType::F64).unwrap();
    let c = x.clip(Some(&lo), None).unwrap();
    assert_eq!(c.dtype(), DType::I32);
    assert_eq!(c.to_vec::<i32>().unwrap(), vec![-1, 0, 5]);
    let hi = Tensor::from_slice(&[0i32, 0, 3], &[3]).unwrap();
    assert_eq!(
        x.clip(None, Some(&hi)).unwrap().to_vec::<i32>().unwrap(),
        vec![-5, 0, 3]
    );
    assert_eq!(
        x.clip(None, None).unwrap().to_vec::<i32>().unwrap(),
        vec![-5, 0, 5]
    );
}

/// Every elementwise function of the enums is a registered op (under its standard name).
#[test]
fn every_function_is_registered() {
    let names: Vec<&str> = tessera::ops::registry()
        .list()
        .iter()
        .map(|i| i.name)
        .collect();
    for n in tessera::MathOp::ALL.iter().map(|o| o.name()) {
        assert!(names.contains(&n), "{n}");
    }
    for n in tessera::MathBinaryOp::ALL.iter().map(|o| o.name()) {
        assert!(names.contains(&n), "{n}");
    }
}

/// `clip` with 0-d bounds of `x`'s dtype runs in one pass (tensor/clip.rs); its result is
/// the naive rule, `minimum(maximum(x, lo), hi)` per element with NaN propagating, bit for
/// bit, on contiguous and transposed inputs.
pub(crate) fn naive_clip(x: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
    let max = |a: f64, b: f64| if a > b || a.is_nan() { a } else { b };
    let min = |a: f64, b: f64| if a < b || a.is_nan() { a } else { b };
    let y = lo.map_or(x, |l| max(x, l));
    hi.map_or(y, |h| min(y, h))
}

fn special_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        -8.0f64..8.0,
        Just(f64::NAN),
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY)
    ]
}

proptest! {
    #[test]
    fn clip_with_scalar_bounds_matches_the_naive_rule(
        v in proptest::collection::vec(special_f64(), 1..300),
        lo in proptest::option::of(special_f64()),
        hi in proptest::option::of(special_f64()),
        transposed: bool,
    ) {
        let n = v.len();
        let (rows, cols) = if n % 2 == 0 { (2, n / 2) } else { (1, n) };
        for dt in [DType::F64, DType::F32, DType::I64, DType::I8, DType::U8] {
            let fin = |x: f64| if x.is_finite() { x.trunc().clamp(0.0, 8.0) + 0.0 } else { 3.0 };
            let cast = |x: f64| match dt {
                DType::F64 => x,
                DType::F32 => x as f32 as f64,
                _ => fin(x),
            };
            let v: Vec<f64> = v.iter().map(|&x| cast(x)).collect();
            let (lo, hi) = (lo.map(cast), hi.map(cast));
            let base = Tensor::from_slice(&v, &[rows, cols]).unwrap().astype(dt).unwrap();
            let x = if transposed { base.t().unwrap() } else { base.clone() };
            let bound = |b: Option<f64>| b.map(|b| Tensor::scalar(b, DType::F64).unwrap().astype(dt).unwrap());
            let (tl, th) = (bound(lo), bound(hi));
            let got = x.clip(tl.as_ref(), th.as_ref()).unwrap();
            prop_assert_eq!(got.dtype(), dt);
            prop_assert_eq!(got.shape(), x.shape());
            let want: Vec<f64> = x.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
                .into_iter().map(|e| naive_clip(e, lo, hi)).collect();
            let got = got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            for (g, w) in got.iter().zip(&want) {
                prop_assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{:?}: clip gave {} where the rule gives {} (lo {:?}, hi {:?})", dt, g, w, lo, hi);
            }
        }
    }
}

/// `clip` of an input that requires a gradient takes the recorded ops (not the one-pass
/// kernel): the gradient is 1 inside the bounds and 0 outside.
#[test]
fn clip_with_scalar_bounds_is_differentiable() {
    let x = Tensor::from_slice(&[-2.0f64, 0.5, 3.0], &[3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let lo = Tensor::scalar(-1.0, DType::F64).unwrap();
    let hi = Tensor::scalar(1.0, DType::F64).unwrap();
    let y = x.clip(Some(&lo), Some(&hi)).unwrap();
    assert_eq!(y.to_vec::<f64>().unwrap(), vec![-1.0, 0.5, 1.0]);
    let s = y.sum(None, false).unwrap();
    tessera::autograd::backward(&s, None, false).unwrap();
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>().unwrap(),
        vec![0.0, 1.0, 0.0]
    );
}
