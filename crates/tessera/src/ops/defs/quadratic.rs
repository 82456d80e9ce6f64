//! `quadratic` (seed 003): f(x) = a·x² + b·x + c, and its gradient `_backward_quadratic`.

use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;
use crate::promote::result_type_scalar;
use crate::tensor::Tensor;
use crate::{DType, ErrorKind, Result, Scalar};

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
        return Err(ErrorKind::ShapeMismatch(
            format!(
                "_backward_quadratic: output gradient {:?} and input {:?} differ",
                grad.shape(),
                x.shape()
            )
            .into(),
        )
        .into());
    }
    let (a, b) = (p.a, p.b);
    let slope = x.map_f64(out_dtype(x.dtype())?, move |v| 2.0 * a * v + b)?;
    slope.binary_dense(grad, crate::tensor::arith::BinaryOp::Mul)
}

/// `_backward_quadratic`: registered, and called by `quadratic`'s backward rule.
fn backward_def() -> OpDef<QuadraticParams> {
    OpDef::<QuadraticParams>::new(
        "_backward_quadratic",
        "Gradient of quadratic: grad_in = grad_out * (2*a*x + b).",
        &["grad_output", "data"],
        &["grad_data"],
        |_, m| {
            let d = out_dtype(m[1].dtype)?;
            Ok(vec![TensorMeta::dense(
                m[1].shape.clone(),
                crate::promote::result_type(d, m[0].dtype)?,
            )])
        },
        |p, x| Ok(vec![backward(p, &x[0], &x[1])?]),
    )
    .not_differentiable("it is a gradient op; backward runs without recording, so second derivatives are not supported")
    .stype(|_, s| super::sparse_rules::backward_quadratic_stype(s))
    .sparse(|p, x| Ok(vec![backward_csr(p, &x[0], &x[1])?]))
}

/// The sparse kernel of `_backward_quadratic` for a csr gradient `g` and csr input `x`:
/// `g * (2*a*x + b) = 2*a*(g ⊙ x) + b*g`, with `g ⊙ x` on the common pattern (x's pattern
/// masked by g) and `b*g` on g's; the sum is csr on the union of the patterns.
fn backward_csr(p: &QuadraticParams, g: &Tensor, x: &Tensor) -> Result<Tensor> {
    use crate::sparse::kernels::{add_sub_same, map_values, mul_masked};
    use crate::tensor::arith::BinaryOp;
    if g.shape() != x.shape() {
        return Err(ErrorKind::ShapeMismatch(
            format!(
                "_backward_quadratic: output gradient {:?} and input {:?} differ",
                g.shape(),
                x.shape()
            )
            .into(),
        )
        .into());
    }
    let dt = out_dtype(x.dtype())?;
    let x = map_values(x, |v| v.astype_dense(dt))?;
    let g = map_values(g, |v| {
        v.astype_dense(crate::promote::result_type(dt, v.dtype())?)
    })?;
    let gx = mul_masked(&x, &g.densified()?)?;
    let two_a_gx = map_values(&gx, |v| v.binary_scalar_dense(2.0 * p.a, BinaryOp::Mul))?;
    if p.b == 0.0 {
        return Ok(two_a_gx);
    }
    let bg = map_values(&g, |v| v.binary_scalar_dense(p.b, BinaryOp::Mul))?;
    let bg = map_values(&bg, |v| v.astype_dense(two_a_gx.dtype()))?;
    add_sub_same(&two_a_gx, &bg, BinaryOp::Add)
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<QuadraticParams>::new(
            "quadratic",
            "f(x) = a*x^2 + b*x + c elementwise (seed 003). On csr input with c = 0 the output \
              is csr (values transformed, index arrays shared with the input); any other sparse \
              input falls back to the dense kernel (logged) and gives a dense output.",
            &["data"],
            &["output"],
            |_, m| {
                Ok(vec![TensorMeta::dense(
                    m[0].shape.clone(),
                    out_dtype(m[0].dtype)?,
                )])
            },
            |p, x| Ok(vec![quadratic(p, &x[0])?]),
        )
        .inplace(&[(0, 0)])
        .backward(
            "dx = _backward_quadratic(g, x) = g * (2*a*x + b)",
            crate::autograd::Saves::X,
            |p, ctx| {
                // Through the gradient op's own dispatch: csr gradients take its sparse kernel.
                let g = backward_def().call(p, &[ctx.grad(0).clone(), ctx.input(0)?.clone()])?;
                let g = g.into_iter().next().expect("one output");
                Ok(vec![Some(crate::ops::grad_util::cast_to(
                    g,
                    ctx.input_meta(0),
                )?)])
            },
        )
        .gradient_op("_backward_quadratic")
        .stype(|p, s| super::sparse_rules::quadratic_stype(p.c, s))
        .sparse(|p, x| {
            Ok(vec![crate::sparse::kernels::map_values(&x[0], |d| {
                quadratic(p, d)
            })?])
        }),
    );
    r.add(backward_def());
}
