//! `csr @ dense`: SpMV for a 1-D rhs, SpMM for a 2-D one. The output is allocated without
//! zero-fill and written once; rows are split across threads unless `parallel` is false.
//!
//! The SpMV loop keeps two running sums per row (even and odd stored positions, added at the
//! end), so its results can differ from SciPy's one sequential sum in the last bits. On
//! blocks of rows whose columns are scattered it also prefetches the rhs entries
//! [`PREFETCH_AHEAD`] stored elements ahead: there the gathers are cache misses the hardware
//! cannot predict, and issuing them early overlaps their latencies (about 2x on random
//! columns). Both loops sum in the same order, so the result does not depend on which ran.
//!
//! Every access is checked, so parts written after construction (they are shared tensors)
//! give an error, never a panic or an out-of-bounds read; the checks are compare-and-branch
//! pairs that are never taken, and unchecked gathers measured no faster.

use rayon::prelude::*;

use super::index::{with_index, CsrIndex};
use super::kernels::dot_shape;
use super::{unshared, with_slices, CsrMatrix, SparseError};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result, TesseraError};
use crate::kernels::scalar_math::Arith;
use crate::kernels::simd::prefetch;
use crate::tensor::Tensor;
use crate::with_dtype;

/// How many stored elements ahead the SpMV loop prefetches the rhs entry it will gather:
/// enough misses in flight to cover memory latency (64 to 192 measured within 10% of each
/// other on random columns, 96 best; 32 clearly worse).
const PREFETCH_AHEAD: usize = 96;

/// Rows per parallel task: enough for about [`TASK_WORK`] gathered values, within
/// [`MIN_CHUNK_ROWS`]..=`CHUNK_ROWS`.
const CHUNK_ROWS: usize = 1024;

/// The smallest parallel task, in rows.
const MIN_CHUNK_ROWS: usize = 64;

/// Gathered values per parallel task.
const TASK_WORK: usize = 1 << 13;

/// Rows per SpMV block, the unit that chooses between the plain and the prefetching loop.
const BLOCK_ROWS: usize = 256;

/// The operands of a csr product, ready to read: the values and the rhs in dtype `dt`, the rhs
/// contiguous, and `n`, the rhs's columns (1 for a 1-D rhs).
pub(super) struct Operands {
    pub(super) data: Tensor,
    pub(super) b: Tensor,
    pub(super) n: usize,
}

/// Checks that `b` (1-D or 2-D) aligns with `m` (with its rows when `transposed`, else its
/// columns) and prepares both for one read guard per storage (docs of `with_slice`): index
/// parts sharing one buffer share a guard, and so do values and rhs; values or rhs sharing the
/// index parts' buffer are copied.
pub(super) fn operands(m: &CsrMatrix, b: &Tensor, dt: DType, transposed: bool) -> Result<Operands> {
    let inner = m.shape()[usize::from(!transposed)];
    if b.shape().first() != Some(&inner) || b.rank() > 2 {
        return Err(ErrorKind::ShapeMismatch(
            format!(
                "dot: shapes {:?}{} and {:?} are not aligned",
                m.shape(),
                if transposed { " (transposed)" } else { "" },
                b.shape()
            )
            .into(),
        )
        .into());
    }
    let index_parts = [m.indptr(), m.indices()];
    Ok(Operands {
        data: unshared(&m.data().astype_if(dt)?, &index_parts)?,
        b: unshared(&b.astype_if(dt)?.contiguous_dense()?, &index_parts)?,
        n: if b.rank() == 2 { b.shape()[1] } else { 1 },
    })
}

/// `m @ b` in dtype `dt` (`b` 1-D or 2-D with `b.shape()[0] == cols`): dense.
pub(crate) fn csr_dot(m: &CsrMatrix, b: &Tensor, dt: DType, parallel: bool) -> Result<Tensor> {
    let rows = m.shape()[0];
    let Operands { data, b, n } = operands(m, b, dt, false)?;
    let out = Tensor::for_overwrite(&dot_shape(m.shape(), b.shape()), dt)?;
    // Work counted in stored elements (each gathers a row of `n`) as well as output rows:
    // few rows with many elements each (a batch of documents) are split too.
    let work = m.nnz().max(rows).saturating_mul(n);
    let chunk_rows = (parallel && crate::kernels::parallel::enabled() && work > 1 << 14)
        .then(|| (rows.saturating_mul(TASK_WORK) / work).clamp(MIN_CHUNK_ROWS, CHUNK_ROWS));
    with_dtype!(dt, T => with_index!(m.index_dtype(), I => {
        // A fresh storage: nothing else can hold it, and every element is written below.
        let mut o = out.dense_storage()?.write::<T>()?;
        with_slices::<I, _>(m.indptr(), m.indices(), |ptr, idx| {
            with_slices::<T, _>(&data, &b, |vals, x| spmm(ptr, idx, vals, x, n, &mut o, chunk_rows))
        })???;
    }));
    Ok(out)
}

/// `out = csr(ptr, idx, vals) @ x` with `n` columns in `x` and `out` (row-major), rows in
/// tasks of `chunk_rows` on the rayon pool, or all on the calling thread when `None`.
fn spmm<T: Arith, I: CsrIndex>(
    ptr: &[I],
    idx: &[I],
    vals: &[T],
    x: &[T],
    n: usize,
    out: &mut [T],
    chunk_rows: Option<usize>,
) -> Result<()> {
    if n == 0 || out.is_empty() {
        return Ok(());
    }
    if ptr.len() != out.len() / n + 1 {
        return Err(modified());
    }
    let rows = |r0: usize, o: &mut [T]| -> Result<()> {
        let ptr = &ptr[r0..=r0 + o.len() / n];
        if n == 1 {
            spmv_rows(ptr, idx, vals, x, o)
        } else {
            spmm_rows(ptr, idx, vals, x, n, o)
        }
    };
    match chunk_rows {
        Some(c) => out
            .par_chunks_mut(c * n)
            .enumerate()
            .try_for_each(|(k, o)| rows(k * c, o)),
        None => rows(0, out),
    }
}

/// The error for parts that no longer describe a valid matrix (written after construction):
/// the loops only know that an index or pointer was out of range, not which invariant broke.
pub(super) fn modified() -> TesseraError {
    SparseError::Modified(None).into()
}

/// SpMV over the rows whose pointers are `ptr` (`out.len() + 1` of them, offsets into the
/// whole `idx` / `vals`), in blocks of [`BLOCK_ROWS`] rows, each run by the prefetching loop
/// when its gathers look [`scattered`] and by the plain loop otherwise (on banded or dense
/// rows the hardware prefetcher already streams `x`, and the extra work would only cost).
fn spmv_rows<T: Arith, I: CsrIndex>(
    ptr: &[I],
    idx: &[I],
    vals: &[T],
    x: &[T],
    out: &mut [T],
) -> Result<()> {
    // `ahead[k]` is `idx[k + PREFETCH_AHEAD]`; blocks within that distance of the end run
    // without prefetching.
    let ahead = idx.get(PREFETCH_AHEAD..).unwrap_or(&[]);
    for (b, o) in out.chunks_mut(BLOCK_ROWS).enumerate() {
        let r0 = b * BLOCK_ROWS;
        let p = ptr.get(r0..=r0 + o.len()).ok_or_else(modified)?;
        let (s, e) = (p[0].to_usize(), p[o.len()].to_usize());
        let done = if e <= ahead.len() && scattered(idx, s, e, o.len()) {
            spmv_block::<T, I, true>(p, idx, ahead, vals, x, o)
        } else {
            spmv_block::<T, I, false>(p, idx, ahead, vals, x, o)
        };
        done.ok_or_else(modified)?;
    }
    Ok(())
}

/// Whether a block of `rows` rows storing `idx[s..e]` gathers from scattered places: its
/// first and last stored columns lie further apart than 4 × (rows + stored elements), more
/// than a banded block (about its row count) or a block of dense rows (its element count)
/// spans. Two reads per block.
fn scattered<I: CsrIndex>(idx: &[I], s: usize, e: usize, rows: usize) -> bool {
    match (idx.get(s), e.checked_sub(1).and_then(|l| idx.get(l))) {
        (Some(a), Some(b)) if s < e => a.to_usize().abs_diff(b.to_usize()) > 4 * (rows + (e - s)),
        _ => false,
    }
}

/// Two running sums per row, over the even and the odd stored positions, added at the end:
/// two independent chains of additions keep twice as many gathers in flight as SciPy's one
/// (measured 10-20% faster on banded rows). `None` when the parts are not a valid matrix any
/// more.
///
/// With `PREFETCH`, it also prefetches the `x` entry gathered `PREFETCH_AHEAD` stored elements
/// later (`ahead` is `idx` shifted by that distance); the sums and their order are the same, and
/// the plain instance never touches `ahead`.
#[inline(never)]
fn spmv_block<T: Arith, I: CsrIndex, const PREFETCH: bool>(
    ptr: &[I],
    idx: &[I],
    ahead: &[I],
    vals: &[T],
    x: &[T],
    out: &mut [T],
) -> Option<()> {
    let mut s = ptr[0].to_usize();
    for (o, e) in out.iter_mut().zip(&ptr[1..]) {
        let e = e.to_usize();
        let (v, c) = (vals.get(s..e)?, idx.get(s..e)?);
        let (mut even, mut odd) = (T::default(), T::default());
        let (mut v2, mut c2) = (v.chunks_exact(2), c.chunks_exact(2));
        for (k, (v, c)) in (&mut v2).zip(&mut c2).enumerate() {
            if PREFETCH {
                let f = ahead.get(s + 2 * k..s + 2 * k + 2)?;
                prefetch(x, f[0].to_usize());
                prefetch(x, f[1].to_usize());
            }
            even = Arith::add(even, Arith::mul(v[0], *x.get(c[0].to_usize())?));
            odd = Arith::add(odd, Arith::mul(v[1], *x.get(c[1].to_usize())?));
        }
        if let (Some(&v), Some(&c)) = (v2.remainder().first(), c2.remainder().first()) {
            even = Arith::add(even, Arith::mul(v, *x.get(c.to_usize())?));
        }
        *o = Arith::add(even, odd);
        s = e;
    }
    Some(())
}

/// SpMM over the rows whose pointers are `ptr`: each output row (`n` wide) is the sum of the
/// rhs rows its stored columns pick, scaled by the stored values.
fn spmm_rows<T: Arith, I: CsrIndex>(
    ptr: &[I],
    idx: &[I],
    vals: &[T],
    x: &[T],
    n: usize,
    out: &mut [T],
) -> Result<()> {
    let mut s = ptr[0].to_usize();
    for (o, e) in out.chunks_exact_mut(n).zip(&ptr[1..]) {
        let e = e.to_usize();
        let (Some(v), Some(c)) = (vals.get(s..e), idx.get(s..e)) else {
            return Err(modified());
        };
        o.fill(T::default());
        for (&v, &c) in v.iter().zip(c) {
            let start = c.to_usize().checked_mul(n).ok_or_else(modified)?;
            let end = start.checked_add(n).ok_or_else(modified)?;
            let src = x.get(start..end).ok_or_else(modified)?;
            for (dst, &xv) in o.iter_mut().zip(src) {
                *dst = Arith::add(*dst, Arith::mul(v, xv));
            }
        }
        s = e;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A random CSR pattern: up to `max_rows x max_cols`, each row holding up to 6 sorted
    /// unique columns (some rows empty), values small integers (exact sums).
    fn pattern(
        max_rows: usize,
        max_cols: usize,
    ) -> impl Strategy<Value = (usize, usize, Vec<i64>, Vec<i64>, Vec<f64>)> {
        (0..max_rows, 0..max_cols).prop_flat_map(|(rows, cols)| {
            let row = proptest::collection::btree_set(0..cols.max(1) as i64, 0..=cols.min(6));
            (Just(rows), Just(cols), proptest::collection::vec(row, rows)).prop_map(
                |(rows, cols, sets)| {
                    let (mut ptr, mut idx) = (vec![0i64], Vec::new());
                    for set in sets {
                        idx.extend(set.into_iter().filter(|&c| (c as usize) < cols));
                        ptr.push(idx.len() as i64);
                    }
                    let vals = (0..idx.len()).map(|k| (k % 7) as f64 - 3.0).collect();
                    (rows, cols, ptr, idx, vals)
                },
            )
        })
    }

    fn naive(ptr: &[i64], idx: &[i64], vals: &[f64], x: &[f64], n: usize) -> Vec<f64> {
        let mut out = vec![0.0; (ptr.len() - 1) * n];
        for r in 0..ptr.len() - 1 {
            for k in ptr[r] as usize..ptr[r + 1] as usize {
                for j in 0..n {
                    out[r * n + j] += vals[k] * x[idx[k] as usize * n + j];
                }
            }
        }
        out
    }

    fn run<I: CsrIndex>(
        ptr: &[I],
        idx: &[I],
        vals: &[f64],
        x: &[f64],
        n: usize,
        chunk: Option<usize>,
    ) -> Result<Vec<f64>> {
        // Stale values in the output must not leak into the result.
        let mut out = vec![f64::NAN; (ptr.len() - 1) * n];
        spmm(ptr, idx, vals, x, n, &mut out, chunk)?;
        Ok(out)
    }

    fn check_both_index_types(
        ptr: &[i64],
        idx: &[i64],
        vals: &[f64],
        cols: usize,
        n: usize,
        chunk: Option<usize>,
    ) -> std::result::Result<(), TestCaseError> {
        let x: Vec<f64> = (0..cols * n).map(|k| (k % 5) as f64 - 2.0).collect();
        let want = naive(ptr, idx, vals, &x, n);
        prop_assert_eq!(run(ptr, idx, vals, &x, n, chunk).unwrap(), want.clone());
        let p32: Vec<i32> = ptr.iter().map(|&v| v as i32).collect();
        let i32s: Vec<i32> = idx.iter().map(|&v| v as i32).collect();
        prop_assert_eq!(run(&p32, &i32s, vals, &x, n, chunk).unwrap(), want);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn small_spmv_and_spmm_match_naive_for_both_index_types(
            (_rows, cols, ptr, idx, vals) in pattern(40, 12),
            n in 0usize..4,
            chunk in prop_oneof![Just(None), (1usize..5).prop_map(Some)],
        ) {
            check_both_index_types(&ptr, &idx, &vals, cols, n, chunk)?;
        }

        #[test]
        fn large_spmv_matches_naive_on_both_loops(
            (_rows, cols, ptr, idx, vals) in pattern(3 * BLOCK_ROWS, 20_000),
            chunk in prop_oneof![Just(None), (1usize..400).prop_map(Some)],
        ) {
            // Many blocks; scattered ones (wide matrices) take the prefetching loop.
            check_both_index_types(&ptr, &idx, &vals, cols, 1, chunk)?;
        }
    }

    #[test]
    fn banded_blocks_run_plain_and_scattered_ones_prefetch() {
        let (rows, cols) = (3 * BLOCK_ROWS + 5, 40_000usize);
        let band: Vec<i64> = (0..rows)
            .flat_map(|r| (r.saturating_sub(2)..(r + 3).min(cols)).map(|c| c as i64))
            .collect();
        let spread: Vec<i64> = (0..rows)
            .flat_map(|r| (0..4).map(move |k| ((k * 997 + r * 31) % 10_000 + k * 10_000) as i64))
            .collect();
        for (idx, want_scattered) in [(band, false), (spread, true)] {
            let mut ptr = vec![0i64];
            let per_row = if want_scattered { 4 } else { 0 };
            for r in 0..rows {
                let len = if want_scattered {
                    per_row
                } else {
                    (r + 3).min(cols) - r.saturating_sub(2)
                };
                ptr.push(ptr[r] + len as i64);
            }
            let (s, e) = (ptr[0] as usize, ptr[BLOCK_ROWS] as usize);
            assert_eq!(scattered(&idx, s, e, BLOCK_ROWS), want_scattered);
            let vals: Vec<f64> = (0..idx.len()).map(|k| (k % 3) as f64).collect();
            check_both_index_types(&ptr, &idx, &vals, cols, 1, None).unwrap();
            check_both_index_types(&ptr, &idx, &vals, cols, 1, Some(100)).unwrap();
        }
    }

    #[test]
    fn corrupted_parts_are_errors_not_panics() {
        let x = [1.0, 2.0];
        // Column out of range, negative column, indptr past the end, decreasing indptr.
        assert!(run(&[0i64, 1], &[2], &[1.0], &x, 1, None).is_err());
        assert!(run(&[0i32, 1], &[-1], &[1.0], &x, 1, None).is_err());
        assert!(run(&[0i64, 1], &[5], &[1.0], &x, 2, None).is_err());
        assert!(run(&[0i64, 3], &[0], &[1.0], &x, 1, None).is_err());
        assert!(run(&[0i64, 1, 0], &[0], &[1.0], &x, 1, None).is_err());
        assert!(run(&[0i32, 1, 0], &[0], &[1.0], &x, 1, Some(1)).is_err());
        // A column whose row offset in the rhs is just below usize::MAX (start + n wraps).
        assert!(run(&[0i64, 1], &[i64::MAX], &[1.0], &x, 2, None).is_err());
        assert!(run(&[0i64, 1], &[-1], &[1.0], &[1.0; 4], 2, None).is_err());
    }
}
