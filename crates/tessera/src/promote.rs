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
use crate::error::{Result, TesseraError};

/// Kind order used for the weak-scalar rules.
fn kind(d: DType) -> u8 {
    if d == DType::Bool {
        0
    } else if d.is_integer() {
        1
    } else {
        2
    }
}

/// The dtype a binary operation on `a` and `b` computes in (NumPy 2's `np.result_type`; see
/// the [module docs](self) for the choices where NumPy has no answer in Tessera's dtypes).
///
/// ```
/// use tessera::{promote::result_type, DType};
/// assert_eq!(result_type(DType::I32, DType::F32).unwrap(), DType::F64);
/// assert_eq!(result_type(DType::BF16, DType::F16).unwrap(), DType::F32);
/// assert!(result_type(DType::U8, DType::I8).is_err()); // NumPy: int16, which we lack
/// ```
pub fn result_type(a: DType, b: DType) -> Result<DType> {
    use DType::*;
    if a == b {
        return Ok(a);
    }
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    // `DType` is ordered Bool < U8 < I8 < I32 < I64 < F16 < BF16 < F32 < F64.
    Ok(match (lo, hi) {
        (Bool, x) => x,
        (U8, I8) => {
            return Err(TesseraError::DType(
                "uint8 and int8 promote to int16, which tessera lacks; cast one operand first"
                    .into(),
            ))
        }
        (U8 | I8, I32 | I64) | (I32, I64) => hi,
        (U8 | I8, F16 | BF16 | F32 | F64) => hi,
        (I32 | I64, F16 | BF16 | F32 | F64) => F64,
        (F16, BF16) => F32,
        (F16 | BF16 | F32, _) => hi,
        _ => hi,
    })
}

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
        Scalar::Float(_) if kind(d) == 2 => Ok(d),
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
        f => f,
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
        _ => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
