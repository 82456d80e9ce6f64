//! The integer dtypes `int16`, `uint16`, `uint32`, `uint64` end to end: casts to and from every
//! dtype, wrapping arithmetic, comparisons, sums and mixed-sign promotion, each against a
//! naive per-element reference (Rust `as` and `wrapping_*`, which are NumPy's semantics).

use proptest::prelude::*;
use tessera::{BinaryOp, CompareOp, DType, Element, Tensor};

/// Elements of `T` (as `T`) converted to `D` by the reference: integer to integer wraps
/// (Rust `as`), to a float or complex type goes through `f64`.
fn reference_cast<T: Element, D: Element>(v: &[T]) -> Vec<D> {
    v.iter()
        .map(|&x| {
            if D::DTYPE == DType::Bool {
                D::from_i64((x.to_i128() != 0 || x.to_f64() != 0.0) as i64)
            } else if D::DTYPE.is_float() || D::DTYPE.is_complex() {
                // The exact value rounded once to f64, then to D's (part) type.
                D::from_f64(x.to_f64())
            } else {
                // Two's complement wrap of the exact value into D's width.
                D::from_i64(x.to_i128() as i64)
            }
        })
        .collect()
}

/// Checks `astype` from `T` to every dtype against [`reference_cast`] on `v`, read through a
/// flipped (negative-stride) view so the strided copy path is covered too.
fn check_casts<T: Element>(v: Vec<T>) -> Result<(), TestCaseError> {
    let n = v.len();
    let rev: Vec<T> = v.iter().rev().copied().collect();
    let t = Tensor::from_vec(v, &[n]).unwrap().flip(None).unwrap();
    for d in DType::ALL {
        let got = t.astype(d).unwrap();
        prop_assert_eq!(got.dtype(), d);
        tessera::with_dtype!(d, D => {
            let want: Vec<D> = reference_cast::<T, D>(&rev);
            let got = got.to_vec::<D>().unwrap();
            // Compare bit patterns through f64/i128 so NaN (never produced here) is moot.
            for (g, w) in got.iter().zip(&want) {
                prop_assert!(g == w, "{} -> {}: got {:?}, want {:?}", T::DTYPE, d, g, w);
            }
        });
    }
    Ok(())
}

macro_rules! int_dtype_tests {
    ($($m:ident: $t:ty => $d:ident, $acc:ty => $accd:ident;)*) => {$(
        mod $m {
            use super::*;

            proptest! {
                #[test]
                fn casts_match_reference(v in prop::collection::vec(any::<$t>(), 0..40)) {
                    check_casts(v)?;
                }

                #[test]
                fn arithmetic_wraps_like_numpy(
                    pairs in prop::collection::vec((any::<$t>(), any::<$t>()), 1..40)
                ) {
                    let n = pairs.len();
                    let (a, b): (Vec<$t>, Vec<$t>) = pairs.iter().copied().unzip();
                    let ta = Tensor::from_vec(a.clone(), &[n]).unwrap();
                    // b reversed in storage and read flipped: a negative-stride operand.
                    let tb = Tensor::from_vec(b.iter().rev().copied().collect(), &[n])
                        .unwrap()
                        .flip(None)
                        .unwrap();
                    type Ops = [(BinaryOp, fn($t, $t) -> $t); 5];
                    let ops: Ops = [
                        (BinaryOp::Add, |x, y| x.wrapping_add(y)),
                        (BinaryOp::Sub, |x, y| x.wrapping_sub(y)),
                        (BinaryOp::Mul, |x, y| x.wrapping_mul(y)),
                        (BinaryOp::Maximum, |x, y| x.max(y)),
                        (BinaryOp::Minimum, |x, y| x.min(y)),
                    ];
                    for (op, f) in ops {
                        let r = ta.binary(&tb, op).unwrap();
                        prop_assert_eq!(r.dtype(), DType::$d);
                        let want: Vec<$t> = a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect();
                        prop_assert_eq!(r.to_vec::<$t>().unwrap(), want, "{:?}", op);
                    }
                    let lt = ta.compare(&tb, CompareOp::Lt).unwrap().to_vec::<bool>().unwrap();
                    let want: Vec<bool> = a.iter().zip(&b).map(|(x, y)| x < y).collect();
                    prop_assert_eq!(lt, want);
                    // True division gives float64, computed from the exact values.
                    let q = ta.binary(&tb, BinaryOp::Div).unwrap();
                    prop_assert_eq!(q.dtype(), DType::F64);
                    let want: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| x as f64 / y as f64).collect();
                    let got = q.to_vec::<f64>().unwrap();
                    for (g, w) in got.iter().zip(&want) {
                        prop_assert!(g == w || (g.is_nan() && w.is_nan()), "{} / : {} vs {}", stringify!($t), g, w);
                    }
                }

                #[test]
                fn sums_wrap_in_the_wide_type(v in prop::collection::vec(any::<$t>(), 0..300)) {
                    let n = v.len();
                    let s = Tensor::from_vec(v.clone(), &[n]).unwrap().sum(None, false).unwrap();
                    prop_assert_eq!(s.dtype(), DType::$accd);
                    let want = v.iter().fold(0 as $acc, |a, &x| a.wrapping_add(x as $acc));
                    prop_assert_eq!(s.to_vec::<$acc>().unwrap(), vec![want]);
                    let m = Tensor::from_vec(v.clone(), &[n]).unwrap().mean(None, false).unwrap();
                    prop_assert_eq!(m.dtype(), DType::F64);
                }
            }
        }
    )*};
}

int_dtype_tests! {
    int16: i16 => I16, i64 => I64;
    uint16: u16 => U16, u64 => U64;
    uint32: u32 => U32, u64 => U64;
    uint64: u64 => U64, u64 => U64;
}

#[test]
fn mixed_sign_promotion_computes_in_the_wider_signed_type() {
    let a = Tensor::from_vec(vec![255u8, 0, 200], &[3]).unwrap();
    let b = Tensor::from_vec(vec![-128i8, -1, 100], &[3]).unwrap();
    let r = a.binary(&b, BinaryOp::Add).unwrap();
    assert_eq!(r.dtype(), DType::I16);
    assert_eq!(r.to_vec::<i16>().unwrap(), vec![127, -1, 300]);
    let c = Tensor::from_vec(vec![u32::MAX], &[1]).unwrap();
    let d = Tensor::from_vec(vec![-1i32], &[1]).unwrap();
    let r = c.binary(&d, BinaryOp::Mul).unwrap();
    assert_eq!(r.dtype(), DType::I64);
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![-(u32::MAX as i64)]);
    let e = Tensor::from_vec(vec![1u64], &[1]).unwrap();
    let f = Tensor::from_vec(vec![1i64], &[1]).unwrap();
    assert!(matches!(
        e.binary(&f, BinaryOp::Add).as_ref().map_err(|e| e.kind()),
        Err(tessera::ErrorKind::DType(_))
    ));
}

#[test]
fn uint64_keeps_values_past_i64_max() {
    let big = vec![u64::MAX, 1 << 63, 0];
    let t = Tensor::from_vec(big.clone(), &[3]).unwrap();
    assert_eq!(
        t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
        vec![1.8446744073709552e19, 9.223372036854776e18, 0.0]
    );
    assert_eq!(
        format!("{t}"),
        "[18446744073709551615  9223372036854775808                    0]"
    );
    let gt = t
        .compare(
            &Tensor::from_vec(vec![1u64; 3], &[3]).unwrap(),
            CompareOp::Gt,
        )
        .unwrap();
    assert_eq!(gt.to_vec::<bool>().unwrap(), vec![true, true, false]);
    // A weak integer scalar keeps uint64.
    assert_eq!(
        t.add_scalar(1).unwrap().to_vec::<u64>().unwrap(),
        vec![0, (1 << 63) + 1, 1]
    );
}
