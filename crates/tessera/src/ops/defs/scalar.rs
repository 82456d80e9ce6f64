//! `add_scalar` and `mul_scalar`: a tensor and a weak scalar (the Python operators
//! `t + s` and `t * s` on sparse tensors go through them).

use super::sparse_rules::{add_scalar_stype, keep_stype};
use crate::dtype::Scalar;
use crate::error::Result;
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;
use crate::sparse::kernels::map_values;
use crate::tensor::arith::BinaryOp;
use crate::tensor::Tensor;

op_params! {
    /// Parameters of `add_scalar` and `mul_scalar`.
    pub struct ScalarParams {
        /// The scalar (an integral value acts as a Python int: it keeps integer dtypes).
        scalar: f64 = 0.0;
    }
}

fn weak(s: f64) -> Scalar {
    if s.fract() == 0.0 && s.abs() < 9.0e15 {
        Scalar::Int(s as i64)
    } else {
        Scalar::Float(s)
    }
}

fn meta(p: &ScalarParams, m: &[TensorMeta], op: BinaryOp) -> Result<Vec<TensorMeta>> {
    let probe = Tensor::zeros(&[1], m[0].dtype)?.binary_scalar_dense(weak(p.scalar), op)?;
    Ok(vec![TensorMeta::dense(m[0].shape.clone(), probe.dtype())])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<ScalarParams>::new(
            "add_scalar",
            "`x + scalar` (weak scalar promotion). Sparse input keeps its storage type only \
             for scalar = 0; otherwise it falls back and gives a dense output.",
            &["x"],
            &["y"],
            |p, m| meta(p, m, BinaryOp::Add),
            |p, x| {
                Ok(vec![
                    x[0].binary_scalar_dense(weak(p.scalar), BinaryOp::Add)?
                ])
            },
        )
        .stype(|p, s| add_scalar_stype(p.scalar, s))
        .sparse(|p, x| {
            Ok(vec![map_values(&x[0], |d| {
                d.binary_scalar_dense(weak(p.scalar), BinaryOp::Add)
            })?])
        })
        .backward("dx = g", crate::autograd::Saves::NOTHING, |_, ctx| {
            Ok(vec![Some(crate::ops::grad_util::cast_to(
                ctx.grad(0).clone(),
                ctx.input_meta(0),
            )?)])
        }),
    );
    r.add(
        OpDef::<ScalarParams>::new(
            "mul_scalar",
            "`x * scalar` (weak scalar promotion). Sparse input keeps its storage type \
             (masked: implicit zeros stay zero even for a NaN or Inf scalar).",
            &["x"],
            &["y"],
            |p, m| meta(p, m, BinaryOp::Mul),
            |p, x| {
                Ok(vec![
                    x[0].binary_scalar_dense(weak(p.scalar), BinaryOp::Mul)?
                ])
            },
        )
        .stype(|_, s| keep_stype(s))
        .sparse(|p, x| {
            Ok(vec![map_values(&x[0], |d| {
                d.binary_scalar_dense(weak(p.scalar), BinaryOp::Mul)
            })?])
        })
        .backward(
            "dx = g * scalar",
            crate::autograd::Saves::NOTHING,
            |p, ctx| {
                let g = ctx.grad(0).mul_scalar(p.scalar)?;
                Ok(vec![Some(crate::ops::grad_util::cast_to(
                    g,
                    ctx.input_meta(0),
                )?)])
            },
        ),
    );
}
