//! The complex element types: [`C64`] and [`C128`], `#[repr(transparent)]` newtypes over
//! [`num_complex::Complex<f32>`] and `Complex<f64>`, so their memory is NumPy's `complex64`
//! and `complex128` (the real part, then the imaginary part, each a native float).
//!
//! They are [`Element`]s like every other dtype (docs/design.md, section D): `PartialOrd` is
//! NumPy's lexicographic order (real parts first, then imaginary parts; unordered when a part
//! is NaN), `to_f64` takes the real part and `from_f64` makes a value with a zero imaginary
//! part. Casts between complex types keep both parts through
//! [`Element::to_complex`]/[`Element::from_complex`].

use std::cmp::Ordering;

use num_complex::Complex;

use crate::dtype::{sealed, DType, Element, Scalar};

macro_rules! complex_element {
    ($(#[$m:meta])* $name:ident($f:ty) => $d:ident) => {
        $(#[$m])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name(pub Complex<$f>);

        impl $name {
            /// The value `re + im·i`.
            pub const fn new(re: $f, im: $f) -> Self {
                $name(Complex::new(re, im))
            }
            /// The real part.
            pub const fn re(self) -> $f {
                self.0.re
            }
            /// The imaginary part.
            pub const fn im(self) -> $f {
                self.0.im
            }
        }

        impl PartialOrd for $name {
            /// NumPy's order: by real part, then by imaginary part.
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                match self.0.re.partial_cmp(&o.0.re)? {
                    Ordering::Equal => self.0.im.partial_cmp(&o.0.im),
                    ord => Some(ord),
                }
            }
        }

        impl sealed::Sealed for $name {}
        impl Element for $name {
            const DTYPE: DType = DType::$d;
            fn to_f64(self) -> f64 {
                self.0.re as f64
            }
            fn from_f64(v: f64) -> Self {
                $name::new(v as $f, 0.0)
            }
            fn to_i64(self) -> i64 {
                self.0.re as i64
            }
            fn from_i64(v: i64) -> Self {
                $name::new(v as $f, 0.0)
            }
            fn to_scalar(self) -> Scalar {
                Scalar::Float(self.0.re as f64)
            }
            fn to_complex(self) -> (f64, f64) {
                (self.0.re as f64, self.0.im as f64)
            }
            fn from_complex(re: f64, im: f64) -> Self {
                $name::new(re as $f, im as $f)
            }
        }

        impl From<Complex<$f>> for $name {
            fn from(z: Complex<$f>) -> Self {
                $name(z)
            }
        }
    };
}

complex_element!(
    /// A `complex64` element: two `f32`s (NumPy's layout).
    C64(f32) => C64
);
complex_element!(
    /// A `complex128` element: two `f64`s (NumPy's layout).
    C128(f64) => C128
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_numpys() {
        assert_eq!(std::mem::size_of::<C64>(), 8);
        assert_eq!(std::mem::align_of::<C64>(), 4);
        assert_eq!(std::mem::size_of::<C128>(), 16);
        let z = [C64::new(1.5, -2.0)];
        // SAFETY: C64 is repr(transparent) over Complex<f32>, which is repr(C) { re, im }.
        let parts: &[f32; 2] = unsafe { &*(z.as_ptr() as *const [f32; 2]) };
        assert_eq!(parts, &[1.5, -2.0]);
    }

    #[test]
    fn order_is_lexicographic_and_nan_unordered() {
        assert!(C128::new(1.0, 5.0) < C128::new(2.0, -5.0));
        assert!(C128::new(1.0, -1.0) < C128::new(1.0, 0.0));
        assert_eq!(
            C128::new(f64::NAN, 0.0).partial_cmp(&C128::new(0.0, 0.0)),
            None
        );
        assert_eq!(
            C64::new(0.0, f32::NAN).partial_cmp(&C64::new(0.0, 0.0)),
            None
        );
        assert_eq!(C64::new(3.0, 4.0).to_complex(), (3.0, 4.0));
        assert_eq!(C64::from_f64(2.0), C64::new(2.0, 0.0));
    }
}
