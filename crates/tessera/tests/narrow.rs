//! `Tensor::narrow` against two independent references: the elements picked by plain index
//! arithmetic on `to_vec` of the base, and `index` with an `IndexSpec::interval` on the axis.
//! Bases are strided views (permuted, flipped, sliced) so negative and non-unit strides and
//! non-zero offsets are covered; bad axes and ranges must be typed errors.

use proptest::prelude::*;
use tessera::index::IndexSpec;
use tessera::{DType, ErrorKind, Tensor};

/// A strided base of shape `dims`: an `arange` viewed, permuted by `perm` and flipped on the
/// axes in `flip`, so its layout is not contiguous.
fn base(dims: &[usize], perm_seed: usize, flip: &[bool]) -> Tensor {
    let rank = dims.len();
    // Build the source so that after the permutation the shape is `dims`.
    let mut perm: Vec<usize> = (0..rank).collect();
    if rank > 1 {
        perm.rotate_left(perm_seed % rank);
    }
    let mut src_dims = vec![0; rank];
    for (i, &p) in perm.iter().enumerate() {
        src_dims[p] = dims[i];
    }
    let n: usize = dims.iter().product();
    let t = Tensor::arange(0, n as i64, 1, DType::I64)
        .unwrap()
        .view(&src_dims.iter().map(|&d| d as isize).collect::<Vec<_>>())
        .unwrap()
        .permute(&perm.iter().map(|&p| p as isize).collect::<Vec<_>>())
        .unwrap();
    let axes: Vec<isize> = (0..rank as isize).filter(|&a| flip[a as usize]).collect();
    t.flip(Some(&axes)).unwrap()
}

/// Row-major multi-indices of `dims`.
fn indices(dims: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &d in dims {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..d).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

/// The reference: `base[..., start..start + len, ...]` by index arithmetic on its elements.
fn reference(base: &Tensor, axis: usize, start: usize, len: usize) -> Vec<i64> {
    let all = base.to_vec::<i64>().unwrap();
    let dims = base.shape();
    let flat = |ix: &[usize]| ix.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i);
    let mut out_dims = dims.to_vec();
    out_dims[axis] = len;
    indices(&out_dims)
        .into_iter()
        .map(|mut ix| {
            ix[axis] += start;
            all[flat(&ix)]
        })
        .collect()
}

fn case() -> impl Strategy<Value = (Vec<usize>, usize, Vec<bool>, isize, usize, usize)> {
    (1usize..=4).prop_flat_map(|rank| {
        (
            prop::collection::vec(0usize..=4, rank),
            0usize..4,
            prop::collection::vec(any::<bool>(), rank),
            -(rank as isize) - 1..=rank as isize,
            0usize..=6,
            0usize..=6,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn narrow_matches_index_arithmetic_and_interval_indexing(
        (dims, perm, flip, axis, start, len) in case()
    ) {
        let b = base(&dims, perm, &flip);
        let rank = dims.len() as isize;
        let got = b.narrow(axis, start, len);
        if axis < -rank || axis >= rank {
            prop_assert!(matches!(got.as_ref().map_err(|e| e.kind()), Err(ErrorKind::Index(_))), "axis {axis}: {got:?}");
            return Ok(());
        }
        let a = axis.rem_euclid(rank) as usize;
        if start + len > dims[a] {
            prop_assert!(matches!(got.as_ref().map_err(|e| e.kind()), Err(ErrorKind::Index(_))), "range {start}+{len}: {got:?}");
            return Ok(());
        }
        let v = got.unwrap();
        let mut want_dims = dims.clone();
        want_dims[a] = len;
        prop_assert_eq!(v.shape(), &want_dims[..]);
        prop_assert_eq!(v.strides(), b.strides());
        prop_assert!(v.shares_storage(&b));
        prop_assert_eq!(v.to_vec::<i64>().unwrap(), reference(&b, a, start, len));
        let mut specs = vec![IndexSpec::All; a];
        specs.push(IndexSpec::interval(start as isize, (start + len) as isize));
        prop_assert_eq!(v.to_vec::<i64>().unwrap(), b.index(&specs).unwrap().to_vec::<i64>().unwrap());
    }

    #[test]
    fn writes_through_a_narrow_view_reach_the_base(
        (dims, perm, flip, axis, start, len) in case()
    ) {
        let b = base(&dims, perm, &flip);
        let Ok(v) = b.narrow(axis, start, len) else { return Ok(()) };
        let a = axis.rem_euclid(dims.len() as isize) as usize;
        let before = b.to_vec::<i64>().unwrap();
        v.fill_(-1).unwrap();
        let after = b.to_vec::<i64>().unwrap();
        let flat = |ix: &[usize]| ix.iter().zip(&dims).fold(0, |acc, (&i, &d)| acc * d + i);
        for ix in indices(&dims) {
            let inside = ix[a] >= start && ix[a] < start + len;
            let want = if inside { -1 } else { before[flat(&ix)] };
            prop_assert_eq!(after[flat(&ix)], want, "at {:?}", ix);
        }
    }
}

#[test]
fn narrow_errors_are_typed() {
    let t = Tensor::zeros(&[2, 3], DType::F32).unwrap();
    assert!(matches!(
        t.narrow(2, 0, 1).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        t.narrow(-3, 0, 1).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        t.narrow(1, 2, 2).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        t.narrow(1, usize::MAX, 2).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    let s = Tensor::scalar(1.0, DType::F64).unwrap();
    assert!(matches!(
        s.narrow(0, 0, 1).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    // Empty ranges are fine, at either end.
    assert_eq!(t.narrow(1, 3, 0).unwrap().shape(), &[2, 0]);
    assert_eq!(t.narrow(-1, 0, 0).unwrap().shape(), &[2, 0]);
}
