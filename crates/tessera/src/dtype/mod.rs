//! Element types and the one dtype-dispatch mechanism every kernel uses.
//!
//! A [`DType`] names an element type at run time; the sealed [`Element`] trait ties each Rust
//! type to its `DType`. Kernels are written once, generic over `T: Element`, and reached from a
//! run-time dtype through [`with_dtype!`](crate::with_dtype), never through a hand-written `match`.

pub mod complex;

use std::fmt;

use half::{bf16, f16};

/// The run-time element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`, one byte holding 0 or 1.
    Bool,
    /// `u8`.
    U8,
    /// `i8`.
    I8,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// IEEE half precision ([`half::f16`]).
    F16,
    /// bfloat16 ([`half::bf16`]).
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `i16`.
    I16,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `complex64`: two `f32`s ([`C64`](crate::complex::C64)).
    C64,
    /// `complex128`: two `f64`s ([`C128`](crate::complex::C128)).
    C128,
}

impl DType {
    /// Every dtype, in a fixed order (useful for tests and docs).
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::U16,
        DType::I16,
        DType::U32,
        DType::I32,
        DType::U64,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// Size of one element in bytes.
    pub const fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// NumPy's name for the dtype (`bfloat16` for bf16, which NumPy lacks).
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// True for the four floating-point dtypes.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// True for `complex64` and `complex128`.
    pub const fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// True for the signed and unsigned integer dtypes (not `bool`).
    pub const fn is_integer(self) -> bool {
        self.is_signed_integer() || self.is_unsigned_integer()
    }

    /// True for `int8`, `int16`, `int32` and `int64`.
    pub const fn is_signed_integer(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    /// True for `uint8`, `uint16`, `uint32` and `uint64`.
    pub const fn is_unsigned_integer(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// Parses NumPy-style names (`"float32"`, `"f32"`, `"int64"`, `"bool"`, ...).
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "uint8" | "u8" => DType::U8,
            "int8" | "i8" => DType::I8,
            "int16" | "i16" => DType::I16,
            "uint16" | "u16" => DType::U16,
            "uint32" | "u32" => DType::U32,
            "uint64" | "u64" => DType::U64,
            "int32" | "i32" => DType::I32,
            "int64" | "i64" => DType::I64,
            "float16" | "f16" | "half" => DType::F16,
            "bfloat16" | "bf16" => DType::BF16,
            "float32" | "f32" | "float" => DType::F32,
            "float64" | "f64" | "double" => DType::F64,
            "complex64" | "c64" => DType::C64,
            "complex128" | "c128" | "complex" => DType::C128,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can be a tensor element.
///
/// Sealed: exactly the types of [`DType`]. Every implementor is valid for the all-zero
/// bit pattern (storage is zero-initialised), is `Copy`, and has no padding.
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + PartialEq + PartialOrd + fmt::Debug + Default + 'static
{
    /// The run-time tag of this type.
    const DTYPE: DType;
    /// Converts to `f64` (exact for every type but `i64`/`u64` beyond 2^53).
    fn to_f64(self) -> f64;
    /// Converts from `f64` with Rust `as` semantics (saturating for integers, NaN -> 0).
    fn from_f64(v: f64) -> Self;
    /// Converts to `i64` (floats truncate toward zero, saturating; `u64` wraps, so that
    /// `u64 -> i64 -> u64` is the identity).
    fn to_i64(self) -> i64;
    /// Converts from `i64` with Rust `as` semantics (wrapping for narrower integers).
    fn from_i64(v: i64) -> Self;
    /// The exact integer value of an integer or bool element (`uint64` included, which
    /// [`Element::to_i64`] wraps); floats truncate toward zero, saturating.
    fn to_i128(self) -> i128 {
        self.to_i64() as i128
    }
    /// Converts from a [`Scalar`], exactly for integer scalars into integer types.
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Bool(b) => Self::from_i64(b as i64),
            Scalar::Int(i) => Self::from_i64(i),
            Scalar::Float(x) => Self::from_f64(x),
        }
    }
    /// Wraps the value as a [`Scalar`] (the real part for complex types).
    fn to_scalar(self) -> Scalar;
    /// The value as `(real, imaginary)` parts in `f64` (imaginary 0 for real types).
    fn to_complex(self) -> (f64, f64) {
        (self.to_f64(), 0.0)
    }
    /// The element nearest `re + im·i`: real types drop the imaginary part (NumPy's cast).
    fn from_complex(re: f64, im: f64) -> Self {
        let _ = im;
        Self::from_f64(re)
    }
}

macro_rules! impl_int_element {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_f64(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> Self { v as $t }
            fn to_i64(self) -> i64 { self as i64 }
            fn from_i64(v: i64) -> Self { v as $t }
            fn to_scalar(self) -> Scalar { Scalar::Int(self as i64) }
        }
    )*};
}
impl_int_element!(u8 => U8, i8 => I8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64);

// `u64` is the one integer whose values do not all fit `i64`: `to_i64`/`from_i64` wrap (the
// bit pattern is kept), `to_f64` converts the unsigned value, and a value above `i64::MAX`
// becomes a `Scalar::Float` (the nearest `f64`), since `Scalar::Int` holds an `i64`.
impl sealed::Sealed for u64 {}
impl Element for u64 {
    const DTYPE: DType = DType::U64;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as u64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn to_i128(self) -> i128 {
        self as i128
    }
    fn from_i64(v: i64) -> Self {
        v as u64
    }
    fn to_scalar(self) -> Scalar {
        match i64::try_from(self) {
            Ok(i) => Scalar::Int(i),
            Err(_) => Scalar::Float(self as f64),
        }
    }
}

macro_rules! impl_float_element {
    ($($t:ty => $d:ident, $to:expr, $from:expr);*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_f64(self) -> f64 { ($to)(self) }
            fn from_f64(v: f64) -> Self { ($from)(v) }
            fn to_i64(self) -> i64 { ($to)(self) as i64 }
            fn from_i64(v: i64) -> Self { ($from)(v as f64) }
            fn to_scalar(self) -> Scalar { Scalar::Float(($to)(self)) }
        }
    )*};
}
impl_float_element!(
    f32 => F32, |x: f32| x as f64, |v: f64| v as f32;
    f64 => F64, |x: f64| x, |v: f64| v;
    f16 => F16, |x: f16| x.to_f64(), f16::from_f64;
    bf16 => BF16, |x: bf16| x.to_f64(), bf16::from_f64
);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    /// True when either part is non-zero (NaN included), as Python's `bool(complex)`.
    fn from_complex(re: f64, im: f64) -> Self {
        re != 0.0 || im != 0.0
    }
}

/// A dtype-erased single value, used for fills and scalar operands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// Any integer (kept exact up to `i64`).
    Int(i64),
    /// Any floating-point value.
    Float(f64),
}

impl Scalar {
    /// Converts to an element of type `T`.
    pub fn to<T: Element>(self) -> T {
        T::from_scalar(self)
    }
}

macro_rules! scalar_from {
    ($($t:ty => $v:ident as $as:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(x: $t) -> Self { Scalar::$v(x as $as) }
        }
    )*};
}
scalar_from!(u8 => Int as i64, i8 => Int as i64, i16 => Int as i64, u16 => Int as i64,
    i32 => Int as i64, u32 => Int as i64, i64 => Int as i64,
    usize => Int as i64, f32 => Float as f64, f64 => Float as f64);
impl From<bool> for Scalar {
    fn from(x: bool) -> Self {
        Scalar::Bool(x)
    }
}
impl From<f16> for Scalar {
    fn from(x: f16) -> Self {
        Scalar::Float(x.to_f64())
    }
}
impl From<bf16> for Scalar {
    fn from(x: bf16) -> Self {
        Scalar::Float(x.to_f64())
    }
}

/// Runs `$body` with the type alias `$T` bound to the Rust type of the run-time `$dtype`.
///
/// This is the crate's single dtype dispatch: every kernel is generic over
/// [`Element`] and reached through this macro.
///
/// ```
/// use tessera::{with_dtype, DType, Element};
/// fn size_of_dtype(d: DType) -> usize {
///     with_dtype!(d, T => std::mem::size_of::<T>())
/// }
/// assert_eq!(size_of_dtype(DType::BF16), 2);
/// assert_eq!(with_dtype!(DType::I32, T => T::DTYPE), DType::I32);
/// ```
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::U8 => {
                type $T = u8;
                $body
            }
            $crate::DType::I8 => {
                type $T = i8;
                $body
            }
            $crate::DType::I16 => {
                type $T = i16;
                $body
            }
            $crate::DType::U16 => {
                type $T = u16;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::DType::U32 => {
                type $T = u32;
                $body
            }
            $crate::DType::U64 => {
                type $T = u64;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::DType::F16 => {
                type $T = $crate::half::f16;
                $body
            }
            $crate::DType::BF16 => {
                type $T = $crate::half::bf16;
                $body
            }
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::DType::C64 => {
                type $T = $crate::complex::C64;
                $body
            }
            $crate::DType::C128 => {
                type $T = $crate::complex::C128;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itemsize_matches_rust_size() {
        for d in DType::ALL {
            assert_eq!(with_dtype!(d, T => std::mem::size_of::<T>()), d.itemsize());
            assert_eq!(with_dtype!(d, T => T::DTYPE), d);
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
    }

    #[test]
    fn scalar_conversion_is_exact_for_large_integers() {
        let big = (1i64 << 60) + 1;
        assert_eq!(Scalar::from(big).to::<i64>(), big);
        assert_eq!(Scalar::from(2.5f64).to::<f16>(), f16::from_f32(2.5));
        assert!(Scalar::from(3).to::<bool>());
    }
}
