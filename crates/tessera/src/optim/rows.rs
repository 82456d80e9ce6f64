//! The in-place update loop the optimisers share: the parameter, its gradient and up to two
//! state tensors walked together element by element, over every row (dense gradient) or
//! over the stored rows only (row_sparse gradient: the lazy update, which touches nothing
//! else, so its cost follows the gradient's rows, not the parameter's size).
//!
//! The update is a closure monomorphised into the loop (no call per element); each element
//! is computed in `f64`. A dense update of a large parameter runs in chunks on rayon's pool.

use rayon::prelude::*;

use crate::dtype::Element;
use crate::error::{Result, TesseraError};
use crate::sparse::SparseParts;
use crate::stype::StorageType;
use crate::tensor::Tensor;
use crate::DType;

/// Elements per parallel task of a dense update (and the size below which it stays serial).
const CHUNK: usize = 1 << 15;

/// Runs `f(param, grad, state0, state1)` on every element of `param` (dense `grad`) or of its
/// rows stored in `grad` (row_sparse), with the matching elements of `states` (zero to two
/// tensors of the parameter's shape and dtype; a missing state reads 0). Parameters are
/// contiguous `f32` or `f64` leaves owning their storage (`check_params`).
pub(crate) fn update<F>(param: &Tensor, grad: &Tensor, states: &[&Tensor], f: F) -> Result<()>
where
    F: Fn(&mut f64, f64, &mut f64, &mut f64) + Sync,
{
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
        DType::F32 => update_as::<f32, F>(param, grad, states, &f),
        DType::F64 => update_as::<f64, F>(param, grad, states, &f),
        d => Err(TesseraError::InvalidArgument(format!(
            "optimisers update float32 and float64, not {d}"
        ))),
    }
}

/// Applies `f` to matching slices of the parameter, gradient and states (equal lengths).
#[inline(always)]
fn apply<T: Element, F>(f: &F, p: &mut [T], g: &[T], a: Option<&mut [T]>, b: Option<&mut [T]>)
where
    F: Fn(&mut f64, f64, &mut f64, &mut f64),
{
    match (a, b) {
        (Some(a), Some(b)) => {
            for (((p, g), a), b) in p.iter_mut().zip(g).zip(a).zip(b) {
                let (mut pv, mut av, mut bv) = (p.to_f64(), a.to_f64(), b.to_f64());
                f(&mut pv, g.to_f64(), &mut av, &mut bv);
                (*p, *a, *b) = (T::from_f64(pv), T::from_f64(av), T::from_f64(bv));
            }
        }
        (Some(a), None) => {
            for ((p, g), a) in p.iter_mut().zip(g).zip(a) {
                let (mut pv, mut av, mut bv) = (p.to_f64(), a.to_f64(), 0.0);
                f(&mut pv, g.to_f64(), &mut av, &mut bv);
                (*p, *a) = (T::from_f64(pv), T::from_f64(av));
            }
        }
        (None, _) => {
            for (p, g) in p.iter_mut().zip(g) {
                let (mut pv, mut av, mut bv) = (p.to_f64(), 0.0, 0.0);
                f(&mut pv, g.to_f64(), &mut av, &mut bv);
                *p = T::from_f64(pv);
            }
        }
    }
}

/// Rows stored per parallel task of a lazy update.
const ROWS_PER_TASK: usize = 4096;

/// The lazy update of the stored `rows` (sorted, unique, each `< first_row + p.len() / w`),
/// whose values are `g` (row `k` at `g[k*w..]`); `p`, `a`, `b` start at row `first_row`.
/// Large row sets split in two at a stored row, so the halves write disjoint slices.
#[allow(clippy::too_many_arguments)]
fn lazy<T: Element, F>(
    f: &F,
    rows: &[i64],
    first_row: usize,
    w: usize,
    p: &mut [T],
    g: &[T],
    a: Option<&mut [T]>,
    b: Option<&mut [T]>,
) where
    F: Fn(&mut f64, f64, &mut f64, &mut f64) + Sync,
{
    if rows.len() > ROWS_PER_TASK && crate::kernels::parallel::enabled() {
        let mid = rows.len() / 2;
        let cut = (rows[mid] as usize - first_row) * w;
        let (p0, p1) = p.split_at_mut(cut);
        let (g0, g1) = g.split_at(mid * w);
        let (a0, a1) = split(a, cut);
        let (b0, b1) = split(b, cut);
        rayon::join(
            || lazy(f, &rows[..mid], first_row, w, p0, g0, a0, b0),
            || lazy(f, &rows[mid..], rows[mid] as usize, w, p1, g1, a1, b1),
        );
        return;
    }
    let (mut a, mut b) = (a, b);
    for (k, &r) in rows.iter().enumerate() {
        // The rows are scattered over a large table: ask for the lines of a row a few
        // iterations ahead so that the memory latency overlaps this row's arithmetic.
        if let Some(&ahead) = rows.get(k + PREFETCH_AHEAD) {
            let at = (ahead as usize - first_row) * w;
            prefetch(p, at);
            for s in [a.as_deref(), b.as_deref()].into_iter().flatten() {
                prefetch(s, at);
            }
        }
        let at = (r as usize - first_row) * w..(r as usize - first_row + 1) * w;
        apply(
            f,
            &mut p[at.clone()],
            &g[k * w..(k + 1) * w],
            a.as_deref_mut().map(|s| &mut s[at.clone()]),
            b.as_deref_mut().map(|s| &mut s[at.clone()]),
        );
    }
}

/// How many stored rows ahead the lazy update prefetches.
const PREFETCH_AHEAD: usize = 24;

/// A hint to load the cache line of `s[i]` (nothing when out of range, or off x86-64).
#[inline(always)]
fn prefetch<T>(s: &[T], i: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if let Some(x) = s.get(i) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` is `unsafe` only for needing SSE, which every x86-64 CPU has
        // (it is in the target's baseline). A prefetch is a hint: it reads nothing the
        // program observes and never faults, and the pointer comes from a live reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (s, i);
}

/// An optional slice split at `cut`.
type Halves<'s, T> = (Option<&'s mut [T]>, Option<&'s mut [T]>);

fn split<T>(s: Option<&mut [T]>, cut: usize) -> Halves<'_, T> {
    match s {
        Some(s) => {
            let (x, y) = s.split_at_mut(cut);
            (Some(x), Some(y))
        }
        None => (None, None),
    }
}

/// `s` cut into `CHUNK`-element pieces (`None` stays `None` for every piece).
fn pieces<T>(s: Option<&mut [T]>, count: usize) -> Vec<Option<&mut [T]>> {
    match s {
        Some(s) => s.chunks_mut(CHUNK).map(Some).collect(),
        None => (0..count).map(|_| None).collect(),
    }
}

fn update_as<T: Element, F>(param: &Tensor, grad: &Tensor, states: &[&Tensor], f: &F) -> Result<()>
where
    F: Fn(&mut f64, f64, &mut f64, &mut f64) + Sync,
{
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
    let n = param.numel();
    let vs = values.storage()?;
    let vals = vs.read::<T>()?;
    let g = &vals[values.layout().offset()..];
    let ps = param.storage()?;
    let mut pg = ps.write::<T>()?;
    let s0 = states.first().map(|s| s.storage()).transpose()?;
    let s1 = states.get(1).map(|s| s.storage()).transpose()?;
    let mut w0 = s0.as_ref().map(|s| s.write::<T>()).transpose()?;
    let mut w1 = s1.as_ref().map(|s| s.write::<T>()).transpose()?;
    // Every tensor here holds `n` elements from offset 0 (parameters and states own their
    // storage, `check_params`); slicing checks it again.
    let p = &mut pg[..n];
    let a = w0.as_deref_mut().map(|w| &mut w[..n]);
    let b = w1.as_deref_mut().map(|w| &mut w[..n]);
    match rows {
        Some(rows) => lazy(f, &rows, 0, row_len, p, g, a, b),
        None if n > CHUNK && crate::kernels::parallel::enabled() => {
            let count = n.div_ceil(CHUNK);
            let tasks: Vec<_> = p
                .chunks_mut(CHUNK)
                .zip(g[..n].chunks(CHUNK))
                .zip(pieces(a, count).into_iter().zip(pieces(b, count)))
                .collect();
            tasks
                .into_par_iter()
                .for_each(|((p, g), (a, b))| apply(f, p, g, a, b));
        }
        None => apply(f, p, &g[..n], a, b),
    }
    Ok(())
}
