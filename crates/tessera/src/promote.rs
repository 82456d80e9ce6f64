//! Type promotion: which dtype an operation on two dtypes (or a dtype and a Python-style
//! scalar) computes in.
//!
//! The table is the Python array API standard's (revision 2024.12) wherever the standard
//! defines a result, and NumPy 2's (`np.result_type`) where it is silent, with one exception:
//!
//! - Same kind (bool/bool, signed/signed, unsigned/unsigned, float/float): the wider type.
//! - Signed with unsigned integer (the standard's table): the smallest signed type holding
//!   both, e.g. `uint8 + int8 -> int16`, `uint32 + int32 -> int64`.
//! - `uint64` with a signed integer has no type holding both. The standard leaves it
//!   undefined and NumPy gives `float64`, which silently loses integer precision; Tessera
//!   raises [`ErrorKind::DType`] (as array-api-strict does): cast one operand explicitly.
//! - `bool` with anything (mixed kinds, undefined by the standard): the other type (NumPy).
//! - Mixed integer and float (undefined by the standard): NumPy's rule, the smallest float
//!   that holds every value of the integer type: `u8`/`i8` with `f16` give `f16`,
//!   `u16`/`i16` with `f16` give `f32`, 32- and 64-bit integers with `f16`/`f32` give `f64`.
//! - Complex with anything: the complex type whose parts hold the other type's values as
//!   the real/float rules say (`complex64 + float64 -> complex128`, `complex64 + int32 ->
//!   complex128` as NumPy, `complex64 + float16 -> complex64`).
//! - `f16` and `bf16` are extensions outside the standard's table. `bf16` (not in NumPy)
//!   follows `f16`'s rules (it holds every `u8`/`i8` value exactly, as `f16` does) and
//!   `bf16` with `f16` gives `f32` (PyTorch).
//!
//! Scalars are *weak* (NEP 50, the array API standard): they take the tensor's dtype when
//! their kind fits. See [`result_type_scalar`].

use crate::dtype::{DType, Scalar};
use crate::error::{DTypeFacts, ErrorKind, Result};

/// The dtype a binary operation on `a` and `b` computes in (the array API standard's table,
/// NumPy 2's `np.result_type` where the standard is silent; see the [module docs](self)).
/// Looked up in a table (`TABLE` in this module); `uint64` with a signed integer is a
/// [`ErrorKind::DType`] error.
///
/// ```
/// use tessera::{promote::result_type, DType};
/// assert_eq!(result_type(DType::I32, DType::F32).unwrap(), DType::F64);
/// assert_eq!(result_type(DType::BF16, DType::F16).unwrap(), DType::F32);
/// assert_eq!(result_type(DType::U8, DType::I8).unwrap(), DType::I16);
/// assert!(result_type(DType::U64, DType::I64).is_err()); // NumPy: float64
/// ```
pub fn result_type(a: DType, b: DType) -> Result<DType> {
    TABLE[row(a)][row(b)].ok_or_else(|| {
        // Named in row order so the message does not depend on the operand order.
        let (x, y) = if row(a) <= row(b) { (a, b) } else { (b, a) };
        ErrorKind::DType(DTypeFacts::NoPromotion {
            lhs: x,
            rhs: y,
            numpy: "float64",
        })
        .into()
    })
}

/// The row (and column) of a dtype in [`TABLE`]. Exhaustive on purpose: a new dtype does not
/// compile until it has a row and a column.
const fn row(d: DType) -> usize {
    match d {
        DType::Bool => 0,
        DType::U8 => 1,
        DType::I8 => 2,
        DType::U16 => 3,
        DType::I16 => 4,
        DType::U32 => 5,
        DType::I32 => 6,
        DType::U64 => 7,
        DType::I64 => 8,
        DType::F16 => 9,
        DType::BF16 => 10,
        DType::F32 => 11,
        DType::F64 => 12,
        DType::C64 => 13,
        DType::C128 => 14,
    }
}

/// Number of dtypes in [`TABLE`].
const N: usize = 15;

/// The promotion table: `TABLE[row(a)][row(b)]` is `result_type(a, b)`, `None` where the
/// standard defines no result and Tessera refuses NumPy's lossy one (`uint64` with a signed
/// integer). Symmetric (a test checks it), written out in full so that no rule depends on the
/// declaration order of [`DType`]. To add a dtype, give it a `row`, add its column to every
/// row and its row at the end (and extend the test's expected table).
#[rustfmt::skip]
const TABLE: [[Option<DType>; N]; N] = {
    use DType::*;
    const X: Option<DType> = None;
    const B1: Option<DType> = Some(Bool);
    const U8_: Option<DType> = Some(U8);
    const I8_: Option<DType> = Some(I8);
    const U16_: Option<DType> = Some(U16);
    const I16_: Option<DType> = Some(I16);
    const U32_: Option<DType> = Some(U32);
    const I32_: Option<DType> = Some(I32);
    const U64_: Option<DType> = Some(U64);
    const I64_: Option<DType> = Some(I64);
    const F16_: Option<DType> = Some(F16);
    const BF16_: Option<DType> = Some(BF16);
    const F32_: Option<DType> = Some(F32);
    const F64_: Option<DType> = Some(F64);
    const C64_: Option<DType> = Some(C64);
    const C128_: Option<DType> = Some(C128);
    [
        //          bool   u8     i8     u16    i16    u32    i32    u64    i64    f16    bf16   f32    f64   c64    c128
        /* bool */ [B1,    U8_,   I8_,   U16_,  I16_,  U32_,  I32_,  U64_,  I64_,  F16_,  BF16_, F32_,  F64_,  C64_,  C128_],
        /* u8   */ [U8_,   U8_,   I16_,  U16_,  I16_,  U32_,  I32_,  U64_,  I64_,  F16_,  BF16_, F32_,  F64_,  C64_,  C128_],
        /* i8   */ [I8_,   I16_,  I8_,   I32_,  I16_,  I64_,  I32_,  X,     I64_,  F16_,  BF16_, F32_,  F64_,  C64_,  C128_],
        /* u16  */ [U16_,  U16_,  I32_,  U16_,  I32_,  U32_,  I32_,  U64_,  I64_,  F32_,  F32_,  F32_,  F64_,  C64_,  C128_],
        /* i16  */ [I16_,  I16_,  I16_,  I32_,  I16_,  I64_,  I32_,  X,     I64_,  F32_,  F32_,  F32_,  F64_,  C64_,  C128_],
        /* u32  */ [U32_,  U32_,  I64_,  U32_,  I64_,  U32_,  I64_,  U64_,  I64_,  F64_,  F64_,  F64_,  F64_,  C128_, C128_],
        /* i32  */ [I32_,  I32_,  I32_,  I32_,  I32_,  I64_,  I32_,  X,     I64_,  F64_,  F64_,  F64_,  F64_,  C128_, C128_],
        /* u64  */ [U64_,  U64_,  X,     U64_,  X,     U64_,  X,     U64_,  X,     F64_,  F64_,  F64_,  F64_,  C128_, C128_],
        /* i64  */ [I64_,  I64_,  I64_,  I64_,  I64_,  I64_,  I64_,  X,     I64_,  F64_,  F64_,  F64_,  F64_,  C128_, C128_],
        /* f16  */ [F16_,  F16_,  F16_,  F32_,  F32_,  F64_,  F64_,  F64_,  F64_,  F16_,  F32_,  F32_,  F64_,  C64_,  C128_],
        /* bf16 */ [BF16_, BF16_, BF16_, F32_,  F32_,  F64_,  F64_,  F64_,  F64_,  F32_,  BF16_, F32_,  F64_,  C64_,  C128_],
        /* f32  */ [F32_,  F32_,  F32_,  F32_,  F32_,  F64_,  F64_,  F64_,  F64_,  F32_,  F32_,  F32_,  F64_,  C64_,  C128_],
        /* f64  */ [F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  F64_,  C128_, C128_],
        /* c64  */ [C64_,  C64_,  C64_,  C64_,  C64_,  C128_, C128_, C128_, C128_, C64_,  C64_,  C64_,  C128_, C64_,  C128_],
        /* c128 */ [C128_, C128_, C128_, C128_, C128_, C128_, C128_, C128_, C128_, C128_, C128_, C128_, C128_, C128_, C128_],
    ]
};

/// The dtype of `tensor ⊕ scalar` for a tensor of dtype `d` (weak scalars, NEP 50):
///
/// - a `bool` scalar never changes `d`;
/// - an integer scalar keeps `d` unless `d` is `bool` (then `i64`); it must fit in an integer
///   `d`, else [`ErrorKind::InvalidArgument`] (NumPy raises `OverflowError`);
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
                    Err(ErrorKind::InvalidArgument(format!(
                        "integer scalar {v} out of bounds for {d}"
                    ))
                    .into())
                }
            }
            _ => Ok(d),
        },
        Scalar::Float(_) if d.is_float() || d.is_complex() => Ok(d),
        Scalar::Float(_) => Ok(DType::F64),
    }
}

/// The float dtype an integer or bool input computes in for float-only unary functions
/// (`sqrt`, `exp`, ...): NumPy's choice, `result_type(d, f16)`: `bool`/`u8`/`i8` give
/// `f16`, `u16`/`i16` give `f32`, wider integers `f64`. Float dtypes are kept.
pub fn float_result(d: DType) -> DType {
    match d {
        DType::Bool | DType::U8 | DType::I8 => DType::F16,
        DType::U16 | DType::I16 => DType::F32,
        DType::U32 | DType::I32 | DType::U64 | DType::I64 => DType::F64,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128 => d,
    }
}

/// The inclusive value range of an integer dtype as `i64`s (`[0, 1]` for bool; `uint64`'s
/// upper end is clipped to `i64::MAX`, the largest integer scalar; `[0, 0]` for floats, which
/// have no integer range).
fn int_range(d: DType) -> (i64, i64) {
    match d {
        DType::Bool => (0, 1),
        DType::U8 => (0, u8::MAX as i64),
        DType::I8 => (i8::MIN as i64, i8::MAX as i64),
        DType::U16 => (0, u16::MAX as i64),
        DType::I16 => (i16::MIN as i64, i16::MAX as i64),
        DType::U32 => (0, u32::MAX as i64),
        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
        DType::U64 => (0, i64::MAX),
        DType::I64 => (i64::MIN, i64::MAX),
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128 => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair, written independently of [`TABLE`]: generated once from NumPy 2's
    /// `np.result_type` by dtype name, `"error"` for `uint64` with a signed integer (the
    /// standard: no result; NumPy: float64), bfloat16's rows by the module docs' rule.
    const EXPECTED: &[(&str, &str, &str)] = &[
        ("bool", "bool", "bool"),
        ("bool", "uint8", "uint8"),
        ("bool", "int8", "int8"),
        ("bool", "uint16", "uint16"),
        ("bool", "int16", "int16"),
        ("bool", "uint32", "uint32"),
        ("bool", "int32", "int32"),
        ("bool", "uint64", "uint64"),
        ("bool", "int64", "int64"),
        ("bool", "float16", "float16"),
        ("bool", "bfloat16", "bfloat16"),
        ("bool", "float32", "float32"),
        ("bool", "float64", "float64"),
        ("uint8", "uint8", "uint8"),
        ("uint8", "int8", "int16"),
        ("uint8", "uint16", "uint16"),
        ("uint8", "int16", "int16"),
        ("uint8", "uint32", "uint32"),
        ("uint8", "int32", "int32"),
        ("uint8", "uint64", "uint64"),
        ("uint8", "int64", "int64"),
        ("uint8", "float16", "float16"),
        ("uint8", "bfloat16", "bfloat16"),
        ("uint8", "float32", "float32"),
        ("uint8", "float64", "float64"),
        ("int8", "int8", "int8"),
        ("int8", "uint16", "int32"),
        ("int8", "int16", "int16"),
        ("int8", "uint32", "int64"),
        ("int8", "int32", "int32"),
        ("int8", "uint64", "error"),
        ("int8", "int64", "int64"),
        ("int8", "float16", "float16"),
        ("int8", "bfloat16", "bfloat16"),
        ("int8", "float32", "float32"),
        ("int8", "float64", "float64"),
        ("uint16", "uint16", "uint16"),
        ("uint16", "int16", "int32"),
        ("uint16", "uint32", "uint32"),
        ("uint16", "int32", "int32"),
        ("uint16", "uint64", "uint64"),
        ("uint16", "int64", "int64"),
        ("uint16", "float16", "float32"),
        ("uint16", "bfloat16", "float32"),
        ("uint16", "float32", "float32"),
        ("uint16", "float64", "float64"),
        ("int16", "int16", "int16"),
        ("int16", "uint32", "int64"),
        ("int16", "int32", "int32"),
        ("int16", "uint64", "error"),
        ("int16", "int64", "int64"),
        ("int16", "float16", "float32"),
        ("int16", "bfloat16", "float32"),
        ("int16", "float32", "float32"),
        ("int16", "float64", "float64"),
        ("uint32", "uint32", "uint32"),
        ("uint32", "int32", "int64"),
        ("uint32", "uint64", "uint64"),
        ("uint32", "int64", "int64"),
        ("uint32", "float16", "float64"),
        ("uint32", "bfloat16", "float64"),
        ("uint32", "float32", "float64"),
        ("uint32", "float64", "float64"),
        ("int32", "int32", "int32"),
        ("int32", "uint64", "error"),
        ("int32", "int64", "int64"),
        ("int32", "float16", "float64"),
        ("int32", "bfloat16", "float64"),
        ("int32", "float32", "float64"),
        ("int32", "float64", "float64"),
        ("uint64", "uint64", "uint64"),
        ("uint64", "int64", "error"),
        ("uint64", "float16", "float64"),
        ("uint64", "bfloat16", "float64"),
        ("uint64", "float32", "float64"),
        ("uint64", "float64", "float64"),
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
        ("bool", "complex64", "complex64"),
        ("bool", "complex128", "complex128"),
        ("uint8", "complex64", "complex64"),
        ("uint8", "complex128", "complex128"),
        ("int8", "complex64", "complex64"),
        ("int8", "complex128", "complex128"),
        ("uint16", "complex64", "complex64"),
        ("uint16", "complex128", "complex128"),
        ("int16", "complex64", "complex64"),
        ("int16", "complex128", "complex128"),
        ("uint32", "complex64", "complex128"),
        ("uint32", "complex128", "complex128"),
        ("int32", "complex64", "complex128"),
        ("int32", "complex128", "complex128"),
        ("uint64", "complex64", "complex128"),
        ("uint64", "complex128", "complex128"),
        ("int64", "complex64", "complex128"),
        ("int64", "complex128", "complex128"),
        ("float16", "complex64", "complex64"),
        ("float16", "complex128", "complex128"),
        ("bfloat16", "complex64", "complex64"),
        ("bfloat16", "complex128", "complex128"),
        ("float32", "complex64", "complex64"),
        ("float32", "complex128", "complex128"),
        ("float64", "complex64", "complex128"),
        ("float64", "complex128", "complex128"),
        ("complex64", "complex64", "complex64"),
        ("complex64", "complex128", "complex128"),
        ("complex128", "complex128", "complex128"),
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
            result_type(DType::U64, DType::I8)
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::DType(_))
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
        for (b, want) in [(Bool, BF16), (U8, BF16), (I8, BF16), (I16, F32), (U16, F32)] {
            assert_eq!(result_type(BF16, b).unwrap(), want);
        }
        for (b, want) in [(I32, F64), (U32, F64), (I64, F64), (U64, F64)] {
            assert_eq!(result_type(BF16, b).unwrap(), want);
        }
        for (b, want) in [(F16, F32), (F32, F32), (F64, F64)] {
            assert_eq!(result_type(BF16, b).unwrap(), want);
        }
    }
}
