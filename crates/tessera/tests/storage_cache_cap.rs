//! The storage region cache is capped by `TESSERA_CACHE_MAX_BYTES` (issue 15, item 7): freed
//! large buffers beyond the cap go back to the system instead of staying resident. One test
//! per binary: it sets the variable before the first allocation reads it.

use tessera::{DType, Storage};

const MIB: usize = 1 << 20;

/// Resident set size of this process, in bytes, from `/proc/self/statm` (an observation
/// independent of the cache's own bookkeeping).
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: `sysconf` has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize
}

/// A storage of `mib` MiB with every page touched (so it is resident).
fn touched(mib: usize) -> Storage {
    let s = Storage::zeroed(DType::U8, mib * MIB).unwrap();
    s.write::<u8>()
        .unwrap()
        .iter_mut()
        .step_by(4096)
        .for_each(|b| *b = 1);
    s
}

#[test]
fn freed_buffers_beyond_the_cap_are_returned_to_the_system() {
    std::env::set_var("TESSERA_CACHE_MAX_BYTES", (8 * MIB).to_string());
    let before = rss();
    // Four 32 MiB buffers: each is larger than the 8 MiB cap, so none may be cached.
    let big: Vec<Storage> = (0..4).map(|_| touched(32)).collect();
    assert!(rss() >= before + 100 * MIB, "buffers not resident");
    drop(big);
    let kept = rss().saturating_sub(before);
    assert!(
        kept < 16 * MIB,
        "{} MiB stay resident after the drop",
        kept / MIB
    );
    // Buffers under the cap are cached until the cap is reached: 3 x 6 MiB keeps one.
    let small: Vec<Storage> = (0..3).map(|_| touched(6)).collect();
    drop(small);
    assert_eq!(tessera::storage::cache_max_bytes(), 8 * MIB);
    let cached = tessera::storage::cached_bytes();
    assert!(cached > 0 && cached <= 8 * MIB, "{cached} bytes cached");
    let kept = rss().saturating_sub(before);
    assert!(
        kept < 16 * MIB,
        "{} MiB stay resident after the drop",
        kept / MIB
    );
}
