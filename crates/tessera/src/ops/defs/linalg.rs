//! `dot` and `matmul`: matrix and vector products, with CSR kernels (SpMV / SpMM, and `csr.T @ dense`
//! without materialising the transpose).

use super::shape_ops::NoParams;
use super::sparse_rules::dot_stype;
use crate::error::{Result, TesseraError};
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;
use crate::promote::result_type;
use crate::sparse::csr_dot;
use crate::sparse::kernels::{csr_t_dot, dense_dot, dot_shape};
use crate::tensor::matmul::matmul_dims;
use crate::tensor::Tensor;

op_params! {
    /// Parameters of `dot`.
    pub struct DotParams {
        /// Use the transpose of the (2-D) lhs.
        transpose_a: bool = false;
        /// Split the csr kernel's rows across threads (false: run on the calling thread).
        parallel: bool = true;
    }
}

/// The lhs shape after the optional transpose.
fn lhs_shape(p: &DotParams, s: &[usize]) -> Result<Vec<usize>> {
    match (s, p.transpose_a) {
        (&[m, k], true) => Ok(vec![k, m]),
        (_, true) => Err(TesseraError::InvalidShape(format!(
            "dot: transpose_a needs a 2-D lhs, got {s:?}"
        ))),
        _ => Ok(s.to_vec()),
    }
}

fn infer(p: &DotParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let a = lhs_shape(p, &m[0].shape)?;
    let b = &m[1].shape;
    let k_a = a.last().copied();
    let k_b = b.first().copied();
    if a.is_empty() || b.is_empty() || a.len() > 2 || b.len() > 2 || k_a != k_b {
        return Err(TesseraError::ShapeMismatch(
            format!("dot: shapes {a:?} and {b:?} are not aligned (1-D or 2-D operands)").into(),
        ));
    }
    Ok(vec![TensorMeta::dense(
        dot_shape(&a, b),
        result_type(m[0].dtype, m[1].dtype)?,
    )])
}

fn dense(p: &DotParams, x: &[Tensor]) -> Result<Vec<Tensor>> {
    infer(p, &[x[0].meta(), x[1].meta()])?;
    let a = if p.transpose_a {
        x[0].t()?.contiguous()?
    } else {
        x[0].clone()
    };
    // 2-D by 2-D is the blocked matmul kernel; 1-D operands use the simple dot kernel.
    if a.rank() == 2 && x[1].rank() == 2 {
        return Ok(vec![a.matmul(&x[1])?]);
    }
    Ok(vec![dense_dot(&a, &x[1])?])
}

fn sparse(p: &DotParams, x: &[Tensor]) -> Result<Vec<Tensor>> {
    infer(p, &[x[0].meta(), x[1].meta()])?;
    let dt = result_type(x[0].dtype(), x[1].dtype())?;
    let m = x[0].as_csr()?;
    Ok(vec![if p.transpose_a {
        csr_t_dot(m, &x[1], dt)?
    } else {
        csr_dot(m, &x[1], dt, p.parallel)?
    }])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<DotParams>::new(
            "dot",
            "Matrix / vector product of 1-D or 2-D operands (NumPy `dot`), with `transpose_a` \
             using the lhs transposed. `dot(csr, dense)` is dense (SpMV / SpMM); \
             `dot(csr, dense, transpose_a=true)` is row_sparse, computed without materialising \
             the transpose; other sparse inputs fall back.",
            &["lhs", "rhs"],
            &["output"],
            infer,
            dense,
        )
        .stype(|p, s| dot_stype(p.transpose_a, s))
        .sparse(sparse),
    );
    r.add(OpDef::<NoParams>::new(
        "matmul",
        "Matrix product of two 2-D tensors, [m, k] @ [k, n] -> [m, n], with dtype promotion \
         (f16/bf16 accumulate in f32; bool is the logical product).",
        &["a", "b"],
        &["output"],
        |_, m| {
            let (rows, _, cols) = matmul_dims(&m[0].shape, &m[1].shape)?;
            Ok(vec![TensorMeta::dense(
                vec![rows, cols],
                result_type(m[0].dtype, m[1].dtype)?,
            )])
        },
        |_, x| Ok(vec![x[0].matmul(&x[1])?]),
    ));
}
