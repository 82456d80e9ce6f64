//! `csr.T @ dense` without materialising the transpose: the backward of `dot(csr, W)` with
//! respect to `W` (docs/design.md G5). The result is row_sparse, with a stored row for every
//! column of the csr that holds an element, so its cost follows the stored elements, not the
//! number of columns.
//!
//! The stored elements are visited in column order, and within a column in storage order:
//! an LSD radix sort of `column << 32 | position` keys on the column bits, 11 bits a pass
//! (two passes for a million columns), every pass's digit counts taken in one read of the
//! keys. Each output row then sums its terms in the order of the csr's rows, as a row-by-row
//! scatter would. Nothing is sized by the column count.
//!
//! The parts are read as stored (`int32` or `int64`), checked as they are read: parts
//! written after construction give `Sparse(Modified)`, never a panic.

use super::index::{with_index, CsrIndex};
use super::spmv::{modified, operands, Operands};
use super::{alloc, with_slices, CsrMatrix, RowSparseArray, SparseParts};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::scalar_math::Arith;
use crate::tensor::Tensor;
use crate::with_dtype;

/// `m.T @ b` in dtype `dt` (`b` 1-D or 2-D with `b.shape()[0] == rows of m`): row_sparse of
/// shape `[cols]` or `[cols, n]`.
pub(crate) fn csr_t_dot(m: &CsrMatrix, b: &Tensor, dt: DType) -> Result<Tensor> {
    let [rows, cols] = [m.shape()[0], m.shape()[1]];
    let Operands { data, b, n } = operands(m, b, dt, true)?;
    let (present, block) = with_dtype!(dt, T => with_index!(m.index_dtype(), I => {
        with_slices::<I, _>(m.indptr(), m.indices(), |ptr, idx| {
            with_slices::<T, _>(&data, &b, |vals, bv| {
                let order = column_order(ptr, idx, rows, cols)?;
                rows_of_columns::<T, I>(&order, ptr, vals, bv, n, b.rank() == 2)
            })
        })???
    }));
    let mut out_shape = vec![cols];
    if b.rank() == 2 {
        out_shape.push(n);
    }
    Tensor::from_sparse(SparseParts::RowSparse(RowSparseArray::from_trusted(
        &out_shape, present, block,
    )?))
}

/// The stored elements in column order: for each, its column and its position in
/// `idx`/`vals`.
enum Order {
    /// `column << 32 | position`, sorted.
    Packed(Vec<u64>),
    /// `(column, position)` sorted by column, stably: when a column or a position does not
    /// fit in 32 bits.
    Wide(Vec<(usize, usize)>),
}

impl Order {
    /// Runs `walk` on `(column, position)` of the stored elements in column order.
    fn visit<R>(&self, walk: impl Walk<R>) -> R {
        match self {
            Order::Packed(keys) => walk.run(
                keys.iter()
                    .map(|&key| ((key >> 32) as usize, (key & u64::from(u32::MAX)) as usize)),
            ),
            Order::Wide(pairs) => walk.run(pairs.iter().copied()),
        }
    }
}

/// A pass over the elements in column order, monomorphised for each form of [`Order`].
trait Walk<R> {
    fn run(self, elements: impl Iterator<Item = (usize, usize)>) -> R;
}

/// Checks the parts as it reads them (pointers from 0, non-decreasing and within `idx`;
/// columns below `cols`) and sorts the stored elements by column.
fn column_order<I: CsrIndex>(ptr: &[I], idx: &[I], rows: usize, cols: usize) -> Result<Order> {
    if ptr.len() != rows + 1 {
        return Err(modified());
    }
    let nnz = ptr[rows].to_usize();
    if nnz > idx.len() || ptr[0].to_usize() != 0 {
        return Err(modified());
    }
    if ptr.windows(2).any(|w| w[0] > w[1]) {
        return Err(modified());
    }
    let idx = &idx[..nnz];
    if idx.iter().any(|c| c.to_usize() >= cols) {
        return Err(modified());
    }
    if nnz > u32::MAX as usize || cols > u32::MAX as usize {
        // Beyond the packed keys: a stable comparison sort.
        let mut wide: Vec<(usize, usize)> =
            alloc::collect(nnz, idx.iter().map(|c| c.to_usize()).zip(0..nnz))?;
        wide.sort_by_key(|&(c, _)| c);
        return Ok(Order::Wide(wide));
    }
    let keys = alloc::collect(
        nnz,
        idx.iter()
            .enumerate()
            .map(|(k, c)| (c.to_usize() as u64) << 32 | k as u64),
    )?;
    let bits = (usize::BITS - cols.saturating_sub(1).leading_zeros()) as usize;
    Ok(Order::Packed(radix_sort_high(keys, bits)?))
}

/// Digit width of a radix pass.
const DIGIT_BITS: usize = 11;

/// `keys` sorted stably by their bits `32..32 + bits` (the low 32 bits keep their order).
fn radix_sort_high(mut keys: Vec<u64>, bits: usize) -> Result<Vec<u64>> {
    const MASK: u64 = (1 << DIGIT_BITS) - 1;
    let passes = bits.div_ceil(DIGIT_BITS);
    if passes == 0 {
        return Ok(keys);
    }
    // Every pass's digit counts, in one read of the keys.
    let mut counts = vec![[0usize; 1 << DIGIT_BITS]; passes];
    for &key in &keys {
        for (p, c) in counts.iter_mut().enumerate() {
            c[((key >> (32 + p * DIGIT_BITS)) & MASK) as usize] += 1;
        }
    }
    let mut next: Vec<u64> = alloc::filled(keys.len(), 0)?;
    for (p, start) in counts.iter_mut().enumerate() {
        let shift = 32 + p * DIGIT_BITS;
        let mut sum = 0;
        for c in start.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        for &key in &keys {
            let d = ((key >> shift) & MASK) as usize;
            next[start[d]] = key;
            start[d] += 1;
        }
        std::mem::swap(&mut keys, &mut next);
    }
    Ok(keys)
}

/// The stored rows (the distinct columns, ascending) and their values: row `s` is the sum,
/// over the elements of its column in storage order, of `vals[k] * b[row_of[k]]` (rows of
/// `n` values; the block is 2-D when `two_d`).
fn rows_of_columns<T: Arith, I: CsrIndex>(
    order: &Order,
    ptr: &[I],
    vals: &[T],
    bv: &[T],
    n: usize,
    two_d: bool,
) -> Result<(Vec<i64>, Tensor)> {
    struct Count;
    impl Walk<usize> for Count {
        fn run(self, elements: impl Iterator<Item = (usize, usize)>) -> usize {
            let mut last = usize::MAX;
            let mut distinct = 0;
            for (c, _) in elements {
                distinct += usize::from(c != last);
                last = c;
            }
            distinct
        }
    }
    let distinct = order.visit(Count);
    // `column_order` checked the pointers: non-decreasing, from 0 to `nnz <= idx.len()`.
    let nnz = ptr.last().map_or(0, |p| p.to_usize());
    let block_shape: &[usize] = if two_d { &[distinct, n] } else { &[distinct] };
    let block = Tensor::zeros(block_shape, T::DTYPE)?;
    let present = {
        // A fresh storage: no other guard on it can exist.
        let storage = block.dense_storage()?;
        let mut out = storage.write::<T>()?;
        if n == 1 {
            // One value a row: each element's term, in storage order, then one pass that
            // adds the terms of a column together.
            let mut term: Vec<T> = alloc::filled(nnz, T::default())?;
            for (r, &x) in bv.iter().enumerate().take(ptr.len() - 1) {
                let at = ptr[r].to_usize()..ptr[r + 1].to_usize();
                let v = vals.get(at.clone()).ok_or_else(modified)?;
                for (t, &v) in term[at].iter_mut().zip(v) {
                    *t = Arith::mul(v, x);
                }
            }
            order.visit(Columns {
                term: &term,
                out: &mut out[..],
            })?
        } else {
            let mut row_of: Vec<usize> = alloc::filled(nnz, 0)?;
            for r in 0..ptr.len() - 1 {
                row_of[ptr[r].to_usize()..ptr[r + 1].to_usize()].fill(r);
            }
            order.visit(Rows {
                vals,
                bv,
                n,
                row_of: &row_of,
                out: &mut out[..],
            })?
        }
    };
    Ok((present, block))
}

/// The stored-row ids, opening a row at each new column.
fn open_row(present: &mut Vec<i64>, c: usize) {
    if present.last() != Some(&(c as i64)) {
        present.push(c as i64);
    }
}

/// Sums `term[k]` into one value per distinct column (`out` has one slot per column).
struct Columns<'a, T> {
    term: &'a [T],
    out: &'a mut [T],
}

impl<T: Arith> Walk<Result<Vec<i64>>> for Columns<'_, T> {
    fn run(self, elements: impl Iterator<Item = (usize, usize)>) -> Result<Vec<i64>> {
        let mut present: Vec<i64> = alloc::with_capacity(self.out.len())?;
        for (c, k) in elements {
            open_row(&mut present, c);
            let t = *self.term.get(k).ok_or_else(modified)?;
            let o = self.out.get_mut(present.len() - 1).ok_or_else(modified)?;
            *o = Arith::add(*o, t);
        }
        Ok(present)
    }
}

/// Adds `vals[k]` times row `row_of[k]` of `bv` into the output row of each element's column.
struct Rows<'a, T> {
    vals: &'a [T],
    bv: &'a [T],
    n: usize,
    row_of: &'a [usize],
    out: &'a mut [T],
}

impl<T: Arith> Walk<Result<Vec<i64>>> for Rows<'_, T> {
    fn run(self, elements: impl Iterator<Item = (usize, usize)>) -> Result<Vec<i64>> {
        let n = self.n;
        let mut present: Vec<i64> = alloc::with_capacity(self.out.len() / n.max(1))?;
        for (c, k) in elements {
            open_row(&mut present, c);
            let s = present.len() - 1;
            let v = *self.vals.get(k).ok_or_else(modified)?;
            let r = *self.row_of.get(k).ok_or_else(modified)?;
            let src = self.bv.get(r * n..(r + 1) * n).ok_or_else(modified)?;
            let dst = self.out.get_mut(s * n..(s + 1) * n).ok_or_else(modified)?;
            for (d, x) in dst.iter_mut().zip(src) {
                *d = Arith::add(*d, Arith::mul(v, *x));
            }
        }
        Ok(present)
    }
}
