//! Hardening regressions (issue 15): extreme slice steps, `Storage::as_ptr` under a held
//! write guard.

use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use tessera::index::IndexSpec;
use tessera::{DType, Storage, Tensor};

fn interval(start: Option<isize>, end: Option<isize>, step: isize) -> IndexSpec {
    IndexSpec::Interval {
        start,
        end,
        step,
        inclusive: false,
    }
}

/// Python's `range(*slice(start, end, step).indices(d))`, in i128 so nothing overflows.
fn python_slice(d: usize, start: Option<isize>, end: Option<isize>, step: isize) -> Vec<usize> {
    let (d, step) = (d as i128, step as i128);
    let norm = |x: isize, lo: i128, hi: i128| {
        let x = x as i128;
        let x = if x < 0 { x + d } else { x };
        x.clamp(lo, hi)
    };
    let mut out = vec![];
    if step > 0 {
        let (mut i, e) = (
            start.map_or(0, |s| norm(s, 0, d)),
            end.map_or(d, |e| norm(e, 0, d)),
        );
        while i < e {
            out.push(i as usize);
            i += step;
        }
    } else {
        let (mut i, e) = (
            start.map_or(d - 1, |s| norm(s, -1, d - 1)),
            end.map_or(-1, |e| norm(e, -1, d - 1)),
        );
        while i > e {
            out.push(i as usize);
            i += step;
        }
    }
    out
}

#[test]
fn step_of_isize_min_selects_the_last_element() {
    // t[::-(2**63)]: overflowed negating the step (a panic in debug builds).
    let t = Tensor::from_vec((0..5i64).collect(), &[5]).unwrap();
    let v = t.index(&[interval(None, None, isize::MIN)]).unwrap();
    assert_eq!(v.to_vec::<i64>().unwrap(), vec![4]);
    let v = t.index(&[interval(Some(2), None, isize::MIN)]).unwrap();
    assert_eq!(v.to_vec::<i64>().unwrap(), vec![2]);
    let v = t.index(&[interval(None, None, isize::MAX)]).unwrap();
    assert_eq!(v.to_vec::<i64>().unwrap(), vec![0]);
}

proptest! {
    #[test]
    fn extreme_steps_and_bounds_match_python(
        d in 0usize..7,
        start in prop::option::of(prop_oneof![-9isize..9, Just(isize::MIN), Just(isize::MAX)]),
        end in prop::option::of(prop_oneof![-9isize..9, Just(isize::MIN), Just(isize::MAX)]),
        step in prop_oneof![1isize..4, -4isize..0, Just(isize::MIN), Just(isize::MIN + 1), Just(isize::MAX)],
    ) {
        let t = Tensor::from_vec((0..d as i64).collect(), &[d]).unwrap();
        let v = t.index(&[interval(start, end, step)]).unwrap();
        let want: Vec<i64> = python_slice(d, start, end, step).into_iter().map(|i| i as i64).collect();
        prop_assert_eq!(v.to_vec::<i64>().unwrap(), want);
    }
}

#[test]
fn as_ptr_does_not_deadlock_under_a_write_guard() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let s = Storage::zeroed(DType::F32, 16).unwrap();
        let mut g = s.write::<f32>().unwrap();
        g[0] = 1.0;
        let want = g.as_ptr() as *const u8;
        // Took a read lock under this thread's own write guard: a self-deadlock.
        let got = s.as_ptr();
        drop(g);
        tx.send(got == want).unwrap();
    });
    let same = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("Storage::as_ptr deadlocked under a held write guard");
    assert!(same);
}
