//! `ring_buffer` (seed 000, docs/design.md O5): keeps the last B inputs along an axis.

use crate::error::DTypeFacts;
use crate::layout::normalize_axis;
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;
use crate::ring::ring_buffer_step;
use crate::{ErrorKind, Result};

op_params! {
    /// Parameters of `ring_buffer`.
    pub struct RingBufferParams {
        /// Axis along which inputs are appended (negative counts from the end).
        axis: isize = 0;
    }
}

fn infer(p: &RingBufferParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let (input, buffer) = (&m[0], &m[1]);
    let rank = buffer.shape.len();
    let axis = normalize_axis(p.axis, rank)?;
    let same_rest = input.shape.len() == rank
        && (0..rank).all(|i| i == axis || input.shape[i] == buffer.shape[i]);
    if !same_rest || input.shape[axis] > buffer.shape[axis] {
        return Err(ErrorKind::ShapeMismatch(format!(
            "ring_buffer: input {:?} does not fit buffer {:?} along axis {axis} (other dims must match, N <= B)",
            input.shape, buffer.shape
        ).into()).into());
    }
    if input.dtype != buffer.dtype {
        return Err(ErrorKind::DType(DTypeFacts::Differ {
            op: "ring_buffer".into(),
            what: "input",
            expected: buffer.dtype,
            got: input.dtype,
        })
        .into());
    }
    Ok(vec![TensorMeta::dense(buffer.shape.clone(), buffer.dtype)])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<RingBufferParams>::new(
            "ring_buffer",
            "Keeps the last B inputs along `axis` (seed 000): shifts the buffer left by N and writes \
             the input at the end, oldest first. `buffer` (B along the axis) is updated in place \
             and returned. A buffer made by `ring_buffer_state`/`RingBuffer` (or a previous output) \
             steps in O(N) along the axis; any other dense buffer takes the seed's O(B) shift.",
            &["input", "buffer"],
            &["output"],
            infer,
            |p, x| Ok(vec![ring_buffer_step(&x[0], &x[1], p.axis)?]),
        )
        .inplace(&[(1, 0)])
        .mutates(&[1])
        .forward_only(),
    );
}
