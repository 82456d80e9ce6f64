//! The `Partial(sum)` → `Broadcast` reduction of a `row_sparse` gradient (docs/design.md
//! D11): the ranks gather each other's touched rows (ids and values, two all-gathers after
//! one of the counts) and sum them into the union of the rows. Only touched rows travel: with
//! 1 % of a weight's rows touched, about 1 % of a dense all-reduce's bytes.

use tessera::{RowSparseArray, SparseParts, Tensor};

use crate::comm::Comm;
use crate::error::{DistError, Result};

/// The sum over the ranks of `comm` of every rank's `row_sparse` `grad` (all of one shape and
/// dtype), on every rank: the union of their rows, each row summed in rank order
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
    let k = rs.indices().numel();
    let counts = comm.all_gather_v(&Tensor::from_slice(&[k as i64], &[1])?, &vec![1; p])?;
    let counts = counts
        .to_vec::<i64>()?
        .into_iter()
        .map(|c| {
            usize::try_from(c)
                .map_err(|_| DistError::Mismatch(format!("a peer sent a row count of {c}")))
        })
        .collect::<Result<Vec<usize>>>()?;
    let ids = comm.all_gather_v(&rs.indices().contiguous()?, &counts)?;
    let values_counts: Vec<usize> = counts.iter().map(|c| c * row_len).collect();
    let flat = rs.data().contiguous()?.reshape(&[-1])?;
    let values = comm.all_gather_v(&flat, &values_counts)?;
    let received: usize = (0..p)
        .filter(|&r| r != me)
        .map(|r| counts[r] * (8 + row_len * rs.data().dtype().itemsize()))
        .sum::<usize>()
        + 8 * (p - 1);
    // Every rank's rows as its own row_sparse tensor (checked: peers' ids are sorted, unique
    // and in range), summed in rank order by the sparse `add` (the union of the rows), so
    // every rank gets the same bits.
    let ids = ids.to_vec::<i64>()?;
    let mut block_shape = rs.shape().to_vec();
    let (mut sum, mut at): (Option<Tensor>, usize) = (None, 0);
    for &n in &counts {
        block_shape[0] = n;
        let block = values
            .narrow(0, at * row_len, n * row_len)?
            .reshape(&block_shape.iter().map(|&d| d as isize).collect::<Vec<_>>())?;
        let part = RowSparseArray::try_new(rs.shape(), ids[at..at + n].to_vec(), block)?;
        let part = Tensor::from_sparse_parts(SparseParts::RowSparse(part))?;
        sum = Some(match sum {
            Some(s) => s.add(&part)?,
            None => part,
        });
        at += n;
    }
    let sum = sum.ok_or_else(|| DistError::Placement("a reduction over no ranks".into()))?;
    Ok((sum, received))
}
