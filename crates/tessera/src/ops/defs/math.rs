//! Elementwise ops, comparisons and `astype` (registry entries over the dense kernels of the
//! tensor layer and the sparse kernels; their backward rules are in `elementwise_grads.rs`).

use super::elementwise_grads::{
    binary_backward, binary_doc, binary_saves, unary_backward, unary_doc, unary_saves,
};
use super::shape_ops::NoParams;
use super::sparse_rules::{add_sub_stype, keep_stype, mul_stype};
use crate::autograd::Saves;
use crate::layout::broadcast_shapes;
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::grad_util::cast_to;
use crate::ops::stype::TensorMeta;
use crate::sparse::kernels::{add_sub_same, map_values, mul_masked};
use crate::tensor::arith::{BinaryOp, CompareOp, UnaryOp};
use crate::tensor::Tensor;
use crate::{DType, Result};

fn binary_meta(m: &[TensorMeta], dtype: DType) -> Result<Vec<TensorMeta>> {
    Ok(vec![TensorMeta::dense(
        broadcast_shapes(&m[0].shape, &m[1].shape)?,
        dtype,
    )])
}

macro_rules! unary {
    ($r:ident, $($op:ident($zp:literal): $doc:literal),* $(,)?) => {$(
        let def = OpDef::<NoParams>::new(
            UnaryOp::$op.name(),
            $doc,
            &["x"],
            &["y"],
            |_, m| Ok(vec![TensorMeta::dense(m[0].shape.clone(), UnaryOp::$op.result_dtype(m[0].dtype)?)]),
            |_, x| Ok(vec![x[0].unary_dense(UnaryOp::$op)?]),
        )
        .inplace(&[(0, 0)])
        .backward(
            unary_doc(UnaryOp::$op),
            unary_saves(UnaryOp::$op),
            |_, ctx| unary_backward(UnaryOp::$op, ctx),
        );
        $r.add(if $zp {
            def.stype(|_, s| keep_stype(s))
                .sparse(|_, x| Ok(vec![map_values(&x[0], |d| d.unary_dense(UnaryOp::$op))?]))
        } else {
            def
        });
    )*};
}

/// `add` / `subtract` with a sparse operand: two of one sparse type merge patterns; sparse
/// and dense give dense.
fn add_sub_sparse(x: &[Tensor], op: BinaryOp) -> Result<Vec<Tensor>> {
    let out = if x[0].stype() == x[1].stype() {
        add_sub_same(&x[0], &x[1], op)?
    } else {
        x[0].densified()?.binary_dense(&x[1].densified()?, op)?
    };
    Ok(vec![out])
}

/// The sparse rules and kernels of `add`, `subtract` and `multiply`.
fn binary_sparse(op: BinaryOp, def: OpDef<NoParams>) -> OpDef<NoParams> {
    match op {
        BinaryOp::Add => def
            .stype(|_, s| add_sub_stype(s))
            .sparse(|_, x| add_sub_sparse(x, BinaryOp::Add)),
        BinaryOp::Sub => def
            .stype(|_, s| add_sub_stype(s))
            .sparse(|_, x| add_sub_sparse(x, BinaryOp::Sub)),
        BinaryOp::Mul => def
            .stype(|_, s| mul_stype(s))
            .sparse(|_, x| Ok(vec![mul_masked(&x[0], &x[1])?])),
        _ => def,
    }
}

macro_rules! binary {
    ($r:ident, $($op:ident: $doc:literal),* $(,)?) => {$(
        $r.add(binary_sparse(
            BinaryOp::$op,
            OpDef::<NoParams>::new(
                BinaryOp::$op.name(),
                $doc,
                &["x1", "x2"],
                &["y"],
                |_, m| binary_meta(m, BinaryOp::$op.result_dtype(m[0].dtype, m[1].dtype)?),
                |_, x| Ok(vec![x[0].binary_dense(&x[1], BinaryOp::$op)?]),
            )
            .inplace(&[(0, 0), (1, 0)])
            .backward(binary_doc(BinaryOp::$op), binary_saves(BinaryOp::$op), |_, ctx| {
                binary_backward(BinaryOp::$op, ctx)
            }),
        ));
    )*};
}

macro_rules! compare {
    ($r:ident, $($op:ident: $doc:literal),* $(,)?) => {$(
        $r.add(
            OpDef::<NoParams>::new(
                CompareOp::$op.name(),
                $doc,
                &["x1", "x2"],
                &["y"],
                |_, m| binary_meta(m, DType::Bool),
                |_, x| Ok(vec![x[0].compare_dense(&x[1], CompareOp::$op)?]),
            )
            .not_differentiable("a comparison's output is bool, which has no gradient"),
        );
    )*};
}

op_params! {
    /// Parameters of `astype`.
    pub struct AstypeParams {
        /// Target element type.
        dtype: DType;
    }
}

/// `astype`, run by [`Tensor::astype`] (`ops/methods.rs`) through the same dispatch as every
/// op: a csr / row_sparse tensor keeps its storage type and pattern (values converted). Not in
/// the registry: `invoke("astype")` would be a new public op (and a new `docs/ops.md` entry).
pub(crate) fn astype_def() -> OpDef<AstypeParams> {
    OpDef::<AstypeParams>::new(
        "astype",
        "Elementwise conversion to `dtype` (always a copy); sparse inputs keep their storage type and pattern.",
        &["x"],
        &["y"],
        |p, m| Ok(vec![TensorMeta::dense(m[0].shape.clone(), p.dtype)]),
        |p, x| Ok(vec![x[0].astype_dense(p.dtype)?]),
    )
    .stype(|_, s| keep_stype(s))
    .sparse(|p, x| Ok(vec![map_values(&x[0], |d| d.astype_dense(p.dtype))?]))
    .backward(
        "dx = g converted back to x's dtype (float to float; integer outputs have no gradient)",
        Saves::NOTHING,
        |_, ctx| Ok(vec![Some(cast_to(ctx.grad(0).clone(), ctx.input_meta(0))?)]),
    )
}

pub(super) fn register(r: &mut OpTable) {
    unary!(r,
        Neg(true): "Elementwise negation `-x` (an error for bool, like NumPy).",
        Abs(true): "Elementwise absolute value.",
        Sqrt(true): "Elementwise square root (integers promote to float as in NumPy).",
        Exp(false): "Elementwise exponential.",
        Log(false): "Elementwise natural logarithm.",
        Square(true): "Elementwise square `x * x`.",
        Sin(true): "Elementwise sine.",
        Tanh(true): "Elementwise hyperbolic tangent.",
        Relu(true): "Elementwise `max(x, 0)`.",
    );
    binary!(r,
        Add: "Elementwise sum with broadcasting and array-API type promotion. Two csr (or two row_sparse) operands of one shape give csr (row_sparse) with the union pattern; sparse + dense is dense.",
        Sub: "Elementwise difference with broadcasting and promotion. Sparse rules as `add`.",
        Mul: "Elementwise product with broadcasting and promotion. With one sparse and one dense operand the result keeps the sparse pattern (masked: implicit zeros stay zero even where the dense operand is NaN or Inf, as SciPy's `multiply`).",
        Div: "Elementwise true division (integers give float64).",
        Maximum: "Elementwise maximum (NaN propagates).",
        Minimum: "Elementwise minimum (NaN propagates).",
        Pow: "Elementwise power (integer negative exponents are an error).",
    );
    compare!(r,
        Eq: "Elementwise `==`, a bool tensor.",
        Ne: "Elementwise `!=`, a bool tensor.",
        Lt: "Elementwise `<`, a bool tensor.",
        Le: "Elementwise `<=`, a bool tensor.",
        Gt: "Elementwise `>`, a bool tensor.",
        Ge: "Elementwise `>=`, a bool tensor.",
    );
}
