//! Hand-worked edge cases of V1–V7 and E1, and property tests of intervals (against a
//! brute-force reference) and of the INT64 encoding (V4).

// In `idx!`, `8..-100; -3` is an interval walked backwards, not an empty iteration.
#![allow(clippy::reversed_empty_ranges)]

use crate::view_common::spec_strategy;
use proptest::prelude::*;
use tessera::index::{decode, encode, Ellipsis, IndexSpec, NewAxis};
use tessera::{idx, DType, ErrorKind, Tensor};

fn arange(shape: &[isize]) -> Tensor {
    let n: isize = shape.iter().product();
    Tensor::arange(0, n as i64, 1, DType::I64)
        .unwrap()
        .view(shape)
        .unwrap()
}

fn vals(t: &Tensor) -> Vec<i64> {
    t.to_vec::<i64>().unwrap()
}

/// Brute force: the positions of `0..d` an interval selects, in visiting order, from the
/// definition (normalise negatives once, clamp, walk by step, stop at/after end).
fn brute_interval(
    d: isize,
    start: Option<isize>,
    end: Option<isize>,
    step: isize,
    inclusive: bool,
) -> Vec<i64> {
    let norm = |x: isize| if x < 0 { x + d } else { x };
    let order: Vec<isize> = if step > 0 {
        (0..d).collect()
    } else {
        (0..d).rev().collect()
    };
    let first = match start {
        None => order.first().copied(),
        Some(s) => {
            let s = norm(s);
            order
                .iter()
                .copied()
                .find(|&p| if step > 0 { p >= s } else { p <= s })
        }
    };
    let Some(first) = first else { return vec![] };
    order
        .into_iter()
        .filter(|&p| if step > 0 { p >= first } else { p <= first })
        .filter(|&p| (p - first) % step == 0)
        .take_while(|&p| match end.map(norm) {
            None => true,
            Some(e) if step > 0 => p < e || (inclusive && p == e),
            Some(e) => p > e || (inclusive && p == e),
        })
        .map(|p| p as i64)
        .collect()
}

proptest! {
    /// V2: intervals (exclusive and DL4J-inclusive, any step sign) select what brute force does.
    #[test]
    fn v2_interval_matches_brute_force(d in 0isize..9, start in prop::option::of(-12isize..12),
        end in prop::option::of(-12isize..12), step in prop_oneof![-4isize..0, 1isize..5], inclusive: bool) {
        let t = arange(&[d]);
        let v = t.index(&[IndexSpec::Interval { start, end, step, inclusive }]).unwrap();
        prop_assert_eq!(vals(&v), brute_interval(d, start, end, step, inclusive));
    }

    /// V4: encoding round-trips.
    #[test]
    fn v4_encoding_round_trips(specs in prop::collection::vec(spec_strategy(), 0..8)) {
        prop_assert_eq!(decode(&encode(&specs)).unwrap(), specs);
    }

    /// V4: decoding arbitrary arrays never panics; it gives specs or an error.
    #[test]
    fn v4_decoding_garbage_is_an_error_not_a_panic(code in prop::collection::vec(prop_oneof![-3i64..8, any::<i64>()], 0..20)) {
        if let Ok(specs) = decode(&code) {
            prop_assert_eq!(encode(&specs), code);
        }
    }

    /// `t[i, j, :, ...]` (leading points, then whole dims: the path that reuses the base's
    /// tail descriptor) gives the view, or the error, that the general walk gives for the same
    /// key with a new axis after the points (squeezed away after), on bases that are views.
    #[test]
    fn leading_points_match_the_general_walk(
        pre in prop::collection::vec(spec_strategy(), 0..4),
        points in prop::collection::vec(-6isize..6, 1..5),
        rest in prop::collection::vec(prop_oneof![Just(IndexSpec::All), Just(IndexSpec::Ellipsis)], 0..3),
    ) {
        let base = arange(&[3, 4, 5]);
        let Ok(v) = base.index(&pre) else { return Ok(()) };
        let mut specs: Vec<IndexSpec> = points.iter().map(|&i| IndexSpec::Point(i)).collect();
        // The general walk gets the same key with a new axis added and then removed.
        let mut walked = specs.clone();
        specs.extend(rest.iter().cloned());
        walked.push(IndexSpec::NewAxis);
        walked.extend(rest.iter().cloned());
        let squeeze_at = 0; // points leave no dims, so the new axis comes first
        let walked = v.index(&walked).and_then(|w| w.squeeze(Some(&[squeeze_at as isize])));
        match (v.index(&specs), walked) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(a.shape(), b.shape());
                prop_assert_eq!(a.strides(), b.strides());
                prop_assert_eq!(vals(&a), vals(&b));
                prop_assert!(a.shares_storage(&base));
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "{:?} vs {:?}", a.map(|t| t.shape().to_vec()), b.map(|t| t.shape().to_vec())),
        }
    }

    /// V3: a view of a view is a view of the base, and sees the base's values.
    #[test]
    fn v3_views_of_views_share_the_base(specs in prop::collection::vec(spec_strategy(), 0..4)) {
        let base = arange(&[3, 4, 5]);
        if let Ok(v) = base.index(&specs) {
            prop_assert!(v.shares_storage(&base));
            if let Ok(w) = v.index(&[IndexSpec::Interval { start: None, end: None, step: -1, inclusive: false }]) {
                prop_assert!(w.shares_storage(&base));
            }
        }
    }
}

#[test]
fn v1_fewer_indices_mean_all_and_ellipsis_fills() {
    let t = arange(&[2, 3, 4]);
    assert_eq!(
        vals(&t.index(&idx![1]).unwrap()),
        (12..24).collect::<Vec<_>>()
    );
    assert_eq!(t.index(&idx![Ellipsis, 2]).unwrap().shape(), &[2, 3]);
    assert_eq!(
        vals(&t.index(&idx![Ellipsis, 2]).unwrap()),
        vec![2, 6, 10, 14, 18, 22]
    );
    assert_eq!(
        t.index(&idx![NewAxis, Ellipsis, NewAxis]).unwrap().shape(),
        &[1, 2, 3, 4, 1]
    );
    assert_eq!(t.index(&idx![0, 0, 0, Ellipsis]).unwrap().rank(), 0);
}

#[test]
fn v2_numpy_rules_for_negative_and_clamped_bounds() {
    let x = arange(&[10]);
    assert_eq!(
        vals(&x.index(&idx![2..5; -1]).unwrap()),
        Vec::<i64>::new(),
        "x[2:5:-1] is empty"
    );
    assert_eq!(
        vals(&x.index(&idx![..; -1]).unwrap()),
        (0..10).rev().collect::<Vec<_>>()
    );
    assert_eq!(vals(&x.index(&idx![-3..]).unwrap()), vec![7, 8, 9]);
    assert_eq!(
        vals(&x.index(&idx![-100..100; 4]).unwrap()),
        vec![0, 4, 8],
        "bounds clamp"
    );
    assert_eq!(vals(&x.index(&idx![8..-100; -3]).unwrap()), vec![8, 5, 2]);
    assert_eq!(vals(&x.index(&idx![-1]).unwrap()), vec![9]);
    // Inclusive (DL4J), without its quirks: 2..=5 includes 5; 5..=5 is [5]; ..=-1 reaches the end.
    assert_eq!(vals(&x.index(&idx![2..=5]).unwrap()), vec![2, 3, 4, 5]);
    assert_eq!(vals(&x.index(&idx![5..=5]).unwrap()), vec![5]);
    assert_eq!(
        vals(&x.index(&idx![..=-1]).unwrap()),
        (0..10).collect::<Vec<_>>()
    );
    assert_eq!(
        vals(&x.index(&idx![1..=7; 3]).unwrap()),
        vec![1, 4, 7],
        "end included when the step lands on it"
    );
    assert_eq!(vals(&x.index(&idx![1..=6; 3]).unwrap()), vec![1, 4]);
    assert_eq!(
        vals(&x.index(&idx![5..=0; -1]).unwrap()),
        vec![5, 4, 3, 2, 1, 0],
        "inclusive end 0 does not wrap"
    );
    // Negative step gives a negative-stride view.
    let r = x.index(&idx![..; -2]).unwrap();
    assert_eq!(r.strides(), &[-2]);
    assert!(r.shares_storage(&x));
}

#[test]
fn rank0_and_empty_dims() {
    let s = Tensor::scalar(7i64, DType::I64).unwrap();
    assert_eq!(vals(&s.index(&[]).unwrap()), vec![7]);
    assert_eq!(s.index(&idx![NewAxis]).unwrap().shape(), &[1]);
    assert_eq!(vals(&s.index(&idx![Ellipsis]).unwrap()), vec![7]);
    assert!(matches!(
        s.index(&idx![0]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    let e = arange(&[0, 3]);
    assert_eq!(e.index(&idx![.., 1]).unwrap().shape(), &[0]);
    assert_eq!(e.index(&idx![2..; -1]).unwrap().shape(), &[0, 3]);
    assert!(matches!(
        e.index(&idx![0]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert_eq!(e.expand(&[2, -1, 3]).unwrap().shape(), &[2, 0, 3]);
    assert_eq!(e.reshape(&[3, -1, 5]).unwrap().shape(), &[3, 0, 5]);
    assert!(
        e.reshape(&[-1, 0]).is_err(),
        "-1 cannot be inferred next to a 0"
    );
}

#[test]
fn e1_expand_semantics() {
    let t = arange(&[3, 1]);
    let e = t.expand(&[2, -1, 4]).unwrap();
    assert_eq!(e.shape(), &[2, 3, 4]);
    assert_eq!(e.strides(), &[0, 1, 0]);
    assert_eq!(vals(&e), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2].repeat(2));
    assert!(e.shares_storage(&t));
    assert!(
        matches!(
            t.expand(&[4, 4]).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::ShapeMismatch(_))
        ),
        "only size-1 dims change"
    );
    assert!(
        matches!(
            t.expand(&[-1, 3, 1]).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::ShapeMismatch(_))
        ),
        "-1 not allowed in a new dim"
    );
    assert!(
        matches!(
            t.expand(&[4]).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::ShapeMismatch(_))
        ),
        "fewer sizes than dims"
    );
    assert!(matches!(
        t.expand(&[3, -2]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    assert_eq!(
        t.expand(&[3, 0]).unwrap().numel(),
        0,
        "a size-1 dim may expand to 0"
    );
}

#[test]
fn v5_reshape_views_and_copies() {
    let t = arange(&[4, 6]);
    let tt = t.t().unwrap();
    // Splitting a dim of a transposed tensor is a view; merging its dims needs a copy.
    let split = tt.view(&[2, 3, 4]).unwrap();
    assert!(split.shares_storage(&t));
    assert_eq!(vals(&split), vals(&tt));
    assert!(matches!(
        tt.view(&[24]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    let flat = tt.reshape(&[-1]).unwrap();
    assert!(!flat.shares_storage(&t), "reshape copies when it must");
    assert_eq!(vals(&flat), vals(&tt));
    // Size-1 dims are ignored by the chunk rule.
    let odd = arange(&[4, 1, 6]).index(&idx![.., .., 1..5]).unwrap();
    assert!(odd.view(&[4, 4, 1]).is_ok());
    assert!(matches!(
        t.reshape(&[5, -1]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    assert!(matches!(
        t.reshape(&[-1, -1]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
}

#[test]
fn v6_contiguity_ignores_size1_dims() {
    let t = arange(&[3, 1, 4]);
    let p = t.permute(&[1, 0, 2]).unwrap();
    assert!(p.is_contiguous(), "moving a size-1 dim keeps contiguity");
    assert!(!t.t().unwrap().is_contiguous());
    assert!(
        arange(&[0, 5]).t().unwrap().is_contiguous(),
        "empty tensors are contiguous"
    );
}

#[test]
fn bad_input_gives_typed_errors() {
    let t = arange(&[3, 4]);
    assert!(
        matches!(
            t.index(&idx![3]).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::Index(_))
        ),
        "point out of range"
    );
    assert!(matches!(
        t.index(&idx![-4]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(
        matches!(
            t.index(&idx![..; 0]).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::InvalidArgument(_))
        ),
        "step 0"
    );
    assert!(
        matches!(
            t.index(&idx![Ellipsis, 0, Ellipsis])
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::Index(_))
        ),
        "two ellipses"
    );
    assert!(
        matches!(
            t.index(&idx![0, 0, 0]).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::Index(_))
        ),
        "too many indices"
    );
    assert!(matches!(
        t.permute(&[0, 0]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        t.permute(&[0, 2]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        t.squeeze(Some(&[0])).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        t.unsqueeze(3).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        t.broadcast_to(&[3, 5]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    assert!(matches!(
        t.as_strided(&[3, 4], &[4, 2], 0)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::OutOfBounds(_))
    ));
    assert!(
        matches!(
            t.create_view(&[0, 1, 1]).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::InvalidArgument(_))
        ),
        "truncated encoding"
    );
    assert!(
        matches!(
            t.create_view(&[9, 0, 1, 0]).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::InvalidArgument(_))
        ),
        "unknown type"
    );
    assert!(
        matches!(
            t.create_view(&[1, 2, 0, 0, 3, 0])
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::InvalidArgument(_))
        ),
        "encoded step 0"
    );
}

#[test]
fn flip_is_a_zero_copy_view() {
    let t = arange(&[2, 3]);
    let f = t.flip(None).unwrap();
    assert_eq!(vals(&f), vec![5, 4, 3, 2, 1, 0]);
    assert!(f.shares_storage(&t));
    assert_eq!(vals(&t.flip(Some(&[-1])).unwrap()), vec![2, 1, 0, 5, 4, 3]);
    assert_eq!(vals(&f.flip(None).unwrap()), vals(&t));
}

/// The elements of `base[points..., :, ...]` by the definition: row-major positions of the
/// base's materialised values, the pointed dims fixed. `None` for a point out of range or
/// more points than dims (NumPy's IndexError).
fn brute_points(dims: &[usize], vals: &[i64], points: &[isize]) -> Option<Vec<i64>> {
    if points.len() > dims.len() {
        return None;
    }
    let mut fixed = Vec::new();
    for (&p, &d) in points.iter().zip(dims) {
        let q = if p < 0 { p + d as isize } else { p };
        if !(0..d as isize).contains(&q) {
            return None;
        }
        fixed.push(q as usize);
    }
    let rest = &dims[points.len()..];
    let count: usize = rest.iter().product();
    let mut out = Vec::with_capacity(count);
    for k in 0..count {
        // Row-major multi-index of `k` over the rest, after the fixed leading dims.
        let mut idx = fixed.clone();
        let mut tail = vec![0; rest.len()];
        let mut r = k;
        for (slot, &d) in tail.iter_mut().zip(rest).rev() {
            *slot = r % d;
            r /= d;
        }
        idx.extend(tail);
        let flat = idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i);
        out.push(vals[flat]);
    }
    Some(out)
}

proptest! {
    /// `index_points` (the `t[i]`, `t[i, j]` fast path) against the definition, on bases
    /// that are contiguous, flipped, stepped or permuted, with points in and out of range
    /// and too many of them; and the same as `index` with `Point` specs.
    #[test]
    fn index_points_matches_the_definition(
        dims in proptest::collection::vec(1usize..5, 0..5),
        base_kind in 0u8..4,
        points in proptest::collection::vec(-6isize..6, 0..6),
    ) {
        let shape: Vec<isize> = dims.iter().map(|&d| d as isize).collect();
        let t = arange(&shape);
        let rank = dims.len() as isize;
        let base = match base_kind {
            0 => t,
            1 => t.flip(None).unwrap(),
            2 if rank > 0 => t.index(&[IndexSpec::Interval {
                start: None, end: None, step: -2, inclusive: false,
            }]).unwrap(),
            3 => t.permute(&(0..rank).rev().collect::<Vec<_>>()).unwrap(),
            _ => t,
        };
        let base_dims = base.shape().to_vec();
        let expected = brute_points(&base_dims, &vals(&base), &points);
        let got = base.index_points(&points);
        let specs: Vec<IndexSpec> = points.iter().map(|&i| IndexSpec::Point(i)).collect();
        let general = base.index(&specs);
        match expected {
            None => {
                prop_assert!(matches!(got.as_ref().map_err(|e| e.kind()), Err(ErrorKind::Index(_))), "{got:?}");
                prop_assert!(matches!(general.as_ref().map_err(|e| e.kind()), Err(ErrorKind::Index(_))));
            }
            Some(want) => {
                let got = got.unwrap();
                prop_assert_eq!(got.shape(), &base_dims[points.len()..]);
                prop_assert_eq!(vals(&got), want);
                prop_assert!(got.shares_storage(&base));
                let general = general.unwrap();
                prop_assert_eq!(got.strides(), general.strides());
                prop_assert_eq!(got.layout().offset(), general.layout().offset());
            }
        }
    }
}

#[test]
fn index_points_of_a_tensor_that_requires_grad_records() {
    let t = arange(&[3, 4])
        .astype(DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let v = t.index_points(&[1]).unwrap();
    assert!(v.requires_grad(), "the view is recorded, as index's is");
    assert_eq!(v.to_vec::<f64>().unwrap(), vec![4.0, 5.0, 6.0, 7.0]);
}

/// Axis lists past rank 128 take the flag-list path of the axis checks (a bit set below).
#[test]
fn permute_and_squeeze_check_axes_at_high_rank() {
    let mut dims = vec![1usize; 130];
    dims[129] = 3;
    let t = Tensor::zeros(&dims, DType::F32).unwrap();
    let reversed: Vec<isize> = (0..130).rev().collect();
    let p = t.permute(&reversed).unwrap();
    assert_eq!(p.shape()[0], 3);
    assert!(p.shape()[1..].iter().all(|&d| d == 1));
    let mut repeated = reversed.clone();
    repeated[5] = 129;
    assert!(matches!(
        t.permute(&repeated).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        t.permute(&[130; 130]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    let s = t.squeeze(Some(&[0, 126, -3])).unwrap();
    assert_eq!(s.rank(), 127);
    assert!(matches!(
        t.squeeze(Some(&[0, -130])).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
}
