//! The in-place update loop the optimisers share: the parameter, its gradient and up to two
//! state tensors walked together element by element, over every row (dense gradient) or
//! over the stored rows only (row_sparse gradient: the lazy update, which touches nothing
//! else, so its cost follows the gradient's rows, not the parameter's size).

use crate::dtype::Element;
use crate::error::{Result, TesseraError};
use crate::sparse::SparseParts;
use crate::stype::StorageType;
use crate::tensor::Tensor;
use crate::DType;

/// An update of one element: `(param, grad, state0, state1)`, computed in `f64`.
pub(crate) type ElementUpdate<'a> = dyn FnMut(&mut f64, f64, &mut f64, &mut f64) + 'a;

/// Runs `f` on every element of `param` (dense `grad`) or of its rows stored in `grad`
/// (row_sparse), with the matching elements of `states` (zero to two tensors of the
/// parameter's shape and dtype). Parameters are contiguous `f32` or `f64` leaves
/// (`check_params`).
pub(crate) fn update(
    param: &Tensor,
    grad: &Tensor,
    states: &[&Tensor],
    f: &mut ElementUpdate<'_>,
) -> Result<()> {
    if grad.shape() != param.shape() || grad.dtype() != param.dtype() {
        return Err(TesseraError::InvalidArgument(format!(
            "gradient {:?} {} for a parameter {:?} {}",
            grad.shape(),
            grad.dtype(),
            param.shape(),
            param.dtype()
        )));
    }
    match param.dtype() {
        DType::F32 => update_as::<f32>(param, grad, states, f),
        DType::F64 => update_as::<f64>(param, grad, states, f),
        d => Err(TesseraError::InvalidArgument(format!(
            "optimisers update float32 and float64, not {d}"
        ))),
    }
}

fn update_as<T: Element>(
    param: &Tensor,
    grad: &Tensor,
    states: &[&Tensor],
    f: &mut ElementUpdate<'_>,
) -> Result<()> {
    // The rows to visit and where their gradient values are.
    let (rows, row_len, values) = match grad.stype() {
        StorageType::RowSparse => {
            let Some(SparseParts::RowSparse(rs)) = grad.sparse_parts() else {
                return Err(TesseraError::InvalidArgument(
                    "row_sparse gradient without row_sparse parts".into(),
                ));
            };
            (
                Some(rs.checked_rows()?),
                rs.row_len(),
                rs.data().contiguous()?,
            )
        }
        _ => (None, param.numel(), grad.densified()?.contiguous()?),
    };
    let vs = values.storage()?;
    let vals = vs.read::<T>()?;
    let g = &vals[values.layout().offset()..];
    let ps = param.storage()?;
    let mut p = ps.write::<T>()?;
    let s0 = states.first().map(|s| s.storage()).transpose()?;
    let s1 = states.get(1).map(|s| s.storage()).transpose()?;
    let mut w0 = s0.map(|s| s.write::<T>()).transpose()?;
    let mut w1 = s1.map(|s| s.write::<T>()).transpose()?;
    let mut visit = |dst: usize, src: usize| {
        let mut pv = p[dst].to_f64();
        let mut a = w0.as_ref().map_or(0.0, |w| w[dst].to_f64());
        let mut b = w1.as_ref().map_or(0.0, |w| w[dst].to_f64());
        f(&mut pv, g[src].to_f64(), &mut a, &mut b);
        p[dst] = T::from_f64(pv);
        if let Some(w) = w0.as_mut() {
            w[dst] = T::from_f64(a);
        }
        if let Some(w) = w1.as_mut() {
            w[dst] = T::from_f64(b);
        }
    };
    match rows {
        Some(rows) => {
            for (k, &r) in rows.iter().enumerate() {
                let base = r as usize * row_len;
                for j in 0..row_len {
                    visit(base + j, k * row_len + j);
                }
            }
        }
        None => (0..row_len).for_each(|i| visit(i, i)),
    }
    Ok(())
}
