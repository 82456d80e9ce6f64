//! The `Partial(sum)` → `Broadcast` reduction of a `row_sparse` gradient (docs/design.md
//! D11): the ranks gather each other's touched rows (ids and values, two all-gathers after
//! one of the counts) and sum them into the union of the rows. Only touched rows travel: with
//! 1 % of a weight's rows touched, about 1 % of a dense all-reduce's bytes.

use tessera::{DType, RowSparseArray, SparseParts, Tensor};

use crate::comm::Comm;
use crate::error::{DistError, Result};

/// The sum over the ranks of `comm` of every rank's `row_sparse` `grad` (all of one shape and
/// dtype, f32 or f64), on every rank: the union of their rows, each row summed in rank order
/// (so every rank gets the same bits). Also returns the bytes this rank received.
///
/// ```
/// use tessera::{RowSparseArray, SparseParts, Tensor};
/// use tessera_dist::{run_ranks, train::rowsparse};
/// let out = run_ranks(2, |comm| -> tessera_dist::Result<Vec<f32>> {
///     // Rank 0 touched rows 0 and 2, rank 1 rows 2 and 3.
///     let rows = if comm.rank() == 0 { vec![0, 2] } else { vec![2, 3] };
///     let block = Tensor::ones(&[2, 2], tessera::DType::F32)?;
///     let g = RowSparseArray::try_new(&[4, 2], rows, block)?;
///     let g = Tensor::from_sparse_parts(SparseParts::RowSparse(g))?;
///     let (sum, _) = rowsparse::all_reduce(&g, &comm)?;
///     Ok(sum.as_row_sparse()?.to_dense()?.to_vec::<f32>()?)
/// });
/// for r in out {
///     assert_eq!(r.unwrap().unwrap(), vec![1.0, 1.0, 0.0, 0.0, 2.0, 2.0, 1.0, 1.0]);
/// }
/// ```
pub fn all_reduce(grad: &Tensor, comm: &Comm) -> Result<(Tensor, usize)> {
    let rs = grad.as_row_sparse()?;
    let (p, me) = (comm.size(), comm.rank());
    let row_len = rs.row_len();
    let dtype = rs.data().dtype();
    let k = rs.indices().numel();
    let counts = comm.all_gather_v(&Tensor::from_slice(&[k as i64], &[1])?, &vec![1; p])?;
    let counts: Vec<usize> = counts
        .to_vec::<i64>()?
        .into_iter()
        .map(|c| usize::try_from(c).unwrap_or(0))
        .collect();
    let ids = comm.all_gather_v(&rs.indices().contiguous()?, &counts)?;
    let values_counts: Vec<usize> = counts.iter().map(|c| c * row_len).collect();
    let flat = rs.data().contiguous()?.reshape(&[-1])?;
    let values = comm.all_gather_v(&flat, &values_counts)?;
    let received: usize = (0..p)
        .filter(|&r| r != me)
        .map(|r| counts[r] * (8 + row_len * dtype.itemsize()))
        .sum::<usize>()
        + 8 * (p - 1);
    let ids = ids.to_vec::<i64>()?;
    let sum = match dtype {
        DType::F32 => union_sum(rs, &ids, &values.to_vec::<f32>()?, row_len)?,
        DType::F64 => union_sum(rs, &ids, &values.to_vec::<f64>()?, row_len)?,
        other => {
            return Err(DistError::Placement(format!(
                "a row_sparse gradient of dtype {other} (f32 or f64 reduce)"
            )))
        }
    };
    Ok((sum, received))
}

/// The rows `ids` (in rank order, each rank's sorted) with their `values`, summed per id in
/// that order, as a row_sparse tensor of `like`'s shape.
fn union_sum<T>(like: &RowSparseArray, ids: &[i64], values: &[T], row_len: usize) -> Result<Tensor>
where
    T: tessera::Element + Copy + std::ops::AddAssign + Default,
{
    let mut union: Vec<i64> = ids.to_vec();
    union.sort_unstable();
    union.dedup();
    let mut out = vec![T::default(); union.len() * row_len];
    for (j, id) in ids.iter().enumerate() {
        // Every id is in `union`, which is sorted.
        let at = union.partition_point(|u| u < id);
        let (dst, src) = (
            &mut out[at * row_len..][..row_len],
            &values[j * row_len..][..row_len],
        );
        for (d, s) in dst.iter_mut().zip(src) {
            *d += *s;
        }
    }
    let mut block_shape = like.shape().to_vec();
    block_shape[0] = union.len();
    let block = Tensor::from_vec(out, &block_shape)?;
    let parts = RowSparseArray::try_new(like.shape(), union, block)?;
    Ok(Tensor::from_sparse_parts(SparseParts::RowSparse(parts))?)
}
