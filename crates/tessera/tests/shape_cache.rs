//! The shape-descriptor cache (docs/design.md C1, seed 004): dedup, identity equality, reclamation,
//! concurrency and overflow errors. Each test uses its own `ShapeCache` so `len()` is exact
//! even while other tests run in parallel threads.

use std::sync::{Arc, Barrier};

use proptest::prelude::*;
use tessera::shape::{ShapeCache, DEFAULT_RETAIN_PER_STRIPE, NUM_STRIPES, PIN_MAX_RANK};
use tessera::ErrorKind;

/// Naive reference for C1's derived facts: contiguity ignoring size-1 dims, empty = contiguous.
fn naive_c_contiguous(dims: &[usize], strides: &[isize]) -> bool {
    if dims.contains(&0) {
        return true;
    }
    let mut expected = 1isize;
    for i in (0..dims.len()).rev() {
        if dims[i] != 1 {
            if strides[i] != expected {
                return false;
            }
            expected *= dims[i] as isize;
        }
    }
    true
}

fn geometry() -> impl Strategy<Value = (Vec<usize>, Vec<isize>)> {
    (0usize..5).prop_flat_map(|rank| {
        (
            prop::collection::vec(0usize..5, rank),
            prop::collection::vec(-30isize..30, rank),
        )
    })
}

proptest! {
    /// C1: equal geometries give the same descriptor (identity), unequal ones different ones.
    #[test]
    fn c1_dedup_is_identity((d1, s1) in geometry(), (d2, s2) in geometry()) {
        let cache = ShapeCache::new();
        let a = cache.intern(&d1, &s1).unwrap();
        let b = cache.intern(&d2, &s2).unwrap();
        let a2 = cache.intern(&d1, &s1).unwrap();
        prop_assert_eq!(&a, &a2);
        prop_assert_eq!(a == b, d1 == d2 && s1 == s2);
        prop_assert_eq!(cache.len(), if a == b { 1 } else { 2 });
    }

    /// C1: derived facts match a naive reference.
    #[test]
    fn c1_derived_facts((dims, strides) in geometry()) {
        let cache = ShapeCache::new();
        let s = cache.intern(&dims, &strides).unwrap();
        prop_assert_eq!(s.rank(), dims.len());
        prop_assert_eq!(s.dims(), &dims[..]);
        prop_assert_eq!(s.strides(), &strides[..]);
        prop_assert_eq!(s.numel(), dims.iter().product::<usize>());
        prop_assert_eq!(s.is_c_contiguous(), naive_c_contiguous(&dims, &strides));
        let (rd, rs): (Vec<usize>, Vec<isize>) = (dims.iter().rev().copied().collect(), strides.iter().rev().copied().collect());
        prop_assert_eq!(s.is_f_contiguous(), naive_c_contiguous(&rd, &rs));
        let c = cache.contiguous(&dims).unwrap();
        prop_assert!(c.is_c_contiguous());
    }
}

#[test]
fn c1_contiguous_equals_explicit_strides() {
    let cache = ShapeCache::new();
    let a = cache.contiguous(&[2, 3, 4]).unwrap();
    let b = cache.intern(&[2, 3, 4], &[12, 4, 1]).unwrap();
    assert_eq!(a, b);
    assert_eq!(cache.len(), 1);
    let rank0 = cache.contiguous(&[]).unwrap();
    assert_eq!(rank0.numel(), 1);
    assert_eq!(cache.len(), 2);
    // Different caches never share descriptors.
    let other = ShapeCache::new();
    assert_ne!(other.contiguous(&[2, 3, 4]).unwrap(), a);
}

#[test]
fn c1_reclamation_after_10000_distinct_shapes() {
    let cache = ShapeCache::with_retention(0);
    let keep = cache.contiguous(&[7, 7]).unwrap();
    let before = cache.len();
    let nodes_before = cache.node_count();
    let shapes: Vec<_> = (0..10_000usize)
        .map(|i| cache.contiguous(&[i % 97 + 1, i / 97 + 1, 3]).unwrap())
        .collect();
    assert_eq!(cache.len(), before + 10_000);
    // Re-interning while alive finds the same descriptors.
    for (i, s) in shapes.iter().enumerate().step_by(101) {
        assert_eq!(&cache.contiguous(&[i % 97 + 1, i / 97 + 1, 3]).unwrap(), s);
    }
    drop(shapes);
    assert_eq!(cache.len(), before);
    assert_eq!(
        cache.node_count(),
        nodes_before,
        "trie paths are pruned, not only the values"
    );
    drop(keep);
    assert_eq!(cache.len(), 0);
    assert_eq!(cache.node_count(), 0);
}

#[test]
fn c1_descriptor_outlives_nothing_after_last_handle() {
    let cache = ShapeCache::with_retention(0);
    let a = cache.intern(&[3], &[2]).unwrap();
    let b = a.clone();
    drop(a);
    assert_eq!(cache.len(), 1, "a clone still holds it");
    drop(b);
    assert_eq!(cache.len(), 0);
    // Interning again after reclamation builds a fresh, valid descriptor.
    let c = cache.intern(&[3], &[2]).unwrap();
    assert_eq!(c.strides(), &[2]);
    assert_eq!(cache.len(), 1);
}

/// Threads create and drop overlapping shapes concurrently; afterwards nothing leaks and every
/// handle seen concurrently for one geometry was the same descriptor.
#[test]
fn c1_concurrent_stress_leaks_nothing() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 3_000;
    let cache = ShapeCache::new();
    let start = Arc::new(Barrier::new(THREADS));
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (cache, start) = (cache.clone(), Arc::clone(&start));
            scope.spawn(move || {
                start.wait();
                let mut held = Vec::new();
                for r in 0..ROUNDS {
                    // Overlapping key space across threads: 64 geometries.
                    let k = (r * 7 + t * 13) % 64;
                    let s = cache
                        .intern(&[k % 8 + 1, k / 8 + 1], &[(k / 8 + 1) as isize, 1])
                        .unwrap();
                    let again = cache
                        .intern(&[k % 8 + 1, k / 8 + 1], &[(k / 8 + 1) as isize, 1])
                        .unwrap();
                    assert_eq!(s, again);
                    assert_eq!(s.dims(), &[k % 8 + 1, k / 8 + 1]);
                    held.push(s);
                    if held.len() > 5 {
                        held.swap_remove(r % held.len());
                    }
                }
            });
        }
    });
    assert!(
        cache.len() <= NUM_STRIPES * DEFAULT_RETAIN_PER_STRIPE,
        "only retained ones remain"
    );
    assert_eq!(cache.len(), cache.retained());
    cache.release_retained();
    assert_eq!(
        cache.len(),
        0,
        "every handle dropped, so every descriptor must be freed"
    );
    assert_eq!(cache.node_count(), 0);
}

/// Retention is bounded: the default cache keeps at most `retain` released descriptors per
/// stripe, and releasing them restores the exact count.
#[test]
fn c1_retention_is_bounded_and_releasable() {
    let cache = ShapeCache::new();
    let keep = cache.contiguous(&[9, 9]).unwrap();
    let shapes: Vec<_> = (1..=10_000usize)
        .map(|i| cache.contiguous(&[i, 2]).unwrap())
        .collect();
    assert_eq!(cache.len(), 10_001);
    drop(shapes);
    assert!(
        cache.len() <= 1 + NUM_STRIPES * DEFAULT_RETAIN_PER_STRIPE,
        "len {}",
        cache.len()
    );
    assert!(cache.retained() <= NUM_STRIPES * DEFAULT_RETAIN_PER_STRIPE);
    cache.release_retained();
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.contiguous(&[9, 9]).unwrap(), keep);
    drop(keep);
    assert_eq!(cache.len(), 0);
    // A retained descriptor is found again instead of rebuilt.
    let a = cache.contiguous(&[5, 5]).unwrap();
    let addr = a.dims().as_ptr();
    drop(a);
    assert_eq!(cache.len(), 1, "retained after its last handle");
    assert_eq!(cache.contiguous(&[5, 5]).unwrap().dims().as_ptr(), addr);
    // Handles may outlive their cache; dropping the cache frees what it retained.
    let survivor = cache.contiguous(&[6]).unwrap();
    drop(cache);
    assert_eq!(survivor.dims(), &[6]);
}

#[test]
fn c1_overflow_is_an_error() {
    let cache = ShapeCache::new();
    let big = 1usize << 62;
    assert!(matches!(
        cache.contiguous(&[big, 4]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    assert!(matches!(
        cache
            .contiguous(&[usize::MAX])
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    // NumPy rejects an empty shape whose other dims overflow.
    assert!(matches!(
        cache
            .contiguous(&[0, 1 << 40, 1 << 40])
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    // A stride that cannot reach its last element.
    assert!(matches!(
        cache
            .intern(&[3], &[isize::MAX])
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    assert!(matches!(
        cache
            .intern(&[2], &[isize::MIN])
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    assert!(matches!(
        cache.intern(&[2, 3], &[1]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidShape(_))
    ));
    assert_eq!(cache.len(), 0, "failed lookups leave nothing behind");
    // Byte size: fits as elements, not as bytes.
    let s = cache.contiguous(&[1 << 61]).unwrap();
    assert!(s.checked_bytes(2).is_ok());
    assert!(matches!(
        s.checked_bytes(8).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
}

#[test]
fn c1_tail_is_interned_once_in_the_same_cache_and_freed_with_its_parent() {
    let cache = ShapeCache::with_retention(0);
    let s = cache.intern(&[2, 3, 4], &[1, 8, 2]).unwrap();
    let t = s.tail().unwrap().unwrap().clone();
    assert_eq!(t, cache.intern(&[3, 4], &[8, 2]).unwrap());
    // Asked again: the same descriptor, no new one.
    assert!(std::ptr::eq(
        s.tail().unwrap().unwrap(),
        s.tail().unwrap().unwrap()
    ));
    assert_eq!(cache.len(), 2);
    assert_eq!(t.tail().unwrap().unwrap().dims(), &[4]);
    assert!(t
        .tail()
        .unwrap()
        .unwrap()
        .tail()
        .unwrap()
        .unwrap()
        .tail()
        .unwrap()
        .is_none());
    assert_eq!(cache.len(), 4, "[2,3,4] [3,4] [4] []");
    drop(t);
    assert_eq!(cache.len(), 4, "the parent keeps its tail");
    drop(s);
    assert_eq!(cache.len(), 0, "the chain is freed with its head");
    assert_eq!(cache.node_count(), 0);
}

#[test]
fn c1_reversed_is_memoised_only_on_pinned_descriptors_and_leaks_no_cycle() {
    // Counted descriptors: reversed twice is the same geometry, and nothing is memoised
    // (a memo would be a cycle [2,3,4] <-> [4,3,2] that is never freed).
    let cache = ShapeCache::with_pinning(0, 0);
    let s = cache.intern(&[2, 3, 4], &[1, 8, -2]).unwrap();
    let r = s.reversed().unwrap();
    assert_eq!((r.dims(), r.strides()), (&[4, 3, 2][..], &[-2, 8, 1][..]));
    assert_eq!(r.reversed().unwrap(), s);
    assert_eq!(cache.len(), 2);
    drop(r);
    assert_eq!(cache.len(), 1, "s does not keep its reversal");
    drop(s);
    assert_eq!(cache.len(), 0);

    // Pinned: the memo gives the same descriptor each time.
    let cache = ShapeCache::with_pinning(0, 8);
    let s = cache.intern(&[5, 6], &[6, 1]).unwrap();
    assert!(s.is_pinned());
    let (a, b) = (s.reversed().unwrap(), s.reversed().unwrap());
    assert_eq!(a, cache.intern(&[6, 5], &[1, 6]).unwrap());
    assert_eq!(a.reversed().unwrap(), s);
    assert!(std::ptr::eq(a.dims().as_ptr(), b.dims().as_ptr()));
    assert_eq!(cache.len(), 2);
}

proptest! {
    /// `reversed` and `swapped_last` against the dims and strides permuted by hand, on
    /// pinned and counted descriptors (a budget of 4 pins the first few), asked twice.
    #[test]
    fn c1_reversed_and_swapped_last_permute_the_geometry(
        cases in prop::collection::vec(any_rank_geometry(), 1..12),
    ) {
        let cache = ShapeCache::with_pinning(0, 4);
        for (dims, strides) in cases {
            let s = cache.intern(&dims, &strides).unwrap();
            let rev = |v: &[usize]| v.iter().rev().copied().collect::<Vec<_>>();
            let revs = |v: &[isize]| v.iter().rev().copied().collect::<Vec<_>>();
            let (mut sd, mut ss) = (dims.clone(), strides.clone());
            if dims.len() >= 2 {
                sd.swap(dims.len() - 2, dims.len() - 1);
                ss.swap(dims.len() - 2, dims.len() - 1);
            }
            for _ in 0..2 {
                let r = s.reversed().unwrap();
                prop_assert_eq!((r.dims(), r.strides()), (&rev(&dims)[..], &revs(&strides)[..]));
                let w = s.swapped_last().unwrap();
                prop_assert_eq!((w.dims(), w.strides()), (&sd[..], &ss[..]));
            }
        }
    }
}

/// A geometry of rank 0..=10 (some above `PIN_MAX_RANK`), for the pinning tests.
fn any_rank_geometry() -> impl Strategy<Value = (Vec<usize>, Vec<isize>)> {
    (0usize..=10).prop_flat_map(|rank| {
        (
            prop::collection::vec(1usize..4, rank),
            prop::collection::vec(-4isize..5, rank),
        )
    })
}

proptest! {
    /// C1 pinning against a naive model: in creation order, the first `budget` distinct
    /// geometries of rank at most `PIN_MAX_RANK` are pinned and every other one is counted;
    /// a pinned handle equals (and hashes as) every other handle of its geometry; after every
    /// handle drops, exactly the pinned ones stay live.
    #[test]
    fn c1_pinning_follows_the_budget_in_creation_order(
        keys in prop::collection::vec(any_rank_geometry(), 1..40),
        budget in 0usize..12,
    ) {
        use std::collections::hash_map::DefaultHasher;
        use std::hash::{Hash, Hasher};
        let hash = |s: &tessera::shape::Shape| {
            let mut h = DefaultHasher::new();
            s.hash(&mut h);
            h.finish()
        };
        let cache = ShapeCache::with_pinning(0, budget);
        let mut seen: Vec<&(Vec<usize>, Vec<isize>)> = Vec::new();
        let mut pinned_model: Vec<&(Vec<usize>, Vec<isize>)> = Vec::new();
        let mut held = Vec::new();
        for key in &keys {
            let (dims, strides) = key;
            let s = cache.intern(dims, strides).unwrap();
            if !seen.contains(&key) {
                seen.push(key);
                if dims.len() <= PIN_MAX_RANK && pinned_model.len() < budget {
                    pinned_model.push(key);
                }
            }
            prop_assert_eq!(s.is_pinned(), pinned_model.contains(&key), "{:?}", key);
            // Found again (front cache) and through a clone: the same descriptor.
            let again = cache.intern(dims, strides).unwrap();
            prop_assert_eq!(&s, &again);
            prop_assert_eq!(hash(&s), hash(&again));
            prop_assert_eq!(again.is_pinned(), s.is_pinned());
            prop_assert_eq!((s.dims(), s.strides()), (&dims[..], &strides[..]));
            held.push(s);
        }
        prop_assert_eq!(cache.len(), seen.len());
        prop_assert_eq!(cache.pinned(), pinned_model.len());
        drop(held);
        prop_assert_eq!(cache.len(), pinned_model.len(), "only the pinned ones stay");
        for key in &pinned_model {
            prop_assert!(cache.intern(&key.0, &key.1).unwrap().is_pinned());
        }
    }
}

/// C1 pinning under threads: eight threads interning overlapping geometries never pin more
/// than the budget, every geometry has one descriptor, and only the pinned ones outlive
/// their handles.
#[test]
fn c1_concurrent_pinning_stays_within_the_budget() {
    const THREADS: usize = 8;
    const BUDGET: usize = 40;
    let cache = ShapeCache::with_pinning(0, BUDGET);
    let start = Arc::new(Barrier::new(THREADS));
    let seen: Vec<Vec<tessera::shape::Shape>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (cache, start) = (cache.clone(), Arc::clone(&start));
                scope.spawn(move || {
                    start.wait();
                    (0..200usize)
                        .map(|r| {
                            let k = (r * 7 + t * 13) % 100;
                            cache.contiguous(&[k + 1, 2]).unwrap()
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(cache.pinned(), BUDGET);
    for k in 0..100usize {
        let all: Vec<_> = seen
            .iter()
            .flatten()
            .filter(|s| s.dims()[0] == k + 1)
            .collect();
        assert!(
            all.windows(2).all(|w| w[0] == w[1]),
            "one descriptor for [{}, 2]",
            k + 1
        );
    }
    let pinned = seen.iter().flatten().filter(|s| s.is_pinned()).count();
    assert!(pinned > 0);
    drop(seen);
    assert_eq!(cache.len(), BUDGET);
}

/// Tensors use the global cache, which pins: a view's shape carries no reference count.
#[test]
fn c1_the_global_cache_pins_its_first_descriptors() {
    let global = ShapeCache::global();
    let t = tessera::Tensor::zeros(&[3, 5, 7], tessera::DType::F32).unwrap();
    assert_eq!(t.shape(), &[3, 5, 7]);
    assert!(
        global.pinned() > 0,
        "the first descriptors a process makes are pinned"
    );
    assert!(global.pinned() <= tessera::shape::GLOBAL_PIN_BUDGET);
}
