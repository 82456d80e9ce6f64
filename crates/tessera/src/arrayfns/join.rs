//! `concat` and `stack`: tensors joined along an existing axis (`concat`; with no axis the
//! inputs are flattened first) or a new one (`stack`). The result dtype is the inputs'
//! common type (`promote::result_type`, folded left to right); every input is copied once
//! into its part of the output through the copy engine.

use crate::error::{ErrorKind, Result, ShapeFacts};
use crate::layout::normalize_axis;
use crate::promote::result_type;
use crate::tensor::Tensor;

/// The inputs' common dtype.
fn common_dtype(name: &str, xs: &[Tensor]) -> Result<crate::DType> {
    let first = xs
        .first()
        .ok_or_else(|| ErrorKind::InvalidArgument(format!("{name} needs at least one tensor")))?;
    xs[1..]
        .iter()
        .try_fold(first.dtype(), |d, x| result_type(d, x.dtype()))
}

/// The shape of `concat(xs, axis)` for inputs of these shapes (`axis` resolved).
pub(crate) fn concat_shape(shapes: &[&[usize]], axis: usize) -> Result<Vec<usize>> {
    let mut out = shapes[0].to_vec();
    let mut total = 0usize;
    for s in shapes {
        let same_rest = s.len() == out.len()
            && s.iter()
                .zip(&out)
                .enumerate()
                .all(|(d, (a, b))| d == axis || a == b);
        if !same_rest {
            return Err(ErrorKind::ShapeMismatch(ShapeFacts::Other(format!(
                "concat: shape {s:?} does not match {:?} outside axis {axis}",
                shapes[0]
            )))
            .into());
        }
        total = total.checked_add(s[axis]).ok_or_else(|| {
            ErrorKind::ShapeOverflow(format!("concat of {} tensors", shapes.len()))
        })?;
    }
    out[axis] = total;
    Ok(out)
}

impl Tensor {
    /// The dense kernel of [`Tensor::concat`].
    pub(crate) fn concat_dense(xs: &[Tensor], axis: Option<isize>) -> Result<Tensor> {
        let dt = common_dtype("concat", xs)?;
        let flat;
        let (xs, axis) = match axis {
            Some(a) => (xs, a),
            None => {
                flat = xs
                    .iter()
                    .map(|x| x.reshape_dense(&[-1]))
                    .collect::<Result<Vec<_>>>()?;
                (&flat[..], 0)
            }
        };
        let rank = xs[0].rank();
        if rank == 0 {
            return Err(ErrorKind::InvalidArgument(
                "concat of 0-d tensors (use stack, or axis=None)".into(),
            )
            .into());
        }
        let axis = normalize_axis(axis, rank)?;
        let shapes: Vec<&[usize]> = xs.iter().map(Tensor::shape).collect();
        let dims = concat_shape(&shapes, axis)?;
        let out = Tensor::for_overwrite(&dims, dt)?;
        let mut start = 0;
        for x in xs {
            let len = x.shape()[axis];
            let part = out.narrow_dense(axis as isize, start, len)?;
            let x = if x.dtype() == dt {
                x.clone()
            } else {
                x.astype_dense(dt)?
            };
            part.assign(&x)?;
            start += len;
        }
        Ok(out)
    }

    /// The dense kernel of [`Tensor::stack`].
    pub(crate) fn stack_dense(xs: &[Tensor], axis: isize) -> Result<Tensor> {
        let first = xs
            .first()
            .ok_or_else(|| ErrorKind::InvalidArgument("stack needs at least one tensor".into()))?;
        if let Some(x) = xs.iter().find(|x| x.shape() != first.shape()) {
            return Err(ErrorKind::ShapeMismatch(ShapeFacts::Other(format!(
                "stack: every tensor must have one shape; got {:?} and {:?}",
                first.shape(),
                x.shape()
            )))
            .into());
        }
        let axis = normalize_axis(axis, first.rank() + 1)?;
        let parts = xs
            .iter()
            .map(|x| x.unsqueeze_dense(axis as isize))
            .collect::<Result<Vec<_>>>()?;
        Tensor::concat_dense(&parts, Some(axis as isize))
    }
}
