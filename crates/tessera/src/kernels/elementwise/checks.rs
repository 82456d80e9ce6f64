//! The operand checks of the elementwise kernels (bounds, overlap, shapes) against their
//! definitions.

use proptest::prelude::*;

use super::*;

fn op(strides: &[isize], offset: usize) -> Operand<'_> {
    Operand { strides, offset }
}

#[test]
fn overlapping_destination_is_refused_before_any_write() {
    // [1<<16, 4] with strides [1, 1]: index (i, j) and (i + 1, j - 1) share an element,
    // and the kernel would split the runs across threads (a data race).
    let n = 1usize << 16;
    let mut out = vec![0i64; n + 3];
    let r = zip2(
        &[n, 4],
        &mut out,
        op(&[1, 1], 0),
        &[1i64],
        op(&[0, 0], 0),
        |o, x| o + x,
    );
    assert!(
        matches!(
            r.as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::OverlappingWrite(_))
        ),
        "{r:?}"
    );
    assert!(out.iter().all(|&x| x == 0));
    let r = zip3(
        &[n, 4],
        &mut out,
        op(&[1, 1], 0),
        (&[1i64], op(&[0, 0], 0)),
        (&[2i64], op(&[0, 0], 0)),
        |x, y| x + y,
    );
    assert!(
        matches!(
            r.as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::OverlappingWrite(_))
        ),
        "{r:?}"
    );
}

#[test]
fn spans_that_overflow_are_out_of_bounds_not_wrapped() {
    let mut out = vec![0u8; 4];
    let huge = isize::MAX / 2 + 1; // (3 - 1) * huge overflows isize
    for (dst, src) in [
        (op(&[huge], 1), op(&[0], 0)),
        (op(&[1], 0), op(&[huge], 0)),
        (op(&[-huge], 1), op(&[0], 0)),
        (op(&[1], usize::MAX), op(&[0], 0)),
        (op(&[1], 2), op(&[0], 0)), // last element 4 of a 4-element buffer
        (op(&[1], 0), op(&[1], 0)), // source of 1 element read at 0..3
    ] {
        let r = zip2(&[3], &mut out, dst, &[1u8], src, |o, x| o + x);
        assert!(
            matches!(
                r.as_ref().map_err(|e| e.kind()),
                Err(ErrorKind::OutOfBounds(_))
            ),
            "{r:?}"
        );
    }
    let r = zip2(
        &[3],
        &mut out,
        op(&[1, 1], 0),
        &[1u8],
        op(&[0], 0),
        |o, x| o + x,
    );
    assert!(
        matches!(
            r.as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::InvalidShape(_))
        ),
        "{r:?}"
    );
    assert_eq!(out, [0; 4]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Against a reference walk by odometer: a destination is accepted exactly when it is
    /// in bounds and its offsets are distinct, and then every element gets `+1` once.
    #[test]
    fn zip2_accepts_exactly_the_sound_destinations(
        geometry in (1usize..=3).prop_flat_map(|r| (
            prop::collection::vec(0usize..=5, r),
            prop::collection::vec(-6isize..=6, r),
            0usize..40,
        ))
    ) {
        let (dims, strides, offset) = geometry;
        let len = 40;
        let numel: usize = dims.iter().product();
        let mut offsets = Vec::new();
        for lin in 0..numel {
            let (mut rem, mut o) = (lin, offset as isize);
            for d in (0..dims.len()).rev() {
                o += (rem % dims[d]) as isize * strides[d];
                rem /= dims[d];
            }
            offsets.push(o);
        }
        let in_bounds = offsets.iter().all(|&o| (0..len as isize).contains(&o));
        let mut sorted = offsets.clone();
        sorted.sort();
        sorted.dedup();
        let distinct = sorted.len() == offsets.len();
        let mut out = vec![0i32; len];
        let zeros = vec![0isize; dims.len()];
        let r = zip2(&dims, &mut out, op(&strides, offset), &[1i32], op(&zeros, 0), |o, x| o + x);
        match (in_bounds, distinct) {
            (false, _) => prop_assert!(matches!(r.as_ref().map_err(|e| e.kind()), Err(ErrorKind::OutOfBounds(_)))),
            (true, false) => prop_assert!(matches!(r.as_ref().map_err(|e| e.kind()), Err(ErrorKind::OverlappingWrite(_)))),
            (true, true) => {
                prop_assert!(r.is_ok());
                let mut want = vec![0i32; len];
                for &o in &offsets {
                    want[o as usize] += 1;
                }
                prop_assert_eq!(out, want);
            }
        }
    }
}
