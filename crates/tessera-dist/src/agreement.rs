//! The agreement that opens every collective of the MPI backend (docs/design.md D7; issue 15,
//! items 2 and 5): the record each rank contributes and the verdict every rank reads from all
//! records. Pure (no MPI), so that it is tested and fuzzed without MPI; the MPI backend's
//! `agree` makes the one all-gather of the records.
//!
//! The record holds a failure flag (this rank's local checks or preparations failed), whether
//! this rank would take the single-host path, the collective's kind, the dtype, a digest of
//! the arguments every rank must pass alike, and a pair sum that checks the per-pair counts
//! of an all-to-all (what rank r sends to s is what s expects from r). Every rank reaches the
//! same verdict from the same records (`verdict`), so a local failure, a dtype or argument
//! mismatch, or ranks that would take different paths are an error (or one agreed path) on
//! every rank, never a hang or an MPI abort. The records come from peers, so the verdict takes
//! any words (a peer of another build, a corrupted exchange) without a panic.

#![cfg_attr(not(feature = "mpi"), allow(dead_code))]

use tessera::DType;

use crate::error::{DistError, Result};

/// Flags of a record: this rank failed locally; it would take the single-host path.
pub(crate) const FAILED: u64 = 1;
pub(crate) const WANTS_SHM: u64 = 2;
/// Words of a record: flags, kind, dtype, digest, pair sum.
pub(crate) const RECORD: usize = 5;

/// The collectives that agree (their codes in the record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Broadcast = 1,
    AllGatherV,
    AllReduce,
    ReduceScatterV,
    AllToAllV,
    AllGatherAxis,
    ReduceScatterAxis,
    AllToAllAxis,
    AllToAllViews,
    Split,
}

/// What one rank brings to the agreement, besides its local result.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Terms {
    /// The collective.
    pub kind: Kind,
    /// The dtype of the data (`None`: no data).
    pub dtype: Option<DType>,
    /// A digest of the arguments that every rank must pass alike ([`digest`]).
    pub digest: u64,
    /// This rank's share of the pair sum ([`pair_sum`]); 0 where there are no pairs.
    pub pairs: u64,
    /// Whether this rank would take the single-host path.
    pub wants_shm: bool,
}

/// A digest of `words` (FNV-1a over the words).
pub(crate) fn digest(words: impl IntoIterator<Item = usize>) -> u64 {
    words.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, w| {
        (h ^ w as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// This rank's share of the pair check of an all-to-all: `+H(me, s, sent[s])` for every
/// peer s and `-H(r, me, expected[r])` for every peer r, wrapping. Summed over all ranks it
/// is 0 when every rank expects from each peer what that peer sends it (each term cancels
/// its counterpart; a mismatch leaves a pseudo-random remainder).
pub(crate) fn pair_sum(me: usize, sent: &[u64], expected: &[u64]) -> u64 {
    let h = |from: usize, to: usize, what: u64| digest([from, to, what as usize, 0x5eed]);
    let out = sent.iter().enumerate().map(|(s, &n)| h(me, s, n));
    let inn = expected.iter().enumerate().map(|(r, &n)| h(r, me, n));
    out.fold(0u64, u64::wrapping_add)
        .wrapping_sub(inn.fold(0u64, u64::wrapping_add))
}

fn dtype_code(d: Option<DType>) -> u64 {
    d.map_or(0, |d| d as u64 + 1)
}

fn dtype_name(code: u64) -> String {
    DType::ALL
        .iter()
        .find(|&&d| dtype_code(Some(d)) == code)
        .map_or_else(|| "none".to_string(), |d| d.to_string())
}

/// The record of a rank with `terms`, failed or not.
pub(crate) fn record(terms: &Terms, failed: bool) -> [u64; RECORD] {
    let flags = if failed { FAILED } else { 0 } | if terms.wants_shm { WANTS_SHM } else { 0 };
    let dtype = dtype_code(terms.dtype);
    [flags, terms.kind as u64, dtype, terms.digest, terms.pairs]
}

/// The verdict of rank `me` from every rank's record (`all`, [`RECORD`] words per rank) and
/// its own local result, the same on every rank but for whose error comes first: a rank's own
/// failure, then another rank's failure, then mismatches (kind, dtype, arguments, pairs).
pub(crate) fn verdict(me: usize, what: &str, all: &[u64], local: Result<()>) -> Result<bool> {
    local?;
    let recs: Vec<&[u64]> = all.chunks_exact(RECORD).collect();
    let mine = match recs.get(me) {
        Some(mine) if all.len().is_multiple_of(RECORD) => mine,
        _ => {
            return Err(DistError::Comm(format!(
                "{what}: {} words are no records of {} ranks or more",
                all.len(),
                me + 1
            )))
        }
    };
    if let Some(r) = recs.iter().position(|x| x[0] & FAILED != 0) {
        return Err(DistError::Comm(format!(
            "{what}: rank {r} refused its arguments"
        )));
    }
    if let Some(r) = recs.iter().position(|x| x[1] != mine[1]) {
        return Err(DistError::Mismatch(format!(
            "{what}: rank {r} called another collective than rank {me}"
        )));
    }
    if let Some(r) = recs.iter().position(|x| x[2] != mine[2]) {
        return Err(DistError::Mismatch(format!(
            "{what}: rank {r} passes dtype {}, rank {me} dtype {}",
            dtype_name(recs[r][2]),
            dtype_name(mine[2])
        )));
    }
    if let Some(r) = recs.iter().position(|x| x[3] != mine[3]) {
        return Err(DistError::Mismatch(format!(
            "{what}: rank {r} passed other arguments than rank {me}"
        )));
    }
    if recs.iter().map(|x| x[4]).fold(0u64, u64::wrapping_add) != 0 {
        return Err(DistError::Mismatch(format!(
            "{what}: some rank sends a peer other sizes than the peer expects"
        )));
    }
    Ok(recs.iter().all(|x| x[0] & WANTS_SHM != 0))
}

/// `verdict` with no local failure, for the fuzz check (`fuzz/checks/agreement.rs`);
/// not part of the API.
#[doc(hidden)]
pub fn fuzz_verdict(me: usize, all: &[u64]) -> Result<bool> {
    verdict(me, "fuzz", all, Ok(()))
}

/// The flags and words of a record, for the fuzz target's naive reading; not part of the API.
#[doc(hidden)]
pub const FUZZ_RECORD: (usize, u64, u64) = (RECORD, FAILED, WANTS_SHM);

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(dtype: DType, digest: u64, pairs: u64, wants_shm: bool) -> Terms {
        Terms {
            kind: Kind::AllGatherV,
            dtype: Some(dtype),
            digest,
            pairs,
            wants_shm,
        }
    }

    fn run(ts: &[Terms], failed: &[bool], me: usize) -> Result<bool> {
        let all: Vec<u64> = ts
            .iter()
            .zip(failed)
            .flat_map(|(t, &f)| record(t, f))
            .collect();
        let local = if failed[me] {
            Err(DistError::Placement("mine".into()))
        } else {
            Ok(())
        };
        verdict(me, "op", &all, local)
    }

    #[test]
    fn path_is_shared_only_when_every_rank_wants_it() {
        let a = terms(DType::F32, 7, 0, true);
        let b = terms(DType::F32, 7, 0, false);
        assert_eq!(run(&[a, a], &[false, false], 0), Ok(true));
        assert_eq!(run(&[a, b], &[false, false], 0), Ok(false));
        assert_eq!(run(&[a, b], &[false, false], 1), Ok(false));
    }

    #[test]
    fn a_local_failure_is_an_error_on_every_rank() {
        let a = terms(DType::F32, 7, 0, true);
        assert!(matches!(
            run(&[a, a], &[true, false], 0),
            Err(DistError::Placement(_))
        ));
        let e = run(&[a, a], &[true, false], 1).unwrap_err();
        assert!(e.to_string().contains("rank 0 refused"), "{e}");
    }

    #[test]
    fn dtype_and_argument_mismatches_are_refused() {
        let (u, b) = (terms(DType::U8, 7, 0, true), terms(DType::Bool, 7, 0, true));
        for me in 0..2 {
            let e = run(&[u, b], &[false, false], me).unwrap_err();
            assert!(
                matches!(&e, DistError::Mismatch(m) if m.contains("dtype")),
                "{e}"
            );
        }
        let (x, y) = (terms(DType::F32, 7, 0, true), terms(DType::F32, 8, 0, true));
        assert!(matches!(
            run(&[x, y], &[false, false], 1),
            Err(DistError::Mismatch(_))
        ));
    }

    #[test]
    fn pair_sums_cancel_exactly_when_counts_match_pairwise() {
        // Rank r sends sent[r][s] to s; s expects expected[s][r].
        let sent = [[2u64, 3, 4], [5, 6, 7], [8, 9, 1]];
        let expected = |sent: &[[u64; 3]; 3], s: usize| [sent[0][s], sent[1][s], sent[2][s]];
        let total = |sent: &[[u64; 3]; 3], exp: &[[u64; 3]; 3]| {
            (0..3).fold(0u64, |a, r| a.wrapping_add(pair_sum(r, &sent[r], &exp[r])))
        };
        let exp = [expected(&sent, 0), expected(&sent, 1), expected(&sent, 2)];
        assert_eq!(total(&sent, &exp), 0);
        let mut bad = exp;
        bad[1][0] += 1;
        assert_ne!(total(&sent, &bad), 0);
        // Swapped counts between two peers do not cancel either.
        let mut swapped = exp;
        swapped[2].swap(0, 1);
        assert_ne!(total(&sent, &swapped), 0);
    }

    proptest::proptest! {
        /// The records come from peers, so any words are possible (a peer of another build, a
        /// corrupted exchange): the verdict never panics, and every rank whose own check
        /// passed reaches the same outcome (the path, or an error of the same kind), as
        /// checked against a naive reading of the records.
        #[test]
        fn verdicts_of_arbitrary_records_agree(
            words in proptest::collection::vec(
                proptest::prop_oneof![0u64..4, proptest::num::u64::ANY],
                RECORD..=RECORD * 5,
            ),
        ) {
            let p = words.len() / RECORD;
            let all = &words[..p * RECORD];
            let recs: Vec<&[u64]> = all.chunks(RECORD).collect();
            let field_differs = |i: usize| recs.iter().any(|x| x[i] != recs[0][i]);
            let failed = recs.iter().any(|x| x[0] & FAILED != 0);
            let mismatch = (1..4).any(field_differs)
                || recs.iter().map(|x| x[4]).fold(0u64, u64::wrapping_add) != 0;
            let shared = recs.iter().all(|x| x[0] & WANTS_SHM != 0);
            for me in 0..p {
                let got = verdict(me, "op", all, Ok(()));
                match got {
                    Ok(s) => proptest::prop_assert!(!failed && !mismatch && s == shared),
                    Err(DistError::Comm(_)) => proptest::prop_assert!(failed),
                    Err(DistError::Mismatch(_)) => proptest::prop_assert!(!failed && mismatch),
                    Err(e) => proptest::prop_assert!(false, "unexpected {e}"),
                }
            }
        }
    }
}
