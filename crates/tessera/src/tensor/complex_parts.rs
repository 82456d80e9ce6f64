//! The kernels of `real`, `imag` and `conj`: the parts of complex elements (NumPy's
//! `real`/`imag`/`conj`, the array API standard's). On a real dtype `real` and `conj` copy the
//! input and `imag` gives zeros of the input's dtype (NumPy).

use super::map::map_into;
use super::Tensor;
use crate::complex::{C128, C64};
use crate::dtype::DType;
use crate::dtype_info::real_dtype;
use crate::error::Result;

/// What `complex_part_dense` keeps of each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComplexPart {
    /// The real part (`real`).
    Real,
    /// The imaginary part (`imag`).
    Imag,
    /// The complex conjugate (`conj`).
    Conj,
}

impl ComplexPart {
    /// The dtype of the result for an input of dtype `d`: the parts' real dtype for `real`
    /// and `imag` of a complex input, else `d`.
    pub fn result_dtype(self, d: DType) -> DType {
        match self {
            ComplexPart::Conj => d,
            ComplexPart::Real | ComplexPart::Imag => real_dtype(d),
        }
    }
}

impl Tensor {
    /// The dense kernel of [`Tensor::real`], [`Tensor::imag`] and [`Tensor::conj`]: a new
    /// contiguous tensor of [`ComplexPart::result_dtype`].
    pub(crate) fn complex_part_dense(&self, part: ComplexPart) -> Result<Tensor> {
        let d = self.dtype();
        if !d.is_complex() {
            return match part {
                ComplexPart::Imag => Tensor::zeros(self.shape(), d),
                ComplexPart::Real | ComplexPart::Conj => self.astype_contiguous(d),
            };
        }
        let out = Tensor::for_overwrite(self.shape(), part.result_dtype(d))?;
        match (d, part) {
            (DType::C64, ComplexPart::Real) => map_into::<f32, C64>(&out, self, |_, z| z.re())?,
            (DType::C64, ComplexPart::Imag) => map_into::<f32, C64>(&out, self, |_, z| z.im())?,
            (DType::C64, ComplexPart::Conj) => {
                map_into::<C64, C64>(&out, self, |_, z| C64(z.0.conj()))?
            }
            (_, ComplexPart::Real) => map_into::<f64, C128>(&out, self, |_, z| z.re())?,
            (_, ComplexPart::Imag) => map_into::<f64, C128>(&out, self, |_, z| z.im())?,
            (_, ComplexPart::Conj) => map_into::<C128, C128>(&out, self, |_, z| C128(z.0.conj()))?,
        }
        Ok(out)
    }
}
