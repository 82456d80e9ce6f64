//! Sparse kernels (docs/design.md O3). Values are computed by the dense kernels on the `data` parts
//! wherever the pattern is kept (so dtype rules are the dense ops'); pattern work (merges,
//! gathers, products) is done here, generic over the element type.

use super::{alloc, values, with_slice, CsrMatrix, RowSparseArray, SparseParts};
use crate::error::{ErrorKind, Result};
use crate::kernels::scalar_math::Arith;
use crate::tensor::arith::BinaryOp;
use crate::tensor::reduce::{reduction_dtype, resolve_axes};
use crate::tensor::Tensor;
use crate::with_dtype;

/// `x` with its stored values replaced by `f(values)` (same pattern, indices shared).
pub(crate) fn map_values(x: &Tensor, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    let parts = match x.sparse_parts() {
        Some(SparseParts::Csr(m)) => {
            // Only values are read, so the index parts are not re-checked: parts written
            // after construction stay as they are and the next kernel reading them reports it.
            SparseParts::Csr(m.with_data(f(m.data())?)?)
        }
        Some(SparseParts::RowSparse(r)) => {
            let data = f(r.data())?;
            SparseParts::RowSparse(RowSparseArray::from_parts(
                r.shape().to_vec(),
                r.indices().clone(),
                data,
            )?)
        }
        None => return f(x),
    };
    Tensor::from_sparse(parts)
}

/// `values` of `src` placed at positions `pos` of a zero vector of length `n` (kept in
/// `src`'s dtype).
fn scatter_values(src: &Tensor, pos: &[usize], n: usize, row_len: usize) -> Result<Tensor> {
    let mut dims = src.shape().to_vec();
    dims[0] = n;
    let out = Tensor::zeros(&dims, src.dtype())?;
    with_dtype!(src.dtype(), T => {
        let w = row_len;
        // A fresh storage: no other guard on it can exist.
        let mut out = out.dense_storage()?.write::<T>()?;
        with_slice::<T, _>(src, |s| {
            for (k, &p) in pos.iter().enumerate() {
                out[p * w..(p + 1) * w].copy_from_slice(&s[k * w..(k + 1) * w]);
            }
        })?;
    });
    Ok(out)
}

/// `a op b` for two CSR or two row-sparse tensors of one shape (`op` is add or sub): the
/// pattern is the union, the values the dense op on the aligned values.
pub(crate) fn add_sub_same(a: &Tensor, b: &Tensor, op: BinaryOp) -> Result<Tensor> {
    if a.shape() != b.shape() {
        return Err(ErrorKind::ShapeMismatch(
            format!(
                "{} of two {} tensors needs equal shapes (no broadcasting), got {:?} and {:?}",
                op.name(),
                a.stype(),
                a.shape(),
                b.shape()
            )
            .into(),
        )
        .into());
    }
    match (a.sparse_parts(), b.sparse_parts()) {
        (Some(SparseParts::Csr(x)), Some(SparseParts::Csr(y))) => {
            let (px, ix) = x.checked_index_vecs()?;
            let (py, iy) = y.checked_index_vecs()?;
            // Sized up front (rows + 1 pointers, at most nnz(x) + nnz(y) stored), so no push
            // reallocates.
            let most = alloc::add(ix.len(), iy.len(), "add")?;
            let (mut ptr, mut idx) = (alloc::with_capacity(px.len())?, alloc::with_capacity(most)?);
            let (mut pos_x, mut pos_y) = (
                alloc::with_capacity(ix.len())?,
                alloc::with_capacity(iy.len())?,
            );
            ptr.push(0i64);
            for r in 0..x.shape()[0] {
                let (mut i, ie) = (px[r] as usize, px[r + 1] as usize);
                let (mut j, je) = (py[r] as usize, py[r + 1] as usize);
                while i < ie || j < je {
                    let cx = if i < ie { ix[i] } else { i64::MAX };
                    let cy = if j < je { iy[j] } else { i64::MAX };
                    let c = cx.min(cy);
                    if cx == c {
                        pos_x.push(idx.len());
                        i += 1;
                    }
                    if cy == c {
                        pos_y.push(idx.len());
                        j += 1;
                    }
                    idx.push(c);
                }
                ptr.push(idx.len() as i64);
            }
            let n = idx.len();
            let vx = scatter_values(x.data(), &pos_x, n, 1)?;
            let vy = scatter_values(y.data(), &pos_y, n, 1)?;
            let data = vx.binary_dense(&vy, op)?;
            let shape = [x.shape()[0], x.shape()[1]];
            let canonical = x.has_canonical_format() && y.has_canonical_format();
            Tensor::from_sparse(SparseParts::Csr(CsrMatrix::from_trusted(
                shape, ptr, idx, data, canonical,
            )?))
        }
        (Some(SparseParts::RowSparse(x)), Some(SparseParts::RowSparse(y))) => {
            let (rx, ry) = (x.checked_rows()?, y.checked_rows()?);
            let n = alloc::add(rx.len(), ry.len(), "add")?;
            let mut rows: Vec<i64> = alloc::collect(n, rx.iter().chain(&ry).copied())?;
            rows.sort_unstable();
            rows.dedup();
            let pos = |r: &[i64]| -> Vec<usize> {
                r.iter()
                    .map(|v| rows.binary_search(v).unwrap_or(0))
                    .collect()
            };
            let w = x.row_len();
            let vx = scatter_values(x.data(), &pos(&rx), rows.len(), w)?;
            let vy = scatter_values(y.data(), &pos(&ry), rows.len(), w)?;
            let data = vx.binary_dense(&vy, op)?;
            Tensor::from_sparse(SparseParts::RowSparse(RowSparseArray::from_trusted(
                x.shape(),
                rows,
                data,
            )?))
        }
        _ => Err(ErrorKind::InvalidArgument(format!(
            "{}: expected two tensors of one sparse storage type, got {} and {}",
            op.name(),
            a.stype(),
            b.stype()
        ))
        .into()),
    }
}

/// `sparse * dense` (either order): the sparse pattern with the products at stored
/// positions. Masked semantics: implicit zeros stay zero even where the dense operand is
/// NaN or Inf.
pub(crate) fn mul_masked(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (s, d) = if a.stype() == crate::StorageType::Default {
        (b, a)
    } else {
        (a, b)
    };
    let shape = s.shape().to_vec();
    let d = d
        .broadcast_to_dense(&shape)
        .map_err(|_| {
            ErrorKind::ShapeMismatch(
                format!(
                "multiply of a {} tensor {:?} by a dense {:?}: the dense operand must broadcast \
                 to the sparse shape",
                s.stype(),
                shape,
                d.shape()
            )
                .into(),
            )
        })?
        .contiguous_dense()?;
    // The index parts are read (and checked) before the dense operand's guard is taken: they
    // may be views of its storage (see `with_slice`).
    let pattern = match s.sparse_parts() {
        Some(SparseParts::Csr(m)) => Pattern::Csr(m.checked_index_vecs()?),
        Some(SparseParts::RowSparse(rs)) => Pattern::Rows(rs.checked_rows()?, rs),
        None => {
            return Err(
                ErrorKind::InvalidArgument("mul_masked needs a sparse operand".into()).into(),
            )
        }
    };
    let gathered = with_dtype!(d.dtype(), T => {
        with_slice::<T, _>(&d, |dv| -> Result<Tensor> {
            match &pattern {
                Pattern::Csr((p, idx)) => {
                    let cols = shape[1];
                    let mut g = alloc::with_capacity(idx.len())?;
                    for r in 0..shape[0] {
                        for k in p[r] as usize..p[r + 1] as usize {
                            g.push(dv[r * cols + idx[k] as usize]);
                        }
                    }
                    values(g)
                }
                Pattern::Rows(rows, rs) => {
                    let w = rs.row_len();
                    // At most the dense operand's length.
                    let g: Vec<T> = alloc::collect(
                        rows.len() * w,
                        rows.iter().flat_map(|&r| dv[r as usize * w..(r as usize + 1) * w].iter().copied()),
                    )?;
                    Tensor::from_vec(g, rs.data().shape())
                }
            }
        })??
    });
    map_values(s, |v| v.binary_dense(&gathered, BinaryOp::Mul))
}

/// The checked stored positions of a sparse operand: CSR `(indptr, indices)`, or row-sparse
/// row ids and the array.
enum Pattern<'a> {
    Csr((Vec<i64>, Vec<i64>)),
    Rows(Vec<i64>, &'a RowSparseArray),
}

/// Dense `a @ b` for 1-D/2-D operands (NumPy `dot` on vectors and matrices): the matmul
/// kernel (`tensor/matmul.rs`, so its dtype rules), with a 1-D lhs as a row `[1, k]` and a
/// 1-D rhs as a column `[k, 1]`, both views (strided operands are not copied).
pub(crate) fn dense_dot(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    crate::promote::result_type(a.dtype(), b.dtype())?;
    let k = match a.shape() {
        &[k] | &[_, k] => k,
        s => {
            return Err(
                ErrorKind::InvalidShape(format!("dot: lhs must be 1-D or 2-D, got {s:?}")).into(),
            )
        }
    };
    let k2 = match b.shape() {
        &[k] | &[k, _] => k,
        s => {
            return Err(
                ErrorKind::InvalidShape(format!("dot: rhs must be 1-D or 2-D, got {s:?}")).into(),
            )
        }
    };
    if k != k2 {
        return Err(ErrorKind::ShapeMismatch(
            format!(
                "dot: shapes {:?} and {:?} are not aligned",
                a.shape(),
                b.shape()
            )
            .into(),
        )
        .into());
    }
    let a2 = if a.rank() == 1 {
        a.unsqueeze_dense(0)?
    } else {
        a.clone()
    };
    let b2 = if b.rank() == 1 {
        b.unsqueeze_dense(1)?
    } else {
        b.clone()
    };
    // A new contiguous `[m, n]`: viewing it with the unit dims dropped never copies.
    let out_shape: Vec<isize> = dot_shape(a.shape(), b.shape())
        .into_iter()
        .map(|d| d as isize)
        .collect();
    a2.matmul_dense(&b2)?.view_dense(&out_shape)
}

/// NumPy's `dot` output shape for 1-D/2-D operands.
pub(crate) fn dot_shape(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut s = Vec::new();
    if a.len() == 2 {
        s.push(a[0]);
    }
    if b.len() == 2 {
        s.push(b[1]);
    }
    s
}

/// `sum` of a sparse tensor over `axes` (all when `None`): dense, in the dtype of the dense
/// sum. Implicit zeros contribute nothing, so only stored values are read.
pub(crate) fn sparse_sum(x: &Tensor, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    let resolved = resolve_axes(x.shape(), axes, keepdims)?;
    let ax: Vec<usize> = (0..x.rank()).filter(|&i| resolved.reduced[i]).collect();
    let out_shape = resolved.out_shape;
    let dt = reduction_dtype("sum", x.dtype());
    let signed: Vec<isize> = ax.iter().map(|&a| a as isize).collect();
    match x.sparse_parts() {
        Some(SparseParts::Csr(m)) => {
            if ax.len() == 2 {
                return m.data().sum_dense(None, false)?.reshape_to(&out_shape);
            }
            if ax.is_empty() {
                return m.to_dense()?.astype_if(dt);
            }
            let data = m.data().astype_if(dt)?;
            let (ptr, idx) = m.checked_index_vecs()?;
            let rows = m.shape()[0];
            // `rows` or `cols` elements (`out_shape` is either with a 1 kept or not).
            let res = Tensor::zeros(&out_shape, dt)?;
            with_dtype!(dt, T => {
                // A fresh storage: no other guard on it can exist.
                let mut out = res.dense_storage()?.write::<T>()?;
                with_slice::<T, _>(&data, |vals| {
                    if ax[0] == 1 {
                        for (r, o) in out.iter_mut().enumerate().take(rows) {
                            *o = vals[ptr[r] as usize..ptr[r + 1] as usize]
                                .iter()
                                .fold(T::default(), |a, b| Arith::add(a, *b));
                        }
                    } else {
                        for (v, &c) in vals.iter().zip(&idx) {
                            out[c as usize] = Arith::add(out[c as usize], *v);
                        }
                    }
                })?;
            });
            Ok(res)
        }
        Some(SparseParts::RowSparse(r)) => {
            let block = r.data().sum_dense(Some(&signed), keepdims)?;
            if ax.contains(&0) {
                block.reshape_to(&out_shape)
            } else {
                let rows = r.checked_rows()?;
                RowSparseArray::from_trusted(&out_shape, rows, block)?.to_dense()
            }
        }
        None => x.sum_dense(axes, keepdims),
    }
}

impl Tensor {
    /// A reshape to exact dims (a view when possible).
    pub(crate) fn reshape_to(&self, dims: &[usize]) -> Result<Tensor> {
        let d: Vec<isize> = dims.iter().map(|&x| x as isize).collect();
        self.reshape_dense(&d)
    }
}
