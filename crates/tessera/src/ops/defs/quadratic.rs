//! `quadratic` (seed 003): f(x) = a·x² + b·x + c, and its gradient `_backward_quadratic`.

use crate::op_params;
use crate::ops::registry::{OpDef, Registry};
use crate::ops::stype::{dense_stype, TensorMeta};
use crate::promote::result_type_scalar;
use crate::tensor::Tensor;
use crate::{DType, Result, Scalar, TesseraError};

op_params! {
    /// Parameters of `quadratic` and `_backward_quadratic` (as in seed 003).
    pub struct QuadraticParams {
        /// Coefficient of the quadratic term.
        a: f64 = 0.0;
        /// Coefficient of the linear term.
        b: f64 = 0.0;
        /// Constant term.
        c: f64 = 0.0;
    }
}

/// Output dtype: floats keep theirs; integers and bool give float64 (NumPy's
/// `a * x**2 + b * x + c` with float coefficients).
fn out_dtype(d: DType) -> Result<DType> {
    result_type_scalar(d, Scalar::Float(0.0))
}

fn quadratic(p: &QuadraticParams, x: &Tensor) -> Result<Tensor> {
    let (a, b, c) = (p.a, p.b, p.c);
    x.map_f64(out_dtype(x.dtype())?, move |v| a * v * v + b * v + c)
}

fn backward(p: &QuadraticParams, grad: &Tensor, x: &Tensor) -> Result<Tensor> {
    if grad.shape() != x.shape() {
        return Err(TesseraError::ShapeMismatch(format!(
            "_backward_quadratic: output gradient {:?} and input {:?} differ",
            grad.shape(),
            x.shape()
        )));
    }
    let (a, b) = (p.a, p.b);
    let slope = x.map_f64(out_dtype(x.dtype())?, move |v| 2.0 * a * v + b)?;
    slope.mul(grad)
}

pub(super) fn register(r: &mut Registry) {
    r.add(OpDef::<QuadraticParams> {
        name: "quadratic",
        doc: "f(x) = a*x^2 + b*x + c elementwise (seed 003). On csr input with c = 0 the output \
              keeps the sparsity; otherwise the output is dense.",
        inputs: &["data"],
        outputs: &["output"],
        infer: |_, m| {
            Ok(vec![TensorMeta::dense(
                m[0].shape.clone(),
                out_dtype(m[0].dtype)?,
            )])
        },
        infer_stype: dense_stype,
        dense: |p, x| Ok(vec![quadratic(p, &x[0])?]),
        sparse: None,
        inplace: &[(0, 0)],
        mutates: &[],
        forward_only: false,
        stateful: false,
        gradient: Some("_backward_quadratic"),
    });
    r.add(OpDef::<QuadraticParams> {
        name: "_backward_quadratic",
        doc: "Gradient of quadratic: grad_in = grad_out * (2*a*x + b).",
        inputs: &["grad_output", "data"],
        outputs: &["grad_data"],
        infer: |_, m| {
            let d = out_dtype(m[1].dtype)?;
            Ok(vec![TensorMeta::dense(
                m[1].shape.clone(),
                crate::promote::result_type(d, m[0].dtype)?,
            )])
        },
        infer_stype: |_, s| crate::ops::StypeDecision::dense_only(s, 1),
        dense: |p, x| Ok(vec![backward(p, &x[0], &x[1])?]),
        sparse: None,
        inplace: &[],
        mutates: &[],
        forward_only: false,
        stateful: false,
        gradient: None,
    });
}
