//! Linear algebra: `matmul` (dense 2-D matrix product).

use super::shape_ops::NoParams;
use crate::ops::registry::{OpDef, Registry};
use crate::ops::stype::{dense_stype, TensorMeta};
use crate::promote::result_type;
use crate::tensor::matmul::matmul_dims;

pub(super) fn register(r: &mut Registry) {
    r.add(OpDef::<NoParams> {
        name: "matmul",
        doc: "Matrix product of two 2-D tensors, [m, k] @ [k, n] -> [m, n], with dtype promotion \
              (f16/bf16 accumulate in f32; bool is the logical product).",
        inputs: &["a", "b"],
        outputs: &["output"],
        infer: |_, m| {
            let (rows, _, cols) = matmul_dims(&m[0].shape, &m[1].shape)?;
            Ok(vec![TensorMeta::dense(
                vec![rows, cols],
                result_type(m[0].dtype, m[1].dtype)?,
            )])
        },
        infer_stype: dense_stype,
        dense: |_, x| Ok(vec![x[0].matmul(&x[1])?]),
        sparse: None,
        inplace: &[],
        mutates: &[],
        forward_only: false,
        stateful: false,
        gradient: None,
    });
}
