//! Type promotion: which dtype an operation on two dtypes (or a dtype and a Python-style
//! scalar) computes in.
//!
//! The rules are NumPy 2's (`np.result_type`), which agree with the Python array API standard
//! wherever the standard defines a result:
//!
//! - Same kind (bool/bool, signed/signed, unsigned/unsigned, float/float): the wider type.
//! - `bool` with anything: the other type.
//! - Mixed integer and float (left undefined by the array API standard): NumPy's rule, the
//!   smallest float that holds every value of the integer type: `u8`/`i8` with `f16` give
//!   `f16`, `i32`/`i64` with `f16`/`f32` give `f64`.
//! - `u8` with `i8`: NumPy and the standard give `int16`, which Tessera lacks. Rather than
//!   silently widening to `i32`, this is a [`TesseraError::DType`] error; cast one operand
//!   explicitly.
//! - `bf16` (not in NumPy): as PyTorch. `bf16` with `f16` gives `f32`; with `f32`/`f64` the
//!   wider; with `bool`/`u8`/`i8` (exactly representable) `bf16`; with `i32`/`i64` `f64`
//!   (as `f16` does in NumPy).
//!
//! Scalars are *weak* (NEP 50, the array API standard): they take the tensor's dtype when
//! their kind fits. See [`result_type_scalar`].

use crate::dtype::{DType, Scalar};
use crate::error::{DTypeFacts, Result, TesseraError};

/// The dtype a binary operation on `a` and `b` computes in (NumPy 2's `np.result_type`; see
/// the [module docs](self) for the choices where NumPy has no answer in Tessera's dtypes).
/// Looked up in a table (`TABLE` in this module); `u8` with `i8` is a
/// [`TesseraError::DType`] error.
///
/// ```
/// use tessera::{promote::result_type, DType};
/// assert_eq!(result_type(DType::I32, DType::F32).unwrap(), DType::F64);
/// assert_eq!(result_type(DType::BF16, DType::F16).unwrap(), DType::F32);
/// assert!(result_type(DType::U8, DType::I8).is_err()); // NumPy: int16, which we lack
/// ```
pub fn result_type(a: DType, b: DType) -> Result<DType> {
    TABLE[row(a)][row(b)].ok_or_else(|| {
        // The only `None` today is u8 with i8 (NumPy: int16); named in row order so the
        // message does not depend on the operand order.
        let (x, y) = if row(a) <= row(b) { (a, b) } else { (b, a) };
        TesseraError::DType(DTypeFacts::NoPromotion {
            lhs: x,
            rhs: y,
            numpy: "int16",
        })
    })
}

/// The row (and column) of a dtype in [`TABLE`]. Exhaustive on purpose: a new dtype does not
/// compile until it has a row and a column.
const fn row(d: DType) -> usize {
    match d {
        DType::Bool => 0,
        DType::U8 => 1,
        DType::I8 => 2,
        DType::I32 => 3,
        DType::I64 => 4,
        DType::F16 => 5,
        DType::BF16 => 6,
        DType::F32 => 7,
        DType::F64 => 8,
    }
}

/// Number of dtypes in [`TABLE`].
const N: usize = 9;

/// The promotion table: `TABLE[row(a)][row(b)]` is `result_type(a, b)`, `None` where the
/// result would be a dtype Tessera lacks (an error; today only `int16`, which the error
/// message names). Symmetric (a test checks it), written out
/// in full so that no rule depends on the declaration order of [`DType`]. To add a dtype, give
/// it a `row`, add its column to every row and its row at the end (and extend the test's
/// expected table).
#[rustfmt::skip]
const TABLE: [[Option<DType>; N]; N] = {
    use DType::*;
    const X: Option<DType> = None;
    const B1: Option<DType> = Some(Bool);
    const U8_: Option<DType> = Some(U8);
    const I8_: Option<DType> = Some(I8);
    const I32_: Option<DType> = Some(I32);
    const I64_: Option<DType> = Some(I64);
    const F16_: Option<DType> = Some(F16);
    const BF16_: Option<DType> = Some(BF16);
    const F32_: Option<DType> = Some(F32);
    const F64_: Option<DType> = Some(F64);
    [
        //          bool   u8     i8     i32    i64    f16    bf16   f32    f64
        /* bool */ [B1,    U8_,   I8_,   I32_,  I64_,  F16_,  BF16_, F32_,  F64_],
        /* u8   */ [U8_,   U8_,   X,     I32_,  I64_,  F16_,  BF16_, F32_,  F64_],
        /* i8   */ [I8_,   X,     I8_,   I32_,  I64_,  F16_,  BF16_, F32_,  F64_],
        /* i32  */ [I32_,  I32_,  I32_,  I32_,  I64_,  F64_,  F64_,  F64_,  F64_],
        /* i64  */ [I64_,  I64_,  I64_,  I64_,  I64_,  F64_,  F64_,  F64_,  F64_],
        /* f16  */ [F16_,  F16_,  F16_,  F64_,  F64_,  F16_,  F32_,  F32_,  F64_],
        /* bf16 */ [BF16_, BF16_, BF16_, F64_,  F64_,  F32_,  BF16_, F32_,  F64_],
        /* f32  */ [F32_,  F32_,  F32_,  F64_,  F64_,  F32_,  F32_,  F32_,  F64_],
        /* f64  */ [F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_],
    ]
};

/// The dtype of `tensor ⊕ scalar` for a tensor of dtype `d` (weak scalars, NEP 50):
///
/// - a `bool` scalar never changes `d`;
/// - an integer scalar keeps `d` unless `d` is `bool` (then `i64`); it must fit in an integer
///   `d`, else [`TesseraError::InvalidArgument`] (NumPy raises `OverflowError`);
/// - a float scalar keeps a float `d`; with a `bool` or integer `d` it gives `f64` (NumPy).
///
/// ```
/// use tessera::{promote::result_type_scalar, DType, Scalar};
/// assert_eq!(result_type_scalar(DType::F32, Scalar::Float(2.5)).unwrap(), DType::F32);
/// assert_eq!(result_type_scalar(DType::I32, Scalar::Int(2)).unwrap(), DType::I32);
/// assert_eq!(result_type_scalar(DType::I32, Scalar::Float(2.5)).unwrap(), DType::F64);
/// assert!(result_type_scalar(DType::U8, Scalar::Int(300)).is_err());
/// ```
pub fn result_type_scalar(d: DType, s: Scalar) -> Result<DType> {
    match s {
        Scalar::Bool(_) => Ok(d),
        Scalar::Int(v) => match d {
            DType::Bool => Ok(DType::I64),
            _ if d.is_integer() => {
                let (lo, hi) = int_range(d);
                if (lo..=hi).contains(&v) {
                    Ok(d)
                } else {
                    Err(TesseraError::InvalidArgument(format!(
                        "integer scalar {v} out of bounds for {d}"
                    )))
                }
            }
            _ => Ok(d),
        },
        Scalar::Float(_) if d.is_float() => Ok(d),
        Scalar::Float(_) => Ok(DType::F64),
    }
}

/// The float dtype an integer or bool input computes in for float-only unary functions
/// (`sqrt`, `exp`, ...): NumPy's choice, `result_type(d, f16)`: `bool`/`u8`/`i8` give
/// `f16`, `i32`/`i64` give `f64`. Float dtypes are kept.
pub fn float_result(d: DType) -> DType {
    match d {
        DType::Bool | DType::U8 | DType::I8 => DType::F16,
        DType::I32 | DType::I64 => DType::F64,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 => d,
    }
}

/// The inclusive value range of an integer dtype (`[0, 1]` for bool, `[0, 0]` for floats,
/// which have no integer range).
fn int_range(d: DType) -> (i64, i64) {
    match d {
        DType::Bool => (0, 1),
        DType::U8 => (0, u8::MAX as i64),
        DType::I8 => (i8::MIN as i64, i8::MAX as i64),
        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
        DType::I64 => (i64::MIN, i64::MAX),
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair, written independently of [`TABLE`] as NumPy 2 (`np.result_type`) and
    /// PyTorch (bf16) give it, by dtype name; `"error"` where NumPy's answer is `int16`.
    const EXPECTED: &[(&str, &str, &str)] = &[
        ("bool", "bool", "bool"),
        ("bool", "uint8", "uint8"),
        ("bool", "int8", "int8"),
        ("bool", "int32", "int32"),
        ("bool", "int64", "int64"),
        ("bool", "float16", "float16"),
        ("bool", "bfloat16", "bfloat16"),
        ("bool", "float32", "float32"),
        ("bool", "float64", "float64"),
        ("uint8", "uint8", "uint8"),
        ("uint8", "int8", "error"),
        ("uint8", "int32", "int32"),
        ("uint8", "int64", "int64"),
        ("uint8", "float16", "float16"),
        ("uint8", "bfloat16", "bfloat16"),
        ("uint8", "float32", "float32"),
        ("uint8", "float64", "float64"),
        ("int8", "int8", "int8"),
        ("int8", "int32", "int32"),
        ("int8", "int64", "int64"),
        ("int8", "float16", "float16"),
        ("int8", "bfloat16", "bfloat16"),
        ("int8", "float32", "float32"),
        ("int8", "float64", "float64"),
        ("int32", "int32", "int32"),
        ("int32", "int64", "int64"),
        ("int32", "float16", "float64"),
        ("int32", "bfloat16", "float64"),
        ("int32", "float32", "float64"),
        ("int32", "float64", "float64"),
        ("int64", "int64", "int64"),
        ("int64", "float16", "float64"),
        ("int64", "bfloat16", "float64"),
        ("int64", "float32", "float64"),
        ("int64", "float64", "float64"),
        ("float16", "float16", "float16"),
        ("float16", "bfloat16", "float32"),
        ("float16", "float32", "float32"),
        ("float16", "float64", "float64"),
        ("bfloat16", "bfloat16", "bfloat16"),
        ("bfloat16", "float32", "float32"),
        ("bfloat16", "float64", "float64"),
        ("float32", "float32", "float32"),
        ("float32", "float64", "float64"),
        ("float64", "float64", "float64"),
    ];

    #[test]
    fn every_pair_matches_the_expected_table_in_both_orders() {
        let name = |d: DType| d.name();
        let mut covered = 0;
        for a in DType::ALL {
            for b in DType::ALL {
                let want = EXPECTED
                    .iter()
                    .find(|(x, y, _)| {
                        (*x, *y) == (name(a), name(b)) || (*y, *x) == (name(a), name(b))
                    })
                    .map(|e| e.2)
                    .unwrap_or_else(|| panic!("no expected entry for {a}, {b}"));
                let got = result_type(a, b).map(name).unwrap_or("error");
                assert_eq!(got, want, "result_type({a}, {b})");
                assert_eq!(result_type(a, b), result_type(b, a), "symmetry at {a}, {b}");
                covered += 1;
            }
        }
        assert_eq!(covered, DType::ALL.len() * DType::ALL.len());
        assert_eq!(
            EXPECTED.len(),
            N * (N + 1) / 2,
            "one entry per unordered pair"
        );
        assert!(matches!(
            result_type(DType::U8, DType::I8),
            Err(TesseraError::DType(_))
        ));
    }

    #[test]
    fn symmetric_and_idempotent() {
        for a in DType::ALL {
            assert_eq!(result_type(a, a).unwrap(), a);
            for b in DType::ALL {
                assert_eq!(result_type(a, b), result_type(b, a));
            }
        }
    }

    #[test]
    fn bf16_rules_follow_pytorch() {
        use DType::*;
        for (b, want) in [(Bool, BF16), (U8, BF16), (I8, BF16), (I32, F64), (I64, F64)] {
            assert_eq!(result_type(BF16, b).unwrap(), want);
        }
        for (b, want) in [(F16, F32), (F32, F32), (F64, F64)] {
            assert_eq!(result_type(BF16, b).unwrap(), want);
        }
    }
}
