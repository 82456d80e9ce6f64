//! Facts about dtypes, as the Python array API standard asks for them: [`finfo`] and
//! [`iinfo`] (limits of the float and integer types), [`isdtype`] (membership in a kind such as
//! `"integral"`), [`can_cast`] and [`result_type_of`] (promotion of several dtypes and weak
//! scalars at once).

use half::{bf16, f16};

use crate::dtype::{DType, Scalar};
use crate::error::{DTypeFacts, ErrorKind, Result, TesseraError};
use crate::promote::{result_type, result_type_scalar};

/// Limits of a floating-point dtype (the standard's `finfo` object). For a complex dtype they
/// are those of its real parts, and `dtype` is that real dtype (NumPy, the standard).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FInfo {
    /// Bits of one (real) value.
    pub bits: u32,
    /// The difference between 1.0 and the next larger representable value.
    pub eps: f64,
    /// The largest finite value.
    pub max: f64,
    /// The smallest (most negative) finite value.
    pub min: f64,
    /// The smallest positive normal value.
    pub smallest_normal: f64,
    /// The real floating-point dtype the limits describe.
    pub dtype: DType,
}

/// Limits of an integer dtype (the standard's `iinfo` object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IInfo {
    /// Bits of one value.
    pub bits: u32,
    /// The largest value.
    pub max: i128,
    /// The smallest value.
    pub min: i128,
    /// The integer dtype.
    pub dtype: DType,
}

/// The real dtype of the parts of a complex dtype (`complex64 -> float32`); other dtypes are
/// returned unchanged.
pub const fn real_dtype(d: DType) -> DType {
    match d {
        DType::C64 => DType::F32,
        DType::C128 => DType::F64,
        d => d,
    }
}

/// The complex dtype whose parts have the float dtype `d` (`float16`/`bfloat16`/`float32` give
/// `complex64`, `float64` gives `complex128`); `None` for dtypes that are not floats.
pub const fn complex_of(d: DType) -> Option<DType> {
    match d {
        DType::F16 | DType::BF16 | DType::F32 => Some(DType::C64),
        DType::F64 => Some(DType::C128),
        DType::C64 | DType::C128 => Some(d),
        _ => None,
    }
}

/// The limits of a float or complex dtype; [`ErrorKind::DType`] for others (the standard's
/// `finfo` takes floating-point dtypes only).
///
/// ```
/// use tessera::{dtype_info::finfo, DType};
/// assert_eq!(finfo(DType::F32).unwrap().eps, f32::EPSILON as f64);
/// assert_eq!(finfo(DType::C128).unwrap().dtype, DType::F64);
/// assert!(finfo(DType::I32).is_err());
/// ```
pub fn finfo(d: DType) -> Result<FInfo> {
    let r = real_dtype(d);
    let (bits, eps, max, smallest_normal) = match r {
        DType::F16 => (
            16,
            f16::EPSILON.to_f64(),
            f16::MAX.to_f64(),
            f16::MIN_POSITIVE.to_f64(),
        ),
        DType::BF16 => (
            16,
            bf16::EPSILON.to_f64(),
            bf16::MAX.to_f64(),
            bf16::MIN_POSITIVE.to_f64(),
        ),
        DType::F32 => (
            32,
            f32::EPSILON as f64,
            f32::MAX as f64,
            f32::MIN_POSITIVE as f64,
        ),
        DType::F64 => (64, f64::EPSILON, f64::MAX, f64::MIN_POSITIVE),
        _ => {
            return Err(unsupported(
                "finfo",
                d,
                " (finfo takes a floating-point dtype)",
            ))
        }
    };
    Ok(FInfo {
        bits,
        eps,
        max,
        min: -max,
        smallest_normal,
        dtype: r,
    })
}

/// The limits of an integer dtype; [`ErrorKind::DType`] for others (`bool` included, as
/// NumPy and the standard).
///
/// ```
/// use tessera::{dtype_info::iinfo, DType};
/// assert_eq!(iinfo(DType::U64).unwrap().max, u64::MAX as i128);
/// assert_eq!(iinfo(DType::I16).unwrap().min, -32768);
/// assert!(iinfo(DType::Bool).is_err());
/// ```
pub fn iinfo(d: DType) -> Result<IInfo> {
    let (min, max) = match d {
        DType::U8 => (0, u8::MAX as i128),
        DType::U16 => (0, u16::MAX as i128),
        DType::U32 => (0, u32::MAX as i128),
        DType::U64 => (0, u64::MAX as i128),
        DType::I8 => (i8::MIN as i128, i8::MAX as i128),
        DType::I16 => (i16::MIN as i128, i16::MAX as i128),
        DType::I32 => (i32::MIN as i128, i32::MAX as i128),
        DType::I64 => (i64::MIN as i128, i64::MAX as i128),
        _ => return Err(unsupported("iinfo", d, " (iinfo takes an integer dtype)")),
    };
    Ok(IInfo {
        bits: 8 * d.itemsize() as u32,
        max,
        min,
        dtype: d,
    })
}

/// A kind of dtype, as the standard's `isdtype` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DTypeKind {
    /// `"bool"`.
    Bool,
    /// `"signed integer"`.
    SignedInteger,
    /// `"unsigned integer"`.
    UnsignedInteger,
    /// `"integral"`: signed or unsigned integers.
    Integral,
    /// `"real floating"` (`float16` and `bfloat16` included, as extensions).
    RealFloating,
    /// `"complex floating"`.
    ComplexFloating,
    /// `"numeric"`: every dtype but `bool`.
    Numeric,
}

impl DTypeKind {
    /// The kind named `name` (the standard's spelling), or [`ErrorKind::InvalidArgument`].
    pub fn from_name(name: &str) -> Result<DTypeKind> {
        Ok(match name {
            "bool" => DTypeKind::Bool,
            "signed integer" => DTypeKind::SignedInteger,
            "unsigned integer" => DTypeKind::UnsignedInteger,
            "integral" => DTypeKind::Integral,
            "real floating" => DTypeKind::RealFloating,
            "complex floating" => DTypeKind::ComplexFloating,
            "numeric" => DTypeKind::Numeric,
            _ => {
                return Err(ErrorKind::InvalidArgument(format!(
                    "unknown dtype kind {name:?}; expected one of 'bool', 'signed integer', \
                     'unsigned integer', 'integral', 'real floating', 'complex floating', \
                     'numeric'"
                ))
                .into())
            }
        })
    }
}

/// Whether `d` is of kind `kind` (the standard's `isdtype` for one kind).
///
/// ```
/// use tessera::{dtype_info::{isdtype, DTypeKind}, DType};
/// assert!(isdtype(DType::U16, DTypeKind::Integral));
/// assert!(!isdtype(DType::Bool, DTypeKind::Numeric));
/// assert!(isdtype(DType::C64, DTypeKind::ComplexFloating));
/// ```
pub fn isdtype(d: DType, kind: DTypeKind) -> bool {
    match kind {
        DTypeKind::Bool => d == DType::Bool,
        DTypeKind::SignedInteger => d.is_signed_integer(),
        DTypeKind::UnsignedInteger => d.is_unsigned_integer(),
        DTypeKind::Integral => d.is_integer(),
        DTypeKind::RealFloating => d.is_float(),
        DTypeKind::ComplexFloating => d.is_complex(),
        DTypeKind::Numeric => d != DType::Bool,
    }
}

/// Whether `from` can be cast to `to` by the promotion rules: `result_type(from, to) == to`
/// (the standard's `can_cast`; it agrees with NumPy's `casting="safe"` on the standard's
/// dtypes).
///
/// ```
/// use tessera::{dtype_info::can_cast, DType};
/// assert!(can_cast(DType::I16, DType::F32));
/// assert!(!can_cast(DType::I32, DType::F32));
/// assert!(!can_cast(DType::U64, DType::I64));
/// ```
pub fn can_cast(from: DType, to: DType) -> bool {
    result_type(from, to).is_ok_and(|r| r == to)
}

/// A weak Python-style scalar operand of [`result_type_of`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WeakScalar {
    /// A `bool`, `int` or `float`.
    Real(Scalar),
    /// A `complex`.
    Complex,
}

/// The result dtype of several dtypes and weak scalars (the standard's `result_type`): the
/// dtypes promoted pairwise, then each scalar applied weakly. At least one dtype is needed
/// ([`ErrorKind::InvalidArgument`] otherwise, as the standard).
///
/// A complex scalar keeps a complex dtype, turns a float dtype into the complex dtype of its
/// precision and an integer or bool dtype into `complex128` (NumPy 2).
pub fn result_type_of(dtypes: &[DType], scalars: &[WeakScalar]) -> Result<DType> {
    let (first, rest) = dtypes.split_first().ok_or_else(|| {
        ErrorKind::InvalidArgument(
            "result_type needs at least one array or dtype (scalars alone have no dtype)".into(),
        )
    })?;
    let mut d = *first;
    for &o in rest {
        d = result_type(d, o)?;
    }
    for s in scalars {
        d = match s {
            WeakScalar::Real(s) => result_type_scalar(d, *s)?,
            WeakScalar::Complex => complex_of(d).unwrap_or(DType::C128),
        };
    }
    Ok(d)
}

fn unsupported(op: &str, d: DType, hint: &'static str) -> TesseraError {
    ErrorKind::DType(DTypeFacts::Unsupported {
        op: op.into(),
        dtype: d,
        hint,
    })
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_the_ieee_values() {
        let h = finfo(DType::F16).unwrap();
        assert_eq!(
            (h.bits, h.eps, h.max, h.smallest_normal),
            (16, 0.0009765625, 65504.0, 6.103515625e-05)
        );
        let b = finfo(DType::BF16).unwrap();
        assert_eq!(
            (b.eps, b.smallest_normal),
            (0.0078125, 1.1754943508222875e-38)
        );
        assert_eq!(finfo(DType::C64).unwrap(), finfo(DType::F32).unwrap());
        assert_eq!(iinfo(DType::I64).unwrap().bits, 64);
        assert!(iinfo(DType::F32).is_err());
        assert!(finfo(DType::U8).is_err());
    }

    #[test]
    fn can_cast_is_promotion_to_the_target() {
        for a in DType::ALL {
            assert!(can_cast(DType::Bool, a));
            assert!(can_cast(a, a));
            for b in DType::ALL {
                assert_eq!(can_cast(a, b), result_type(a, b).ok() == Some(b), "{a} {b}");
            }
        }
        assert!(can_cast(DType::F32, DType::C64));
        assert!(!can_cast(DType::F64, DType::C64));
        assert!(!can_cast(DType::C64, DType::F64));
    }

    #[test]
    fn result_type_of_many() {
        use DType::*;
        assert_eq!(result_type_of(&[U8, I8, U16], &[]).unwrap(), I32);
        assert_eq!(result_type_of(&[F32], &[WeakScalar::Complex]).unwrap(), C64);
        assert_eq!(
            result_type_of(&[I32], &[WeakScalar::Complex]).unwrap(),
            C128
        );
        assert_eq!(
            result_type_of(&[I8], &[WeakScalar::Real(Scalar::Float(1.0))]).unwrap(),
            F64
        );
        assert!(result_type_of(&[], &[WeakScalar::Complex]).is_err());
        assert!(DTypeKind::from_name("float").is_err());
    }
}
