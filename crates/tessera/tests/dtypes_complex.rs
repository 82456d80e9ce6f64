//! `complex64` and `complex128`: casts, arithmetic (num-complex), equality, sums, `abs`,
//! matmul and printing against naive references and NumPy's output; the ordering operations
//! the array API standard refuses are typed errors.

use proptest::prelude::*;
use tessera::num_complex::Complex;
use tessera::{BinaryOp, CompareOp, DType, ErrorKind, Tensor, UnaryOp, C128, C64};

fn c128s(v: &[(f64, f64)]) -> Vec<C128> {
    v.iter().map(|&(re, im)| C128::new(re, im)).collect()
}

fn part() -> impl Strategy<Value = f64> {
    prop_oneof![
        -1e3..1e3f64,
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NAN)
    ]
}

/// Equal as NumPy's `assert_array_equal` sees complex numbers: parts equal, NaN equal to NaN.
fn same(a: Complex<f64>, b: Complex<f64>) -> bool {
    let eq = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
    eq(a.re, b.re) && eq(a.im, b.im)
}

/// NumPy's complex division (Smith's algorithm, `loops.c.src`), written out as a reference.
fn numpy_div(x: Complex<f64>, y: Complex<f64>) -> Complex<f64> {
    let (a, b, c, d) = (x.re, x.im, y.re, y.im);
    if c.abs() >= d.abs() {
        if c == 0.0 && d == 0.0 {
            return Complex::new(a / c.abs(), b / c.abs());
        }
        let r = d / c;
        let s = 1.0 / (c + d * r);
        Complex::new((a + b * r) * s, (b - a * r) * s)
    } else {
        let r = c / d;
        let s = 1.0 / (d + c * r);
        Complex::new((a * r + b) * s, (b * r - a) * s)
    }
}

proptest! {
    #[test]
    fn arithmetic_matches_num_complex(
        pairs in prop::collection::vec(((part(), part()), (part(), part())), 1..30)
    ) {
        let n = pairs.len();
        let (a, b): (Vec<_>, Vec<_>) = pairs.iter().copied().unzip();
        let ta = Tensor::from_vec(c128s(&a), &[n]).unwrap();
        // b through a flipped view: a negative-stride operand.
        let rb: Vec<_> = b.iter().rev().copied().collect();
        let tb = Tensor::from_vec(c128s(&rb), &[n]).unwrap().flip(None).unwrap();
        type F = fn(Complex<f64>, Complex<f64>) -> Complex<f64>;
        let ops: [(BinaryOp, F); 4] = [
            (BinaryOp::Add, |x, y| x + y),
            (BinaryOp::Sub, |x, y| x - y),
            (BinaryOp::Mul, |x, y| x * y),
            (BinaryOp::Div, numpy_div),
        ];
        for (op, f) in ops {
            let r = ta.binary(&tb, op).unwrap();
            prop_assert_eq!(r.dtype(), DType::C128);
            for (k, g) in r.to_vec::<C128>().unwrap().iter().enumerate() {
                let w = f(Complex::new(a[k].0, a[k].1), Complex::new(b[k].0, b[k].1));
                prop_assert!(same(g.0, w), "{:?} at {}: {:?} vs {:?}", op, k, g, w);
            }
        }
        let eq = ta.compare(&tb, CompareOp::Eq).unwrap().to_vec::<bool>().unwrap();
        let want: Vec<bool> = a.iter().zip(&b).map(|(x, y)| x.0 == y.0 && x.1 == y.1).collect();
        prop_assert_eq!(eq, want);
        // complex64 computes in f32 parts: the f64 result rounded, for these exact products.
        let a64 = ta.astype(DType::C64).unwrap();
        let back = a64.astype(DType::C128).unwrap().to_vec::<C128>().unwrap();
        for (g, &(re, im)) in back.iter().zip(&a) {
            prop_assert!(same(g.0, Complex::new(re as f32 as f64, im as f32 as f64)));
        }
    }

    #[test]
    fn casts_keep_or_drop_the_imaginary_part(v in prop::collection::vec((part(), part()), 0..20)) {
        let n = v.len();
        let t = Tensor::from_vec(c128s(&v), &[n]).unwrap();
        let re = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        for (g, w) in re.iter().zip(&v) {
            prop_assert!(*g == w.0 || (g.is_nan() && w.0.is_nan()));
        }
        let from_real = Tensor::from_vec(v.iter().map(|p| p.0).collect::<Vec<_>>(), &[n]).unwrap();
        let z = from_real.astype(DType::C64).unwrap().to_vec::<C64>().unwrap();
        for (g, w) in z.iter().zip(&v) {
            prop_assert!(g.im() == 0.0 && (g.re() == w.0 as f32 || g.re().is_nan()));
        }
    }
}

#[test]
fn promotion_follows_the_standard() {
    use DType::*;
    let r = |a, b| tessera::promote::result_type(a, b).unwrap();
    assert_eq!(r(C64, F32), C64);
    assert_eq!(r(C64, F64), C128);
    assert_eq!(r(C64, I32), C128);
    assert_eq!(r(C64, I8), C64);
    assert_eq!(r(C64, F16), C64);
    assert_eq!(r(C128, C64), C128);
    assert_eq!(r(Bool, C64), C64);
    let t = Tensor::from_vec(vec![tessera::C64::new(1.0, 2.0)], &[1]).unwrap();
    assert_eq!(
        t.mul_scalar(2.0).unwrap().to_vec::<tessera::C64>().unwrap(),
        vec![tessera::C64::new(2.0, 4.0)]
    );
}

#[test]
fn sum_mean_abs_and_matmul() {
    let t = Tensor::from_vec(c128s(&[(1.0, 2.0), (3.0, -4.0), (-0.5, 0.5)]), &[3]).unwrap();
    let s = t.sum(None, false).unwrap();
    assert_eq!(s.dtype(), DType::C128);
    assert_eq!(s.to_vec::<C128>().unwrap(), vec![C128::new(3.5, -1.5)]);
    let m = t.mean(None, false).unwrap();
    assert_eq!(
        m.to_vec::<C128>().unwrap(),
        vec![C128::new(3.5 / 3.0, -0.5)]
    );
    let a = t.unary(UnaryOp::Abs).unwrap();
    assert_eq!(a.dtype(), DType::F64);
    assert_eq!(a.to_vec::<f64>().unwrap()[1], 5.0);
    let a32 = t.astype(DType::C64).unwrap().unary(UnaryOp::Abs).unwrap();
    assert_eq!(a32.dtype(), DType::F32);
    // [1+2j, 3-4j] @ [[1j], [2]] = 1j*(1+2j) + 2*(3-4j) = -2+1j + 6-8j = 4-7j
    let a = Tensor::from_vec(c128s(&[(1.0, 2.0), (3.0, -4.0)]), &[1, 2]).unwrap();
    let b = Tensor::from_vec(c128s(&[(0.0, 1.0), (2.0, 0.0)]), &[2, 1]).unwrap();
    let p = a.matmul(&b).unwrap();
    assert_eq!(p.to_vec::<C128>().unwrap(), vec![C128::new(4.0, -7.0)]);
}

#[test]
fn ordering_is_refused() {
    let t = Tensor::from_vec(c128s(&[(1.0, 2.0)]), &[1]).unwrap();
    let dtype_err = |r: tessera::Result<Tensor>| {
        matches!(r.as_ref().map_err(|e| e.kind()), Err(ErrorKind::DType(_)))
    };
    assert!(dtype_err(t.compare(&t, CompareOp::Lt)));
    assert!(dtype_err(t.compare(&t, CompareOp::Ge)));
    assert!(dtype_err(t.binary(&t, BinaryOp::Maximum)));
    assert!(dtype_err(t.unary(UnaryOp::Relu)));
    assert!(dtype_err(t.max(None, false)));
    assert!(t.compare(&t, CompareOp::Ne).is_ok());
}

#[test]
fn printing_matches_numpy() {
    // Expected strings from NumPy 2 (`repr`, `str`), with `array` spelled `tensor`.
    let t = Tensor::from_vec(vec![C64::new(1.0, 2.0), C64::new(-0.0, -1.0)], &[2]).unwrap();
    assert_eq!(
        format!("{t:?}"),
        "tensor([ 1.+2.j, -0.-1.j], dtype=complex64)"
    );
    let t = Tensor::from_vec(c128s(&[(1.5, 0.25), (2.0, -10.0)]), &[2]).unwrap();
    assert_eq!(format!("{t}"), "[1.5 +0.25j 2. -10.j  ]");
    assert_eq!(format!("{t:?}"), "tensor([1.5 +0.25j, 2. -10.j  ])");
    let t = Tensor::from_vec(c128s(&[(f64::NAN, f64::INFINITY), (1.0, 0.0)]), &[2]).unwrap();
    assert_eq!(format!("{t}"), "[nan+infj  1. +0.j]");
    let z = Tensor::from_vec(c128s(&[(1.0, 2.0)]), &[]).unwrap();
    assert_eq!(format!("{z}"), "(1+2j)");
    assert_eq!(format!("{z:?}"), "tensor(1.+2.j)");
    let z = Tensor::from_vec(vec![C64::new(0.0, 1.5)], &[]).unwrap();
    assert_eq!(format!("{z}"), "1.5j");
}

#[test]
fn real_imag_conj() {
    let z = Tensor::from_vec(c128s(&[(1.0, -2.0), (-0.0, f64::NAN)]), &[2]).unwrap();
    let (re, im) = (z.real().unwrap(), z.imag().unwrap());
    assert_eq!(re.dtype(), DType::F64);
    assert_eq!(re.to_vec::<f64>().unwrap()[0], 1.0);
    assert!(re.to_vec::<f64>().unwrap()[1].is_sign_negative());
    assert_eq!(im.to_vec::<f64>().unwrap()[0], -2.0);
    assert!(im.to_vec::<f64>().unwrap()[1].is_nan());
    let c = z.conj().unwrap().to_vec::<C128>().unwrap();
    assert_eq!(c[0], C128::new(1.0, 2.0));
    // A transposed complex64 view: parts read through the strides.
    let m = Tensor::from_vec(
        vec![
            C64::new(1.0, 2.0),
            C64::new(3.0, 4.0),
            C64::new(5.0, 6.0),
            C64::new(7.0, 8.0),
        ],
        &[2, 2],
    )
    .unwrap()
    .t()
    .unwrap();
    assert_eq!(
        m.imag().unwrap().to_vec::<f32>().unwrap(),
        vec![2.0, 6.0, 4.0, 8.0]
    );
    // Real inputs: real/conj copy, imag is zeros of the input's dtype.
    let r = Tensor::from_vec(vec![1i16, -2], &[2]).unwrap();
    assert_eq!(r.real().unwrap().to_vec::<i16>().unwrap(), vec![1, -2]);
    assert_eq!(r.imag().unwrap().to_vec::<i16>().unwrap(), vec![0, 0]);
    assert_eq!(r.conj().unwrap().dtype(), DType::I16);
}

/// `sqrt` of complex numbers with subnormal parts keeps full accuracy: against the same
/// roots computed at a normal scale, `sqrt(4^-k z) = 2^-k sqrt(z)` (exact scalings), for both
/// signs of each part. Unscaled, `(|x| + |z|)/2` lost bits: `sqrt(2.2e-313 + 2.2e-313i)` was
/// 1.5e-12 off.
#[test]
fn complex_sqrt_of_subnormal_parts() {
    use tessera::kernels::complex_math::sqrt;
    let scale = f64::from_bits((1023 - 540) << 52); // 4^-270 = 2^-540
    let unscale = f64::from_bits((1023 - 270) << 52); // 2^-270
    for (re, im) in [
        (1.0, 1.0),
        (-1.0, 1.0),
        (3.0, -0.5),
        (-0.25, -7.0),
        (1e-10, 2.0),
    ] {
        let z = Complex::new(re * 1e-150, im * 1e-150);
        let tiny = Complex::new(z.re * scale, z.im * scale);
        assert!(tiny.re.abs() < f64::MIN_POSITIVE, "{tiny}");
        // `tiny` rounded to subnormals; scaling it back up is exact.
        let back = Complex::new(tiny.re / scale, tiny.im / scale);
        let (got, want) = (sqrt(tiny), sqrt(back) * unscale);
        let err = (got - want).norm() / want.norm();
        assert!(err < 1e-15, "sqrt({tiny}) = {got}, want {want}: {err:e}");
    }
}
