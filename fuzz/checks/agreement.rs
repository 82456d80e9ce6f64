//! The MPI backend's opening agreement (docs/design.md D7): every rank reads the records that
//! its peers sent, which may hold any words. The verdict never panics, and every rank reaches
//! the same outcome as a naive reading of the records: an error of one kind when some rank
//! failed, another when kinds, dtypes, digests or the pair sum disagree, otherwise the path
//! that every rank wanted. Also any number of words, so a record cut short is refused.
use tessera_dist::agreement::{fuzz_verdict, FUZZ_RECORD};
use tessera_dist::DistError;

use super::common::Bytes;

/// One input: panics (fails) when the property above does not hold.
pub fn check(data: &[u8]) {
    let (record, failed, wants_shm) = FUZZ_RECORD;
    let mut bytes = Bytes(data);
    let words = usize::from(bytes.u8() % 48);
    // Words are mostly small (so records often agree), sometimes anything.
    let all: Vec<u64> = (0..words)
        .map(|_| match bytes.u8() % 4 {
            0 => bytes.i64() as u64,
            v => u64::from(v - 1),
        })
        .collect();
    let p = words / record;
    if words % record != 0 || p == 0 {
        // A partial record (or none): every reader refuses, never panics.
        for me in 0..p + 1 {
            assert!(matches!(fuzz_verdict(me, &all), Err(DistError::Comm(_))));
        }
        if p == 0 {
            return;
        }
    }
    let all = &all[..p * record];
    let recs: Vec<&[u64]> = all.chunks(record).collect();
    let any_failed = recs.iter().any(|x| x[0] & failed != 0);
    let differs = (1..4).any(|i| recs.iter().any(|x| x[i] != recs[0][i]));
    let pairs = recs.iter().map(|x| x[4]).fold(0u64, u64::wrapping_add);
    let shared = recs.iter().all(|x| x[0] & wants_shm != 0);
    for me in 0..p {
        match fuzz_verdict(me, all) {
            Ok(s) => assert!(!any_failed && !differs && pairs == 0 && s == shared),
            Err(DistError::Comm(_)) => assert!(any_failed),
            Err(DistError::Mismatch(_)) => assert!(!any_failed && (differs || pairs != 0)),
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    // A reader past the last record is refused.
    assert!(fuzz_verdict(p, all).is_err());
}
