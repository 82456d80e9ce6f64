//! `dot` and `matmul`: matrix and vector products, with CSR kernels (SpMV / SpMM, and `csr.T @ dense`
//! without materialising the transpose).

use super::shape_ops::NoParams;
use super::sparse_rules::dot_stype;
use crate::autograd::BackwardCtx;
use crate::autograd::Meta;
use crate::autograd::Saves;
use crate::error::{ErrorKind, Result};
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::grad_util::{cast_to, reduce_to, signed};
use crate::ops::stype::TensorMeta;
use crate::promote::result_type;
use crate::sparse::csr_dot;
use crate::sparse::csr_t_dot;
use crate::sparse::kernels::{dense_dot, dot_shape};
use crate::tensor::matmul::MatmulShape;
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
        (_, true) => Err(ErrorKind::InvalidShape(format!(
            "dot: transpose_a needs a 2-D lhs, got {s:?}"
        ))
        .into()),
        _ => Ok(s.to_vec()),
    }
}

fn infer(p: &DotParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let a = lhs_shape(p, &m[0].shape)?;
    let b = &m[1].shape;
    let k_a = a.last().copied();
    let k_b = b.first().copied();
    if a.is_empty() || b.is_empty() || a.len() > 2 || b.len() > 2 || k_a != k_b {
        return Err(ErrorKind::ShapeMismatch(
            format!("dot: shapes {a:?} and {b:?} are not aligned (1-D or 2-D operands)").into(),
        )
        .into());
    }
    Ok(vec![TensorMeta::dense(
        dot_shape(&a, b),
        result_type(m[0].dtype, m[1].dtype)?,
    )])
}

fn dense(p: &DotParams, x: &[Tensor]) -> Result<Vec<Tensor>> {
    infer(p, &[x[0].meta(), x[1].meta()])?;
    // The transposed lhs stays a view: the matmul kernel reads it through its strides.
    let a = if p.transpose_a {
        x[0].t_dense()?
    } else {
        x[0].clone()
    };
    // Every dense case runs the matmul kernel (1-D operands as a row or a column).
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

/// The `dot` op (registered, and called by its own backward rule for `A^T @ g`).
pub(crate) fn dot_def() -> OpDef<DotParams> {
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
        .sparse(sparse)
        .backward(
            "dA = g @ B^T, dB = A^T @ g (A the lhs after transpose_a; vectors as rows or columns). For a csr lhs, dB = dot(csr, g, transpose_a = true) is row_sparse: only the rows the csr's columns touch",
            Saves::X1_X2,
            dot_backward,
        )
}

pub(super) fn register(r: &mut OpTable) {
    r.add(dot_def());
    r.add(
        OpDef::<NoParams>::new(
            "matmul",
            "NumPy `matmul`: matrix product in the last two dims, [.., m, k] @ [.., k, n] -> \
             [.., m, n], the batch dims broadcast; a 1-D lhs is a row and a 1-D rhs a column, \
             their added dim removed from the result. Dtype promotion (f16/bf16 accumulate in \
             f32; integers exact, wrapping; bool is the logical product).",
            &["a", "b"],
            &["output"],
            |_, m| {
                let s = MatmulShape::new(&m[0].shape, &m[1].shape)?;
                Ok(vec![TensorMeta::dense(
                    s.out_shape(),
                    result_type(m[0].dtype, m[1].dtype)?,
                )])
            },
            |_, x| Ok(vec![x[0].matmul_dense(&x[1])?]),
        )
        .backward(
            "dA = g @ B^T, dB = A^T @ g in the last two dims (1-D operands as a row or a \
             column), each summed over the batch dims its operand was broadcast along",
            Saves::X1_X2,
            matmul_backward,
        ),
    );
}

/// Rule of `matmul`: dA = g @ B^T and dB = A^T @ g on the operands as `[.., m, k]` and
/// `[.., k, n]` (1-D ones as a row or a column, `g` with the removed dims put back), each
/// summed over the batch dims that broadcasting stretched or added, then shaped as its input.
pub(crate) fn matmul_backward<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (a, b, g) = (ctx.input(0)?, ctx.input(1)?, ctx.dense_grad(0)?);
    let (ma, mb) = (ctx.input_meta(0), ctx.input_meta(1));
    let s = MatmulShape::new(&ma.shape, &mb.shape)?;
    let a2 = if s.a_vec { a.unsqueeze(0)? } else { a.clone() };
    let b2 = if s.b_vec { b.unsqueeze(1)? } else { b.clone() };
    let mut g_dims: Vec<isize> = s.batch.iter().map(|&d| d as isize).collect();
    g_dims.extend([s.m as isize, s.n as isize]);
    let g2 = g.reshape(&g_dims)?;
    // The gradient of operand `x2` (the 2-D-or-more form of input `m`) from `d`.
    let back = |d: Tensor, x2: &Tensor, m: &Meta| -> Result<Tensor> {
        let promoted = Meta {
            shape: x2.shape().into(),
            dtype: m.dtype,
            stype: m.stype,
        };
        reduce_to(&d, &promoted)?.reshape(&signed(m))
    };
    let da = if ctx.needs(0) {
        Some(back(g2.matmul(&b2.transpose(-1, -2)?)?, &a2, ma)?)
    } else {
        None
    };
    let db = if ctx.needs(1) {
        Some(back(a2.transpose(-1, -2)?.matmul(&g2)?, &b2, mb)?)
    } else {
        None
    };
    Ok(vec![da, db])
}

/// `v` as a column (`[n, 1]`) or row (`[1, n]`).
fn as_2d(v: &Tensor, column: bool) -> Result<Tensor> {
    v.reshape(if column { &[-1, 1] } else { &[1, -1] })
}

/// Rule of `dot` for 1-D and 2-D operands (`A` is the lhs after the optional transpose):
/// dA = g ⊗ B-ish products as in `matmul`, with vectors as rows or columns; with
/// `transpose_a` the lhs gradient is transposed back. A csr lhs gets no gradient.
pub(crate) fn dot_backward(p: &DotParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (a0, b, g) = (ctx.input(0)?, ctx.input(1)?, ctx.grad(0));
    // With transpose_a the lhs is 2-D, and only the 1-D lhs cases read it: `a0` is `A` there.
    let a = a0;
    let (ra, rb) = (a0.rank(), b.rank());
    let da = if ctx.needs(0) {
        let d = match (ra, rb) {
            (2, 2) => g.matmul(&b.t()?)?,
            (1, 1) => b.mul(g)?,
            (2, 1) => as_2d(g, true)?.mul(&as_2d(b, false)?)?,
            _ => b.matmul(&as_2d(g, true)?)?.reshape(&[-1])?, // (1, 2): B @ g
        };
        let d = if p.transpose_a { d.t()? } else { d };
        Some(cast_to(d.contiguous()?, ctx.input_meta(0))?)
    } else {
        None
    };
    let db = if ctx.needs(1) {
        let d = match (ra, rb) {
            (2, 2) => dot_t(a0, g, p)?,
            (1, 1) => a.mul(g)?,
            (2, 1) => dot_t(a0, &as_2d(g, true)?, p)?
                .cast_storage(crate::StorageType::Default)?
                .reshape(&[-1])?,
            _ => as_2d(a, true)?.mul(&as_2d(g, false)?)?, // (1, 2): a ⊗ g
        };
        Some(cast_to(d, ctx.input_meta(1))?)
    } else {
        None
    };
    Ok(vec![da, db])
}

/// `A^T @ g` where `A` is the lhs of the call (`a0`, transposed when `transpose_a`): a `dot`
/// with the transpose flag flipped, so a csr lhs runs its `csr.T @ dense` kernel.
fn dot_t(a0: &Tensor, g: &Tensor, p: &DotParams) -> Result<Tensor> {
    let q = DotParams {
        transpose_a: !p.transpose_a,
        parallel: p.parallel,
    };
    let out = dot_def().call(&q, &[a0.clone(), g.clone()])?;
    Ok(out.into_iter().next().expect("dot has one output"))
}
