//! `embedding`: rows of a weight table gathered by integer ids (an embedding lookup,
//! `weight[ids]` along axis 0). Its weight gradient is row_sparse (docs/design.md G5): only
//! the rows the ids touch are stored, each the sum of the output gradients that read it.

use crate::autograd::{BackwardCtx, Saves};
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, IndexFacts, Result};
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;
use crate::sparse::RowSparseArray;
use crate::tensor::Tensor;
use crate::with_dtype;

use super::shape_ops::NoParams;

/// The ids as `usize`, each checked against `rows`.
fn ids(indices: &Tensor, rows: usize) -> Result<Vec<usize>> {
    if !indices.dtype().is_integer() {
        return Err(ErrorKind::InvalidArgument(format!(
            "embedding: ids must be integers, got dtype {}",
            indices.dtype()
        ))
        .into());
    }
    let v = indices.astype(DType::I64)?.to_vec::<i64>()?;
    v.into_iter()
        .map(|i| {
            usize::try_from(i)
                .ok()
                .filter(|&u| u < rows)
                .ok_or_else(|| {
                    ErrorKind::Index(IndexFacts::Other(format!(
                        "embedding: id {i} out of range for a table of {rows} rows"
                    )))
                    .into()
                })
        })
        .collect()
}

fn out_shape(w: &[usize], idx: &[usize]) -> Result<Vec<usize>> {
    if w.is_empty() {
        return Err(ErrorKind::InvalidShape(
            "embedding: the weight table needs at least one dim (rows)".into(),
        )
        .into());
    }
    Ok(idx.iter().chain(&w[1..]).copied().collect())
}

fn lookup(w: &Tensor, indices: &Tensor) -> Result<Tensor> {
    let shape = out_shape(w.shape(), indices.shape())?;
    let rows = w.shape()[0];
    let ids = ids(indices, rows)?;
    let row_len: usize = w.shape()[1..].iter().product();
    let w = w.contiguous()?;
    with_dtype!(w.dtype(), T => {
        let table = w.to_vec::<T>()?;
        let mut out: Vec<T> = crate::storage::try_with_capacity(ids.len() * row_len)?;
        for &i in &ids {
            out.extend_from_slice(&table[i * row_len..(i + 1) * row_len]);
        }
        Tensor::from_vec(out, &shape)
    })
}

/// The row_sparse gradient of the table: sorted unique ids, each row the sum of the output
/// gradient rows that read it (accumulated in `f64`).
fn weight_grad(m: &crate::autograd::Meta, indices: &Tensor, g: &Tensor) -> Result<Tensor> {
    let rows = m.shape[0];
    let ids = ids(indices, rows)?;
    let row_len: usize = m.shape[1..].iter().product();
    let mut uniq = ids.clone();
    uniq.sort_unstable();
    uniq.dedup();
    let gv = g.astype(DType::F64)?.to_vec::<f64>()?;
    let mut block = crate::storage::try_vec(0.0f64, uniq.len() * row_len)?;
    for (k, &i) in ids.iter().enumerate() {
        let r = uniq
            .binary_search(&i)
            .expect("every id is in the unique list");
        for (dst, src) in block[r * row_len..(r + 1) * row_len]
            .iter_mut()
            .zip(&gv[k * row_len..(k + 1) * row_len])
        {
            *dst += src;
        }
    }
    let mut block_shape = vec![uniq.len()];
    block_shape.extend_from_slice(&m.shape[1..]);
    let data = with_dtype!(m.dtype, T => {
        Tensor::from_vec(block.into_iter().map(T::from_f64).collect::<Vec<T>>(), &block_shape)?
    });
    let rs = RowSparseArray::try_new(&m.shape, uniq.iter().map(|&i| i as i64).collect(), data)?;
    Tensor::from_sparse_parts(crate::sparse::SparseParts::RowSparse(rs))
}

fn backward(_: &NoParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let g = weight_grad(ctx.input_meta(0), ctx.input(1)?, ctx.grad(0))?;
    Ok(vec![Some(g), None])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<NoParams>::new(
            "embedding",
            "Rows of `weight` gathered by integer `ids` along axis 0 (an embedding lookup, \
             `weight[ids]`): the output has shape ids.shape + weight.shape[1:]. An id out of \
             range is an IndexError.",
            &["weight", "ids"],
            &["output"],
            |_, m| {
                Ok(vec![TensorMeta::dense(
                    out_shape(&m[0].shape, &m[1].shape)?,
                    m[0].dtype,
                )])
            },
            |_, x| Ok(vec![lookup(&x[0], &x[1])?]),
        )
        .backward(
            "dweight is row_sparse: the sorted unique ids, each row the sum of the output gradient rows that read it (ids get none: integers)",
            Saves {
                inputs: &[1],
                outputs: &[],
            },
            backward,
        ),
    );
}
