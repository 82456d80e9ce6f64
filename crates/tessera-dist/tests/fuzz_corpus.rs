//! The fuzz targets' properties on stable Rust, as part of `cargo test` (docs/contributing.md,
//! "Fuzzing"): every input of the committed corpus (`fuzz/corpus/<target>/`) is run through
//! its target's check, then seeded mutations of those inputs (bit flips, edge bytes,
//! insertions, deletions, splices: the moves libFuzzer makes, without its coverage guidance).
//! The checks are the libFuzzer targets' own code (`fuzz/checks/`, included by path).
//!
//! `TESSERA_FUZZ_MUTATIONS` sets the mutations per target (default 20 000) and
//! `TESSERA_FUZZ_SEED` the seed (default: from the clock, printed, so a failure can be
//! replayed). Coverage-guided fuzzing under AddressSanitizer stays `./scripts/fuzz`.

#[path = "../../../fuzz/checks/mod.rs"]
mod checks;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// SplitMix64: a small, well-mixed generator, so the mutation stream depends on the seed only.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// The corpus of one target, sorted by file name (so a seed always means the same inputs).
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("a corpus file");
            (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// One to four libFuzzer-style edits of `input`, sometimes spliced with `other`.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    const EDGES: [u8; 6] = [0, 1, 0x7f, 0x80, 0xfe, 0xff];
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(6) {
            0 if at < out.len() => out[at] ^= 1 << rng.below(8),
            1 if at < out.len() => out[at] = EDGES[rng.below(EDGES.len())],
            2 => out.insert(at, rng.next() as u8),
            3 if at < out.len() => {
                out.remove(at);
            }
            4 if !other.is_empty() => {
                let from = rng.below(other.len());
                let len = 1 + rng.below((other.len() - from).min(16));
                out.splice(at..at, other[from..from + len].iter().copied());
            }
            _ => out.truncate(at),
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `check` on `input`; a panic becomes a failure line naming the input.
fn run(check: checks::Check, input: &[u8], what: &str, failures: &mut Vec<String>) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| check(input))) {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("(no message)");
        failures.push(format!("{what}: {message}; input (hex) {}", hex(input)));
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} must be an integer, got {v:?}"))
    })
}

#[test]
fn every_corpus_input_and_its_mutations_keep_the_fuzz_properties() {
    let mutations = env_u64("TESSERA_FUZZ_MUTATIONS").unwrap_or(20_000) as usize;
    let seed = env_u64("TESSERA_FUZZ_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    println!(
        "fuzz corpus replay: seed {seed} (TESSERA_FUZZ_SEED), {mutations} mutations per target"
    );
    let mut failures = Vec::new();
    for (index, (target, check)) in checks::TARGETS.into_iter().enumerate() {
        let inputs = corpus(target);
        assert!(
            inputs.len() >= 10,
            "{target}: corpus has {} inputs; is fuzz/corpus/{target} checked out?",
            inputs.len()
        );
        for (name, bytes) in &inputs {
            run(check, bytes, &format!("{target}/{name}"), &mut failures);
        }
        let mut rng = Rng(seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for _ in 0..mutations {
            let (name, base) = &inputs[rng.below(inputs.len())];
            let (_, other) = &inputs[rng.below(inputs.len())];
            let input = mutate(&mut rng, base, other);
            run(
                check,
                &input,
                &format!("{target}, a mutation of {name}"),
                &mut failures,
            );
        }
        println!(
            "{target}: {} corpus inputs, {mutations} mutations",
            inputs.len()
        );
    }
    assert!(
        failures.is_empty(),
        "{} inputs broke a fuzz property (seed {seed}); save one under fuzz/artifacts/<target>/ \
         and replay it with `cargo fuzz run <target> <file>`; the first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

/// The mutator and the hex printer do what the failure report relies on: one seed gives one
/// stream, different seeds different ones.
#[test]
fn mutations_depend_on_the_seed_and_hex_prints_every_byte() {
    let input = b"tessera";
    let a: Vec<_> = (0..20)
        .map(|i| mutate(&mut Rng(i), input, b"xyz"))
        .collect();
    let b: Vec<_> = (0..20)
        .map(|i| mutate(&mut Rng(i), input, b"xyz"))
        .collect();
    assert_eq!(a, b);
    assert!(
        a.iter().any(|m| m.as_slice() != input),
        "some mutation changes the input"
    );
    let c: Vec<_> = (100..120)
        .map(|i| mutate(&mut Rng(i), input, b"xyz"))
        .collect();
    assert_ne!(a, c, "other seeds, other mutations");
    assert_eq!(hex(&[0, 0x0f, 0xa0, 0xff]), "000fa0ff");
}
