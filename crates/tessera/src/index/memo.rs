//! A per-thread memo of the last view [`super::apply`] computed: indexing a geometry with the
//! same specs again (a loop over `t[key]`, the same key on many tensors of one shape) skips the
//! spec walk and the key hash, and goes straight to the shape cache's front lookup.
//!
//! The memo is keyed and valued by value: (base dims, base strides, specs) -> (view dims, view
//! strides, view offset minus base offset, key hash of the view). It holds no descriptor
//! handle, so it never keeps a shape alive and costs no reference-count traffic. Only
//! successful results are stored; errors are recomputed (and raised) every time.

use std::cell::RefCell;

use super::IndexSpec;
use crate::shape::DIM_INLINE;

/// Highest base or view rank the memo stores.
const MEMO_RANK: usize = DIM_INLINE;
/// Most specs the memo stores.
const MEMO_SPECS: usize = 8;

/// The remembered view of one (geometry, specs) pair.
struct Entry {
    base_rank: usize,
    view_rank: usize,
    n_specs: usize,
    base_dims: [usize; MEMO_RANK],
    base_strides: [isize; MEMO_RANK],
    specs: [IndexSpec; MEMO_SPECS],
    view_dims: [usize; MEMO_RANK],
    view_strides: [isize; MEMO_RANK],
    delta: isize,
    hash: u64,
}

thread_local! {
    static MEMO: RefCell<Entry> = const {
        RefCell::new(Entry {
            // No base has rank `usize::MAX`: the empty memo never hits.
            base_rank: usize::MAX,
            view_rank: 0,
            n_specs: 0,
            base_dims: [0; MEMO_RANK],
            base_strides: [0; MEMO_RANK],
            specs: [IndexSpec::All; MEMO_SPECS],
            view_dims: [0; MEMO_RANK],
            view_strides: [0; MEMO_RANK],
            delta: 0,
            hash: 0,
        })
    };
}

/// Element-wise equality: for the few elements here a loop beats a `memcmp` call.
#[inline(always)]
fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The view a hit remembers: dims, strides, offset delta and key hash.
pub(super) struct Hit<'a> {
    /// Dims of the view.
    pub(super) dims: &'a [usize],
    /// Strides of the view, in elements.
    pub(super) strides: &'a [isize],
    /// View offset minus base offset.
    pub(super) delta: isize,
    /// `hash_key(dims, strides)`.
    pub(super) hash: u64,
}

/// Runs `f` on the remembered view when `(dims, strides, specs)` is the memo's key; `None` on a
/// miss (or when the thread's memo is gone, during thread teardown).
#[inline]
pub(super) fn lookup<R>(
    dims: &[usize],
    strides: &[isize],
    specs: &[IndexSpec],
    f: impl FnOnce(Hit<'_>) -> R,
) -> Option<R> {
    MEMO.try_with(|memo| {
        let e = memo.borrow();
        let rank = e.base_rank.min(MEMO_RANK);
        let n = e.n_specs;
        let hit = dims.len() == e.base_rank
            && specs.len() == n
            && same(&e.specs[..n], specs)
            && same(&e.base_dims[..rank], dims)
            && same(&e.base_strides[..rank], strides);
        hit.then(|| {
            let v = e.view_rank;
            f(Hit {
                dims: &e.view_dims[..v],
                strides: &e.view_strides[..v],
                delta: e.delta,
                hash: e.hash,
            })
        })
    })
    .ok()
    .flatten()
}

/// Remembers `(dims, strides, specs) -> view` (skipped when a rank or the spec count is too
/// large to store inline).
#[inline]
pub(super) fn store(dims: &[usize], strides: &[isize], specs: &[IndexSpec], view: Hit<'_>) {
    if dims.len() > MEMO_RANK || view.dims.len() > MEMO_RANK || specs.len() > MEMO_SPECS {
        return;
    }
    let _ = MEMO.try_with(|memo| {
        let mut e = memo.borrow_mut();
        let (b, v, n) = (dims.len(), view.dims.len(), specs.len());
        e.base_rank = b;
        e.view_rank = v;
        e.n_specs = n;
        let e = &mut *e;
        // `copy_from_slice` (a `memcpy`): on this miss path element loops cost more, mostly
        // for the 48-byte specs.
        e.base_dims[..b].copy_from_slice(dims);
        e.base_strides[..b].copy_from_slice(strides);
        e.view_dims[..v].copy_from_slice(view.dims);
        e.view_strides[..v].copy_from_slice(view.strides);
        e.specs[..n].copy_from_slice(specs);
        e.delta = view.delta;
        e.hash = view.hash;
    });
}
