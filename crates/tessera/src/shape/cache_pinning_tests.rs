//! Tests of pinning and of the table of pinned descriptors (`cache.rs`).

use super::*;

/// The one `unsafe` of pinning (`Descriptor::pinned_ref`) under Miri: pinned handles of
/// the global cache, found through the trie and through the table of pinned descriptors
/// (or the front cache), cloned and
/// dropped, read the same live descriptor (the leaked reference keeps it; the trie's weak
/// references keep it reachable, so Miri sees no leak).
#[test]
fn pinned_handles_stay_valid_after_every_other_handle_drops() {
    let cache = ShapeCache::global();
    let a = cache.intern(&[3, 1, 4, 1, 5], &[20, 20, 5, 5, 1]).unwrap();
    if !a.is_pinned() {
        // The budget went to other tests of this process: nothing pinned to check.
        assert_eq!(cache.pinned(), GLOBAL_PIN_BUDGET);
        return;
    }
    let dims = a.dims().as_ptr();
    let b = a.clone();
    drop(a);
    let tail = b.tail().unwrap().unwrap().clone();
    drop(b);
    cache.release_retained();
    let again = cache.intern(&[3, 1, 4, 1, 5], &[20, 20, 5, 5, 1]).unwrap();
    assert!(again.is_pinned());
    assert_eq!(
        again.dims().as_ptr(),
        dims,
        "the same descriptor, never freed"
    );
    assert_eq!(again.strides(), &[20, 20, 5, 5, 1]);
    assert_eq!(tail.dims(), &[1, 4, 1, 5]);
    assert_eq!(again.tail().unwrap().unwrap(), &tail);
}

/// The table of pinned descriptors answers any thread (a new thread's front cache is
/// empty, so a hit there comes from the table or the trie: both give the one descriptor),
/// and never hands one cache's descriptor to another cache.
#[test]
fn pinned_table_serves_every_thread_and_only_the_descriptors_cache() {
    // Statics, so that the pinned descriptors stay reachable (their caches' tries) and Miri
    // reports no leak.
    static A: LazyLock<ShapeCache> = LazyLock::new(|| ShapeCache::with_pinning(0, 4));
    static B: LazyLock<ShapeCache> = LazyLock::new(|| ShapeCache::with_pinning(0, 4));
    let (a, b) = (&*A, &*B);
    let (dims, strides) = ([7usize, 3, 2], [-6isize, 2, 1]);
    let first = a.intern(&dims, &strides).unwrap();
    assert!(first.is_pinned());
    assert_eq!(first.offset_span(), (-36, 5));
    let from_thread = std::thread::scope(|s| {
        s.spawn(|| {
            let h = a.intern(&dims, &strides).unwrap();
            h.dims().as_ptr() as usize
        })
        .join()
        .unwrap()
    });
    assert_eq!(from_thread, first.dims().as_ptr() as usize);
    // Same geometry in another cache: that cache's own descriptor, not `a`'s from the table.
    let other = b.intern(&dims, &strides).unwrap();
    assert!(other.is_pinned());
    assert_ne!(other.dims().as_ptr(), first.dims().as_ptr());
    assert_eq!(b.len(), 1);
    // And `a` still finds its own (the table slot now holds `b`'s).
    let again = a.intern(&dims, &strides).unwrap();
    assert_eq!(again.dims().as_ptr(), first.dims().as_ptr());
    assert_eq!(a.len(), 1);
}

/// The span a descriptor keeps is the naive walk over its dims (empty shapes reach nothing).
#[test]
fn kept_span_is_the_walk_over_the_dims() {
    let cache = ShapeCache::with_retention(0);
    for (dims, strides) in [
        (vec![], vec![]),
        (vec![4], vec![-3]),
        (vec![2, 3, 4], vec![12, -4, 1]),
        (vec![5, 1, 2], vec![0, 100, -7]),
        (vec![3, 0, 4], vec![-8, 4, 1]),
    ] {
        let s = cache.intern(&dims, &strides).unwrap();
        let (mut lo, mut hi) = (0isize, 0isize);
        if !dims.contains(&0) {
            for (&d, &st) in dims.iter().zip(&strides) {
                let reach = (d as isize - 1) * st;
                if reach < 0 {
                    lo += reach;
                } else {
                    hi += reach;
                }
            }
        }
        assert_eq!(s.offset_span(), (lo, hi), "{dims:?} {strides:?}");
    }
}
