//! `real`, `imag` and `conj` (kernels: `tensor/complex_parts.rs`). Not differentiable:
//! complex tensors do not record gradients (docs/design.md T4), and on a real input `real`
//! and `conj` are copies and `imag` zeros.

use super::shape_ops::NoParams;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;
use crate::tensor::complex_parts::ComplexPart;

const WHY: &str = "complex tensors do not record gradients (docs/design.md T4)";

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<NoParams>::new(
            "real",
            "The real part of each element (complex64 gives float32, complex128 float64); a copy for real dtypes.",
            &["x"],
            &["y"],
            |_, m| Ok(vec![TensorMeta::dense(m[0].shape.clone(), ComplexPart::Real.result_dtype(m[0].dtype))]),
            |_, x| Ok(vec![x[0].complex_part_dense(ComplexPart::Real)?]),
        )
        .not_differentiable(WHY),
    );
    r.add(
        OpDef::<NoParams>::new(
            "imag",
            "The imaginary part of each element (complex64 gives float32, complex128 float64); zeros for real dtypes.",
            &["x"],
            &["y"],
            |_, m| Ok(vec![TensorMeta::dense(m[0].shape.clone(), ComplexPart::Imag.result_dtype(m[0].dtype))]),
            |_, x| Ok(vec![x[0].complex_part_dense(ComplexPart::Imag)?]),
        )
        .not_differentiable(WHY),
    );
    r.add(
        OpDef::<NoParams>::new(
            "conj",
            "The complex conjugate of each element; a copy for real dtypes.",
            &["x"],
            &["y"],
            |_, m| Ok(vec![TensorMeta::dense(m[0].shape.clone(), m[0].dtype)]),
            |_, x| Ok(vec![x[0].complex_part_dense(ComplexPart::Conj)?]),
        )
        .not_differentiable(WHY),
    );
}
