//! `real`, `imag` and `conj` methods of `Tensor`, each run through its registry op.

use std::slice;

use super::call1;
use crate::error::Result;
use crate::ops::defs::NoParams;
use crate::tensor::Tensor;

impl Tensor {
    /// The real part of each element: `complex64` gives `float32`, `complex128` gives
    /// `float64`; a copy for a real dtype.
    ///
    /// ```
    /// use tessera::{Tensor, C64};
    /// let z = Tensor::from_vec(vec![C64::new(1.0, -2.0)], &[1]).unwrap();
    /// assert_eq!(z.real().unwrap().to_vec::<f32>().unwrap(), vec![1.0]);
    /// assert_eq!(z.imag().unwrap().to_vec::<f32>().unwrap(), vec![-2.0]);
    /// assert_eq!(z.conj().unwrap().to_vec::<C64>().unwrap(), vec![C64::new(1.0, 2.0)]);
    /// ```
    pub fn real(&self) -> Result<Tensor> {
        call1("real", &NoParams {}, slice::from_ref(self))
    }

    /// The imaginary part of each element (dtypes as [`Tensor::real`]); zeros for a real
    /// dtype.
    pub fn imag(&self) -> Result<Tensor> {
        call1("imag", &NoParams {}, slice::from_ref(self))
    }

    /// The complex conjugate of each element; a copy for a real dtype.
    pub fn conj(&self) -> Result<Tensor> {
        call1("conj", &NoParams {}, slice::from_ref(self))
    }
}
