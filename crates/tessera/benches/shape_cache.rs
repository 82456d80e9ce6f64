//! Shape-cache benchmark (issue: foundation). Run: `cargo bench --bench shape_cache`.
//!
//! Prints a table of ns/op, then one `ratio NAME VALUE` line per figure:
//! - `shape_cache_hit_vs_inline_copy`: cache hit / building the same descriptor inline
//!   (small-vector copy of dims and strides plus derived facts, no interning). Goal <= 1.5.
//! - `shape_cache_2thread_scaling`: throughput of 2 threads on distinct shapes / 1 thread.
//!   Goal >= 1.6.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

use dashmap::DashMap;
use smallvec::SmallVec;
use tessera::shape::ShapeCache;

const OPS: usize = 4_000_000;
const REPEATS: usize = 7;

/// What a descriptor holds when built inline without interning.
#[allow(dead_code)]
struct InlineShape {
    dims: SmallVec<[usize; 6]>,
    strides: SmallVec<[isize; 6]>,
    numel: usize,
    c_contiguous: bool,
}

#[inline(never)]
fn build_inline(dims: &[usize], strides: &[isize]) -> InlineShape {
    let numel = dims.iter().product();
    let mut expected = 1isize;
    let mut c_contiguous = true;
    for (&d, &s) in dims.iter().zip(strides).rev() {
        if d != 1 {
            c_contiguous &= s == expected;
            expected *= d as isize;
        }
    }
    InlineShape {
        dims: dims.into(),
        strides: strides.into(),
        numel,
        c_contiguous,
    }
}

type Key = SmallVec<[i64; 13]>;

fn key(dims: &[usize], strides: &[isize]) -> Key {
    let mut k = Key::new();
    k.push(dims.len() as i64);
    k.extend(dims.iter().map(|&d| d as i64));
    k.extend(strides.iter().map(|&s| s as i64));
    k
}

/// Best-of-REPEATS ns per op of `f` run OPS times.
fn time_ns(mut f: impl FnMut(usize)) -> f64 {
    (0..REPEATS)
        .map(|_| {
            let t = Instant::now();
            for i in 0..OPS {
                f(i);
            }
            t.elapsed().as_nanos() as f64 / OPS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Ops per second with `threads` threads each running `f(thread)` OPS times (best of REPEATS).
fn throughput(threads: usize, f: impl Fn(usize) + Sync) -> f64 {
    (0..REPEATS)
        .map(|_| {
            let barrier = Barrier::new(threads + 1);
            std::thread::scope(|s| {
                for t in 0..threads {
                    let (f, barrier) = (&f, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        for _ in 0..OPS {
                            f(t);
                        }
                    });
                }
                barrier.wait();
                let start = Instant::now();
                // Scope end joins the workers.
                start
            })
            .elapsed()
        })
        .map(|d| (threads * OPS) as f64 / d.as_secs_f64())
        .fold(0.0, f64::max)
}

fn main() {
    let dims = [8usize, 16, 32, 64];
    let strides = [16 * 32 * 64isize, 32 * 64, 64, 1];
    let other_dims = [3usize, 5, 7, 9];
    let other_strides = [5 * 7 * 9isize, 7 * 9, 9, 1];

    let inline = time_ns(|_| {
        drop(black_box(build_inline(
            black_box(&dims),
            black_box(&strides),
        )))
    });

    let cache = ShapeCache::new();
    let _keep = cache.intern(&dims, &strides).unwrap();
    let _keep2 = cache.intern(&other_dims, &other_strides).unwrap();
    let hit = time_ns(|_| {
        drop(black_box(
            cache.intern(black_box(&dims), black_box(&strides)).unwrap(),
        ))
    });

    // 256 live shapes cycled: the 64-slot front cache mostly misses, so this times the trie.
    let many: Vec<[usize; 4]> = (0..256).map(|i| [i % 16 + 1, i / 16 + 1, 32, 64]).collect();
    let _keep_many: Vec<_> = many.iter().map(|d| cache.contiguous(d).unwrap()).collect();
    let trie_hit = time_ns(|i| {
        drop(black_box(
            cache.contiguous(black_box(&many[i % 256])).unwrap(),
        ))
    });

    let mutex_map: Mutex<HashMap<Key, Arc<Key>>> = Mutex::new(HashMap::new());
    let mutex_hit = time_ns(|_| {
        let k = key(black_box(&dims), black_box(&strides));
        let mut m = mutex_map.lock().unwrap();
        let v = m.entry(k.clone()).or_insert_with(|| Arc::new(k)).clone();
        drop(m);
        drop(black_box(v));
    });

    let dash: DashMap<Key, Arc<Key>> = DashMap::new();
    let dash_hit = time_ns(|_| {
        let k = key(black_box(&dims), black_box(&strides));
        let v = match dash.get(&k) {
            Some(v) => v.clone(),
            None => dash.entry(k.clone()).or_insert_with(|| Arc::new(k)).clone(),
        };
        drop(black_box(v));
    });

    let geoms: [(&[usize], &[isize]); 2] = [(&dims, &strides), (&other_dims, &other_strides)];
    let lookup = |t: usize| {
        drop(black_box(
            cache
                .intern(black_box(geoms[t].0), black_box(geoms[t].1))
                .unwrap(),
        ))
    };
    let one = throughput(1, lookup);
    let two_distinct = throughput(2, lookup);
    let two_same = throughput(2, |_| lookup(0));
    // What this machine gives two threads of pure, unshared work (the ceiling for scaling).
    let inline_job = |t: usize| {
        drop(black_box(build_inline(
            black_box(geoms[t].0),
            black_box(geoms[t].1),
        )))
    };
    let machine_scaling = throughput(2, inline_job) / throughput(1, inline_job);

    println!("{:<44} {:>10}", "operation", "ns/op");
    println!(
        "{:<44} {:>10.1}",
        "inline small-vector descriptor (no interning)", inline
    );
    println!(
        "{:<44} {:>10.1}",
        "shape cache hit (trie + front cache)", hit
    );
    println!(
        "{:<44} {:>10.1}",
        "shape cache hit, front cache cold (trie)", trie_hit
    );
    println!("{:<44} {:>10.1}", "Mutex<HashMap> interner hit", mutex_hit);
    println!("{:<44} {:>10.1}", "DashMap interner hit", dash_hit);
    println!(
        "{:<44} {:>10.1}",
        "shape cache, 1 thread (wall ns/op)",
        1e9 / one
    );
    println!(
        "{:<44} {:>10.1}",
        "shape cache, 2 threads distinct (ns/op/thread)",
        2e9 / two_distinct
    );
    println!(
        "{:<44} {:>10.1}",
        "shape cache, 2 threads same shape (ns/op/thread)",
        2e9 / two_same
    );
    println!("ratio shape_cache_hit_vs_inline_copy {:.3}", hit / inline);
    println!(
        "ratio shape_cache_2thread_scaling {:.3}",
        two_distinct / one
    );
    println!(
        "ratio shape_cache_2thread_same_shape_scaling {:.3}",
        two_same / one
    );
    println!(
        "ratio machine_2thread_scaling_unshared_work {:.3}",
        machine_scaling
    );
    println!(
        "ratio shape_cache_hit_vs_mutex_hashmap {:.3}",
        hit / mutex_hit
    );
    println!("ratio shape_cache_hit_vs_dashmap {:.3}", hit / dash_hit);
}
