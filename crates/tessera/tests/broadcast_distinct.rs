//! Elementwise functions of operands that repeat along a dim (`tensor/distinct.rs`): computed
//! once per distinct element and copied out, they must give the bits, shape and dtype of the
//! same function of the operands written out in full (contiguous, where each element is
//! computed), for every pattern of broadcast: both operands repeating along the same dim,
//! only one of them, a 1-D row against a matrix, a 0-d operand.

use proptest::prelude::*;
use tessera::{BinaryOp, DType, MathBinaryOp, MathOp, Tensor};

/// The values of `t` as bit patterns in one type (`i64` for integers, `f64` for floats, so
/// NaNs compare by bits too).
fn bits(t: &Tensor) -> Vec<u64> {
    if t.dtype().is_integer() {
        let v = t.astype(DType::I64).unwrap().to_vec::<i64>().unwrap();
        v.into_iter().map(|x| x as u64).collect()
    } else {
        let v = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        v.into_iter().map(f64::to_bits).collect()
    }
}

/// `f(a, b)` against `f` of `a` and `b` written out in full at the broadcast shape.
fn check_against_full(a: &Tensor, b: &Tensor, f: &dyn Fn(&Tensor, &Tensor) -> Tensor) {
    let got = f(a, b);
    let shape = got.shape().to_vec();
    let full = |t: &Tensor| {
        let sizes: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        t.expand(&sizes).unwrap().contiguous().unwrap()
    };
    let want = f(&full(a), &full(b));
    assert_eq!(got.shape(), want.shape());
    assert_eq!(got.dtype(), want.dtype());
    assert!(got.is_contiguous());
    assert_eq!(bits(&got), bits(&want), "shape {shape:?}");
}

/// The operand layouts of one case: `rows x cols` built from a row `r` (`1 x cols`) and a
/// column `c` (`rows x 1`) of values.
fn operands(rows: usize, cols: usize, r: &Tensor, c: &Tensor, pattern: u8) -> (Tensor, Tensor) {
    let (ri, ci) = (rows as isize, cols as isize);
    let row = || r.expand(&[ri, ci]).unwrap();
    let col = || c.expand(&[ri, ci]).unwrap();
    match pattern % 5 {
        // Both repeat down the rows.
        0 => (row(), row().flip(Some(&[1])).unwrap()),
        // One repeats down the rows, the other across the columns.
        1 => (row(), col()),
        // Broadcast by shape alone: a 1-D row against a repeated row.
        2 => (row(), r.reshape(&[ci]).unwrap()),
        // A 0-d operand.
        3 => (col(), Tensor::scalar(1.5, r.dtype()).unwrap()),
        // A repeated row against a full matrix (nothing shared).
        _ => (row(), row().contiguous().unwrap()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn broadcast_functions_match_their_full_operands(
        rows in 1usize..96,
        cols in 1usize..96,
        seed in prop::collection::vec(-4.0f64..4.0, 192),
        pattern in 0u8..5,
        dtype in prop::sample::select(vec![DType::F32, DType::F64, DType::I64]),
    ) {
        let vals = |n: usize, off: usize| -> Tensor {
            let v: Vec<f64> = (0..n).map(|i| seed[(i + off) % seed.len()]).collect();
            let t = Tensor::from_vec(v, &[n]).unwrap();
            let t = if dtype == DType::I64 { t.round().unwrap() } else { t };
            t.astype(dtype).unwrap()
        };
        let r = vals(cols, 0).reshape(&[1, cols as isize]).unwrap();
        let c = vals(rows, 96).reshape(&[rows as isize, 1]).unwrap();
        let (a, b) = operands(rows, cols, &r, &c, pattern);
        // Integer powers need non-negative exponents.
        let b_pow = if dtype == DType::I64 { b.abs().unwrap() } else { b.clone() };
        check_against_full(&a, &b_pow, &|x, y| x.binary(y, BinaryOp::Pow).unwrap());
        use MathBinaryOp::*;
        let ops: &[MathBinaryOp] = if dtype == DType::I64 {
            &[FloorDivide, Remainder, BitwiseAnd]
        } else {
            &[Atan2, Hypot, Logaddexp, Copysign, Nextafter, FloorDivide, Remainder]
        };
        for &op in ops {
            check_against_full(&a, &b, &|x, y| x.math_binary(y, op).unwrap());
        }
        if dtype != DType::I64 {
            for op in [MathOp::Atanh, MathOp::Tan, MathOp::Cosh, MathOp::Log1p] {
                check_against_full(&a, &a, &|x, _| x.math(op).unwrap());
            }
        }
    }
}

/// A hand-worked case: `atan2` of a row repeated 64 times and a constant, 1024 elements
/// (the smallest call that is computed on its distinct elements).
#[test]
fn atan2_of_a_repeated_row() {
    let row = Tensor::from_vec(
        (0..16).map(|i| i as f64 - 8.0).collect::<Vec<_>>(),
        &[1, 16],
    )
    .unwrap();
    let a = row.expand(&[64, 16]).unwrap();
    let y = a.math_binary(
        &Tensor::scalar(-1.0, DType::F64).unwrap(),
        MathBinaryOp::Atan2,
    );
    let y = y.unwrap().to_vec::<f64>().unwrap();
    for (i, v) in y.iter().enumerate() {
        let x = (i % 16) as f64 - 8.0;
        assert!(
            (v - x.atan2(-1.0)).abs() <= 2.0 * f64::EPSILON * v.abs(),
            "{i}: {v}"
        );
    }
}
