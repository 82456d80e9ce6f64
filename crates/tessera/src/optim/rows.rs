//! The in-place update loop the optimisers share: the parameter, its gradient and up to two
//! state tensors walked together element by element, over every row (dense gradient) or
//! over the stored rows only (row_sparse gradient: the lazy update, which touches nothing
//! else, so its cost follows the gradient's rows, not the parameter's size).
//!
//! The update is a closure monomorphised into the loop (no call per element), given the
//! states as a fixed-size array so that each state count gets its own zipped loop, which the
//! compiler vectorises; optimisers pass `move` closures so the step constants are values, not
//! references reloaded every element. Each element is computed in `f64`. A dense update of a
//! large parameter runs in chunks on rayon's pool.

use rayon::prelude::*;

use crate::dtype::Element;
use crate::error::{ErrorKind, Result};
use crate::kernels::simd::prefetch;
use crate::sparse::SparseParts;
use crate::stype::StorageType;
use crate::tensor::Tensor;
use crate::DType;

/// Elements per parallel task of a dense update (and the size below which it stays serial).
const CHUNK: usize = 1 << 15;

/// Runs `f(param, grad, states)` on every element of `param` (dense `grad`) or of its rows
/// stored in `grad` (row_sparse), with the matching elements of the `N` `states` (tensors of
/// the parameter's shape and dtype). Parameters are `f32` or `f64` leaves owning their
/// storage as a dense block (`check_params`); the states are row-major. A parameter in
/// another memory order is updated through a row-major copy written back.
pub(crate) fn update<F, const N: usize>(
    param: &Tensor,
    grad: &Tensor,
    states: [&Tensor; N],
    f: F,
) -> Result<()>
where
    F: Fn(&mut f64, f64, &mut [f64; N]) + Sync,
{
    if grad.shape() != param.shape() || grad.dtype() != param.dtype() {
        return Err(ErrorKind::InvalidArgument(format!(
            "gradient {:?} {} for a parameter {:?} {}",
            grad.shape(),
            grad.dtype(),
            param.shape(),
            param.dtype()
        ))
        .into());
    }
    if !param.is_contiguous() {
        // Gradient and states are read row-major; so is the copy (docs/design.md P6).
        let work = param.copy_dense()?;
        update(&work, grad, states, f)?;
        return param.assign_dense(&work);
    }
    match param.dtype() {
        DType::F32 => update_as::<f32, F, N>(param, grad, states, &f),
        DType::F64 => update_as::<f64, F, N>(param, grad, states, &f),
        d => Err(ErrorKind::InvalidArgument(format!(
            "optimisers update float32 and float64, not {d}"
        ))
        .into()),
    }
}

/// Applies `f` to matching elements of the parameter, gradient and states (equal lengths).
/// One zipped loop per state count, so that the compiler vectorises it.
#[inline(always)]
fn apply<T: Element, F, const N: usize>(f: &F, p: &mut [T], g: &[T], s: &mut [&mut [T]; N])
where
    F: Fn(&mut f64, f64, &mut [f64; N]),
{
    let mut st = [0.0; N];
    let step = |p: &mut T, g: &T, st: &mut [f64; N]| {
        let mut pv = p.to_f64();
        f(&mut pv, g.to_f64(), st);
        *p = T::from_f64(pv);
    };
    let pg = p.iter_mut().zip(g);
    match s.as_mut_slice() {
        [] => pg.for_each(|(p, g)| step(p, g, &mut st)),
        [a] => pg.zip(a.iter_mut()).for_each(|((p, g), a)| {
            st[0] = a.to_f64();
            step(p, g, &mut st);
            *a = T::from_f64(st[0]);
        }),
        [a, b] => pg
            .zip(a.iter_mut())
            .zip(b.iter_mut())
            .for_each(|(((p, g), a), b)| {
                (st[0], st[1]) = (a.to_f64(), b.to_f64());
                step(p, g, &mut st);
                (*a, *b) = (T::from_f64(st[0]), T::from_f64(st[1]));
            }),
        more => unreachable!("optimisers keep at most two states, not {}", more.len()),
    }
}

/// Rows stored per parallel task of a lazy update.
const ROWS_PER_TASK: usize = 4096;

/// The lazy update of the stored `rows` (sorted, unique, each `< first_row + p.len() / w`),
/// whose values are `g` (row `k` at `g[k*w..]`); `p` and the states start at row `first_row`.
/// Large row sets split in two at a stored row, so the halves write disjoint slices.
fn lazy<T: Element, F, const N: usize>(
    f: &F,
    rows: &[i64],
    first_row: usize,
    w: usize,
    p: &mut [T],
    g: &[T],
    mut s: [&mut [T]; N],
) where
    F: Fn(&mut f64, f64, &mut [f64; N]) + Sync,
{
    if rows.len() > ROWS_PER_TASK && crate::kernels::parallel::enabled() {
        let mid = rows.len() / 2;
        let cut = (rows[mid] as usize - first_row) * w;
        let (p0, p1) = p.split_at_mut(cut);
        let (g0, g1) = g.split_at(mid * w);
        let (s0, s1) = split_all(s, cut);
        rayon::join(
            || lazy(f, &rows[..mid], first_row, w, p0, g0, s0),
            || lazy(f, &rows[mid..], rows[mid] as usize, w, p1, g1, s1),
        );
        return;
    }
    for (k, &r) in rows.iter().enumerate() {
        // The rows are scattered over a large table: ask for the lines of a row a few
        // iterations ahead so that the memory latency overlaps this row's arithmetic.
        if let Some(&ahead) = rows.get(k + PREFETCH_AHEAD) {
            let at = (ahead as usize - first_row) * w;
            prefetch(p, at);
            for x in &s {
                prefetch(x, at);
            }
        }
        let at = (r as usize - first_row) * w..(r as usize - first_row + 1) * w;
        let mut row: [&mut [T]; N] = s.each_mut().map(|x| &mut x[at.clone()]);
        apply(f, &mut p[at.clone()], &g[k * w..(k + 1) * w], &mut row);
    }
}

/// How many stored rows ahead the lazy update prefetches.
const PREFETCH_AHEAD: usize = 24;

/// The `N` items of `v` as an array (`v` has exactly `N`: built from an `N`-array).
fn array_of<X, const N: usize>(v: Vec<X>) -> [X; N] {
    match v.try_into() {
        Ok(a) => a,
        Err(_) => unreachable!("built from an array of N items"),
    }
}

/// Every slice of `s` split at `cut`: the first halves and the second halves.
type Halves<'s, T, const N: usize> = ([&'s mut [T]; N], [&'s mut [T]; N]);

fn split_all<T, const N: usize>(s: [&mut [T]; N], cut: usize) -> Halves<'_, T, N> {
    let (lo, hi): (Vec<_>, Vec<_>) = s.into_iter().map(|x| x.split_at_mut(cut)).unzip();
    (array_of(lo), array_of(hi))
}

fn update_as<T: Element, F, const N: usize>(
    param: &Tensor,
    grad: &Tensor,
    states: [&Tensor; N],
    f: &F,
) -> Result<()>
where
    F: Fn(&mut f64, f64, &mut [f64; N]) + Sync,
{
    // The rows to visit and where their gradient values are.
    let (rows, row_len, values) = match grad.stype() {
        StorageType::RowSparse => {
            let Some(SparseParts::RowSparse(rs)) = grad.sparse_parts() else {
                return Err(ErrorKind::InvalidArgument(
                    "row_sparse gradient without row_sparse parts".into(),
                )
                .into());
            };
            (
                Some(rs.checked_rows()?),
                rs.row_len(),
                rs.data().contiguous()?,
            )
        }
        _ => (None, param.numel(), grad.densified()?.contiguous()?),
    };
    let n = param.numel();
    let vs = values.storage()?;
    let vals = vs.read::<T>()?;
    let g = &vals[values.layout().offset()..];
    let ps = param.storage()?;
    let mut pg = ps.write::<T>()?;
    let storages = states
        .iter()
        .map(|s| s.storage())
        .collect::<Result<Vec<_>>>()?;
    let mut guards = storages
        .iter()
        .map(|s| s.write::<T>())
        .collect::<Result<Vec<_>>>()?;
    // Every tensor here holds `n` elements from offset 0 (parameters and states own their
    // storage, `check_params`); slicing checks it again.
    let p = &mut pg[..n];
    let s: [&mut [T]; N] = array_of(guards.iter_mut().map(|w| &mut w[..n]).collect());
    match rows {
        Some(rows) => lazy(f, &rows, 0, row_len, p, g, s),
        None if n > CHUNK && crate::kernels::parallel::enabled() => {
            // Chunks of every slice, zipped into one task each.
            let mut chunks: Vec<Vec<&mut [T]>> = Vec::new();
            for x in s {
                for (c, piece) in x.chunks_mut(CHUNK).enumerate() {
                    if chunks.len() <= c {
                        chunks.push(Vec::with_capacity(N));
                    }
                    chunks[c].push(piece);
                }
            }
            chunks.resize_with(n.div_ceil(CHUNK), Vec::new);
            let tasks: Vec<_> = p
                .chunks_mut(CHUNK)
                .zip(g[..n].chunks(CHUNK))
                .zip(chunks)
                .collect();
            tasks.into_par_iter().for_each(|((p, g), s)| {
                let mut s: [&mut [T]; N] = array_of(s);
                apply(f, p, g, &mut s)
            });
        }
        None => apply(f, p, &g[..n], &mut { s }),
    }
    Ok(())
}
