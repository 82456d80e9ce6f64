//! The Array API's sorting, searching, set, cumulative and joining functions against naive
//! reference loops (proptest) and hand-worked edge cases: NaN, -0.0, empty, 0-d, broadcasting,
//! non-contiguous inputs, errors.

use std::cmp::Ordering;

use proptest::prelude::*;
use tessera::{DType, ErrorKind, Tensor};

/// NumPy's order on f64: NaN last, -0.0 == 0.0.
fn np_cmp(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
}

/// Values with many ties, signed zeros and NaNs.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-3i32..3).prop_map(f64::from),
        1 => Just(f64::NAN),
        1 => Just(-0.0),
        1 => Just(0.0),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
    ]
}

fn matrix() -> impl Strategy<Value = (Vec<f64>, usize, usize)> {
    (0usize..5, 0usize..6)
        .prop_flat_map(|(r, c)| (proptest::collection::vec(value(), r * c), Just(r), Just(c)))
}

/// Lane `k` of a row-major `r x c` matrix along `axis`.
fn lane(v: &[f64], r: usize, c: usize, axis: usize, k: usize) -> Vec<f64> {
    if axis == 1 {
        v[k * c..(k + 1) * c].to_vec()
    } else {
        (0..r).map(|i| v[i * c + k]).collect()
    }
}

fn lanes_of(t: &Tensor, axis: usize) -> Vec<Vec<f64>> {
    let (r, c) = (t.shape()[0], t.shape()[1]);
    let v = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    let n = if axis == 1 { r } else { c };
    (0..n).map(|k| lane(&v, r, c, axis, k)).collect()
}

/// Same values bit for bit (NaN equal to NaN, -0.0 distinct from 0.0).
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

proptest! {
    #[test]
    fn sort_and_argsort_match_a_stable_reference((v, r, c) in matrix(), axis in 0usize..2, desc: bool, transposed: bool) {
        let base = Tensor::from_vec(v.clone(), &[r, c]).unwrap();
        // A transposed view holds the same matrix read column-major: test through it too.
        let t = if transposed { base.t().unwrap().contiguous().unwrap().t().unwrap() } else { base };
        let s = t.sort(axis as isize, desc, true).unwrap();
        let a = t.argsort(axis as isize, desc).unwrap();
        prop_assert_eq!(a.dtype(), DType::I64);
        let n = if axis == 1 { r } else { c };
        for k in 0..n {
            let src = lane(&v, r, c, axis, k);
            let mut idx: Vec<usize> = (0..src.len()).collect();
            idx.sort_by(|&i, &j| {
                let o = np_cmp(src[i], src[j]);
                if desc { o.reverse() } else { o }
            });
            let want: Vec<f64> = idx.iter().map(|&i| src[i]).collect();
            prop_assert!(same_bits(&lanes_of(&s, axis)[k], &want));
            let got_idx: Vec<usize> = lanes_of(&a, axis)[k].iter().map(|&i| i as usize).collect();
            prop_assert_eq!(got_idx, idx);
        }
    }

    #[test]
    fn argmax_argmin_match_a_first_occurrence_loop((v, r, c) in matrix(), axis in 0usize..2, keep: bool) {
        let t = Tensor::from_vec(v.clone(), &[r, c]).unwrap();
        let len = if axis == 0 { r } else { c };
        for max in [true, false] {
            let got = if max { t.argmax(Some(axis as isize), keep) } else { t.argmin(Some(axis as isize), keep) };
            if len == 0 {
                prop_assert!(matches!(got.as_ref().map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument(_))));
                continue;
            }
            let got = got.unwrap();
            let n = if axis == 1 { r } else { c };
            let mut want_shape = vec![r, c];
            if keep { want_shape[axis] = 1 } else { want_shape.remove(axis); }
            prop_assert_eq!(got.shape(), &want_shape[..]);
            let got = got.to_vec::<i64>().unwrap();
            for (k, &g) in got.iter().enumerate().take(n) {
                let l = lane(&v, r, c, axis, k);
                let want = match l.iter().position(|x| x.is_nan()) {
                    Some(i) => i,
                    None => (0..l.len()).fold(0, |b, i| if (max && l[i] > l[b]) || (!max && l[i] < l[b]) { i } else { b }),
                };
                prop_assert_eq!(g, want as i64);
            }
        }
    }

    #[test]
    fn cumulative_sum_and_prod_match_running_loops(v in proptest::collection::vec(-100i32..100, 0..40), init: bool) {
        let t = Tensor::from_vec(v.clone(), &[v.len()]).unwrap();
        let s = t.cumulative_sum(None, None, init).unwrap();
        let p = t.cumulative_prod(Some(0), None, init).unwrap();
        prop_assert_eq!(s.dtype(), DType::I64);
        let (mut acc, mut prod) = (0i64, 1i64);
        let mut ws = if init { vec![0] } else { vec![] };
        let mut wp = if init { vec![1] } else { vec![] };
        for &x in &v {
            acc += x as i64;
            prod = prod.wrapping_mul(x as i64);
            ws.push(acc);
            wp.push(prod);
        }
        prop_assert_eq!(s.to_vec::<i64>().unwrap(), ws);
        prop_assert_eq!(p.to_vec::<i64>().unwrap(), wp);
    }

    #[test]
    fn unique_all_matches_a_naive_grouping((v, r, c) in matrix()) {
        let t = Tensor::from_vec(v.clone(), &[r, c]).unwrap();
        let u = t.unique_all().unwrap();
        let values = u.values.to_vec::<f64>().unwrap();
        // Naive: the distinct values (NaNs each distinct), sorted.
        let mut want: Vec<f64> = Vec::new();
        for &x in &v {
            if x.is_nan() || !want.contains(&x) {
                want.push(x);
            }
        }
        want.sort_by(|a, b| np_cmp(*a, *b));
        prop_assert_eq!(values.len(), want.len());
        prop_assert!(values.iter().zip(&want).all(|(a, b)| np_cmp(*a, *b).is_eq()));
        let idx = u.indices.to_vec::<i64>().unwrap();
        let inv = u.inverse_indices.to_vec::<i64>().unwrap();
        let counts = u.counts.to_vec::<i64>().unwrap();
        prop_assert_eq!(u.inverse_indices.shape(), &[r, c][..]);
        prop_assert_eq!(counts.iter().sum::<i64>() as usize, v.len());
        for (k, &val) in values.iter().enumerate() {
            let i = idx[k] as usize;
            // The first occurrence: same bits as the value, nothing equal before it.
            prop_assert!(same_bits(&[v[i]], &[val]));
            if !val.is_nan() {
                prop_assert!(v[..i].iter().all(|&x| x != val));
                prop_assert_eq!(counts[k] as usize, v.iter().filter(|&&x| x == val).count());
            } else {
                prop_assert_eq!(counts[k], 1);
            }
        }
        for (j, &x) in v.iter().enumerate() {
            prop_assert!(np_cmp(values[inv[j] as usize], x).is_eq());
        }
        let uv = t.unique_values().unwrap().to_vec::<f64>().unwrap();
        prop_assert_eq!(uv.len(), values.len());
        prop_assert!(uv.iter().zip(&values).all(|(a, b)| np_cmp(*a, *b).is_eq()));
    }
}

#[test]
fn stable_sort_keeps_signed_zeros_and_nans_in_input_order() {
    let t = Tensor::from_slice(&[0.0f64, -0.0, 1.0, -0.0, 0.0], &[5]).unwrap();
    let up = t.sort(0, false, true).unwrap().to_vec::<f64>().unwrap();
    let signs: Vec<bool> = up.iter().map(|x| x.is_sign_negative()).collect();
    assert_eq!(signs, vec![false, true, true, false, false]);
    let down = t.sort(0, true, true).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(down[0], 1.0);
    let signs: Vec<bool> = down[1..].iter().map(|x| x.is_sign_negative()).collect();
    assert_eq!(signs, vec![false, true, true, false]);
    let n = Tensor::from_slice(&[f64::NAN, 1.0, f64::NAN], &[3]).unwrap();
    assert_eq!(
        n.argsort(0, false).unwrap().to_vec::<i64>().unwrap(),
        vec![1, 0, 2]
    );
    assert_eq!(
        n.argsort(0, true).unwrap().to_vec::<i64>().unwrap(),
        vec![0, 2, 1]
    );
}

#[test]
fn sort_errors_and_degenerate_shapes() {
    let s = Tensor::scalar(1.0, DType::F32).unwrap();
    assert!(matches!(
        s.sort(-1, false, true).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    let e = Tensor::zeros(&[0, 3], DType::I32).unwrap();
    assert_eq!(e.sort(0, false, true).unwrap().shape(), &[0, 3]);
    assert_eq!(e.argsort(1, true).unwrap().shape(), &[0, 3]);
    let t = Tensor::arange(0, 6, 1, DType::I8).unwrap();
    assert!(matches!(
        t.sort(1, false, true).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    // A large lane takes the parallel path: still sorted.
    let n = 300_000usize;
    let v: Vec<f32> = (0..n).map(|i| ((i * 7919) % n) as f32).collect();
    let big = Tensor::from_vec(v, &[n]).unwrap();
    let s = big.sort(0, false, false).unwrap().to_vec::<f32>().unwrap();
    assert!(s.windows(2).all(|w| w[0] <= w[1]));
    let a = big.argsort(0, true).unwrap().to_vec::<i64>().unwrap();
    assert_eq!(
        a[0] as usize,
        (0..n).find(|&i| (i * 7919) % n == n - 1).unwrap()
    );
}

/// Operands that share one storage (read from a copy, so no storage is read-locked twice):
/// the values are NumPy's.
#[test]
fn where_with_operands_sharing_a_storage() {
    let x = Tensor::from_slice(&[-1.5f32, 2.0, 0.0, 3.5], &[4]).unwrap();
    let c = Tensor::from_slice(&[true, false, false, true], &[4]).unwrap();
    let w = Tensor::where_(&c, &x, &x).unwrap();
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![-1.5, 2.0, 0.0, 3.5]);
    let w = Tensor::where_(&c, &x, &x.flip(None).unwrap()).unwrap();
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![-1.5, 0.0, 2.0, 3.5]);
    let b = Tensor::from_slice(&[true, false, true], &[3]).unwrap();
    let w = Tensor::where_(&b, &b, &b).unwrap();
    assert_eq!(w.to_vec::<bool>().unwrap(), vec![true, false, true]);
    let w = Tensor::where_(&b, &b.narrow(0, 0, 1).unwrap(), &b).unwrap();
    assert_eq!(w.to_vec::<bool>().unwrap(), vec![true, false, true]);
}

#[test]
fn where_broadcasts_and_promotes() {
    let c = Tensor::from_slice(&[1i64, 0, 2], &[3, 1]).unwrap();
    let a = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
    let b = Tensor::from_slice(&[0.5f32], &[1]).unwrap();
    let w = Tensor::where_(&c, &a, &b).unwrap();
    assert_eq!((w.dtype(), w.shape()), (DType::F64, &[3usize, 2][..]));
    assert_eq!(
        w.to_vec::<f64>().unwrap(),
        vec![1.0, 2.0, 0.5, 0.5, 1.0, 2.0]
    );
    // Non-contiguous operands and a NaN condition (true).
    let x = Tensor::arange(0.0, 6.0, 1.0, DType::F64)
        .unwrap()
        .reshape(&[2, 3])
        .unwrap()
        .t()
        .unwrap();
    let nanc = Tensor::from_slice(&[f64::NAN, 0.0, -0.0], &[3, 1]).unwrap();
    let z = Tensor::scalar(-1.0, DType::F64).unwrap();
    let w = Tensor::where_(&nanc, &x, &z).unwrap();
    assert_eq!(
        w.to_vec::<f64>().unwrap(),
        vec![0.0, 3.0, -1.0, -1.0, -1.0, -1.0]
    );
    let bad = Tensor::zeros(&[4], DType::Bool).unwrap();
    assert!(matches!(
        Tensor::where_(&bad, &a, &b).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
}

#[test]
fn cumulative_axes_dtypes_and_errors() {
    let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])
        .unwrap()
        .t()
        .unwrap();
    let s = t.cumulative_sum(Some(0), None, false).unwrap();
    assert_eq!(s.dtype(), DType::F32);
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 3.0, 7.0]);
    let p = t.cumulative_prod(Some(-1), Some(DType::F64), true).unwrap();
    assert_eq!(p.shape(), &[2, 3]);
    assert_eq!(
        p.to_vec::<f64>().unwrap(),
        vec![1.0, 1.0, 3.0, 1.0, 2.0, 8.0]
    );
    let b = Tensor::from_slice(&[true, true, false], &[3]).unwrap();
    assert_eq!(
        b.cumulative_sum(None, None, false)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![1, 2, 2]
    );
    assert!(matches!(
        t.cumulative_sum(None, None, false)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    let s0 = Tensor::scalar(1, DType::I32).unwrap();
    assert!(matches!(
        s0.cumulative_sum(None, None, false)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    let e = Tensor::zeros(&[0], DType::F64).unwrap();
    assert_eq!(
        e.cumulative_sum(None, None, true)
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        vec![0.0]
    );
}

#[test]
fn cumulative_prod_gradient_is_exact_at_zeros() {
    let x = Tensor::from_slice(&[2.0f64, 0.0, 3.0, 0.0, 5.0], &[5])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let y = x.cumulative_prod(None, None, false).unwrap();
    let l = y.sum(None, false).unwrap();
    tessera::autograd::backward(&l, None, false).unwrap();
    // y = [2, 0, 0, 0, 0]; dy_k/dx_i is the product of the others up to k.
    let want = [1.0, 2.0 * (1.0 + 3.0), 0.0, 0.0, 0.0];
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), want.to_vec());
}

#[test]
fn unique_keeps_every_nan_and_merges_signed_zeros() {
    let t = Tensor::from_slice(&[f64::NAN, -0.0, 0.0, f64::NAN, 1.0], &[5]).unwrap();
    let u = t.unique_all().unwrap();
    let v = u.values.to_vec::<f64>().unwrap();
    assert_eq!(v.len(), 4);
    assert!(
        v[0] == 0.0 && v[0].is_sign_negative() && v[1] == 1.0 && v[2].is_nan() && v[3].is_nan()
    );
    assert_eq!(u.indices.to_vec::<i64>().unwrap(), vec![1, 4, 0, 3]);
    assert_eq!(u.counts.to_vec::<i64>().unwrap(), vec![2, 1, 1, 1]);
    assert_eq!(
        u.inverse_indices.to_vec::<i64>().unwrap(),
        vec![2, 0, 0, 3, 1]
    );
    assert_eq!(t.unique_values().unwrap().numel(), 4);
    let s = Tensor::scalar(7, DType::U8).unwrap();
    assert_eq!(
        s.unique_all().unwrap().inverse_indices.shape(),
        &[] as &[usize]
    );
    let e = Tensor::zeros(&[2, 0], DType::I32).unwrap();
    assert_eq!(e.unique_values().unwrap().shape(), &[0]);
}

#[test]
fn concat_and_stack_shapes_promotion_and_errors() {
    let a = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    let b = Tensor::from_slice(&[0.5f64, 1.5], &[1, 2]).unwrap();
    let c = Tensor::concat(&[a.clone(), b.clone()], Some(0)).unwrap();
    assert_eq!((c.dtype(), c.shape()), (DType::F64, &[3usize, 2][..]));
    assert_eq!(
        c.to_vec::<f64>().unwrap(),
        vec![1.0, 2.0, 3.0, 4.0, 0.5, 1.5]
    );
    let f = Tensor::concat(&[a.t().unwrap(), b.clone()], None).unwrap();
    assert_eq!(
        f.to_vec::<f64>().unwrap(),
        vec![1.0, 3.0, 2.0, 4.0, 0.5, 1.5]
    );
    assert!(matches!(
        Tensor::concat(&[a.clone(), b.clone()], Some(1))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    assert!(Tensor::concat(&[], Some(0)).is_err());
    let s = Tensor::stack(&[a.clone(), a.flip(Some(&[0])).unwrap()], -1).unwrap();
    assert_eq!(s.shape(), &[2, 2, 2]);
    assert_eq!(s.to_vec::<i32>().unwrap(), vec![1, 3, 2, 4, 3, 1, 4, 2]);
    assert!(matches!(
        Tensor::stack(&[a.clone(), b], 0)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    assert!(matches!(
        Tensor::stack(std::slice::from_ref(&a), 3)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    let z = Tensor::scalar(1, DType::I64).unwrap();
    assert_eq!(
        Tensor::stack(&[z.clone(), z], 0)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![1, 1]
    );
}

#[test]
fn statistics_against_hand_worked_values() {
    let t = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 0.0, -1.0], &[2, 3]).unwrap();
    assert_eq!(
        t.prod(None, false, None).unwrap().to_vec::<f64>().unwrap(),
        vec![0.0]
    );
    assert_eq!(
        t.prod(Some(&[1]), true, None)
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        vec![6.0, 0.0]
    );
    assert_eq!(t.prod(Some(&[1]), true, None).unwrap().shape(), &[2, 1]);
    let e = Tensor::zeros(&[0, 2], DType::I32).unwrap();
    assert_eq!(
        e.prod(Some(&[0]), false, None)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![1, 1]
    );
    let v = t
        .var(Some(&[1]), 0.0, false)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert!(
        (v[0] - 2.0 / 3.0).abs() < 1e-12
            && (v[1] - (8.0 + 2.0 / 3.0) / 3.0 * 0.0 - v[1]).abs() < 1e-12
    );
    let s = t.std(None, 1.0, false).unwrap().item::<f64>().unwrap();
    let xs = [1.0, 2.0, 3.0, 4.0, 0.0, -1.0];
    let m = xs.iter().sum::<f64>() / 6.0;
    let want = (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 5.0).sqrt();
    assert!((s - want).abs() < 1e-12);
    let b = Tensor::from_slice(&[f64::NAN, 0.0, -0.0, 2.0], &[2, 2]).unwrap();
    assert_eq!(
        b.all(Some(&[1]), false).unwrap().to_vec::<bool>().unwrap(),
        vec![false, false]
    );
    assert_eq!(
        b.any(Some(&[1]), false).unwrap().to_vec::<bool>().unwrap(),
        vec![true, true]
    );
    assert_eq!(
        b.count_nonzero(None, false)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![2]
    );
    let z = Tensor::zeros(&[0], DType::Bool).unwrap();
    assert_eq!(
        z.all(None, false).unwrap().to_vec::<bool>().unwrap(),
        vec![true]
    );
    assert_eq!(
        z.any(None, false).unwrap().to_vec::<bool>().unwrap(),
        vec![false]
    );
}

#[test]
fn manipulation_against_hand_worked_values() {
    let t = Tensor::arange(0, 6, 1, DType::I32)
        .unwrap()
        .reshape(&[1, 2, 3])
        .unwrap();
    assert_eq!(t.moveaxis(&[0], &[-1]).unwrap().shape(), &[2, 3, 1]);
    assert_eq!(t.moveaxis(&[2, 0], &[0, 1]).unwrap().shape(), &[3, 1, 2]);
    assert!(t.moveaxis(&[0, 0], &[1, 2]).is_err());
    let u = t.unstack(1).unwrap();
    assert_eq!(u.len(), 2);
    assert_eq!(u[1].to_vec::<i32>().unwrap(), vec![3, 4, 5]);
    let r = t.roll(&[1], Some(&[2])).unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), vec![2, 0, 1, 5, 3, 4]);
    assert_eq!(
        t.roll(&[-7], None).unwrap().to_vec::<i32>().unwrap(),
        vec![1, 2, 3, 4, 5, 0]
    );
    assert_eq!(
        t.roll(&[1, 1], Some(&[1, 2]))
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![5, 3, 4, 2, 0, 1]
    );
    let x = Tensor::from_slice(&[1i64, 4, 9, 16], &[4]).unwrap();
    assert_eq!(
        x.diff(0, 2, None, None).unwrap().to_vec::<i64>().unwrap(),
        vec![2, 2]
    );
    assert_eq!(x.diff(0, 9, None, None).unwrap().shape(), &[0]);
    let p = Tensor::from_slice(&[0i64], &[1]).unwrap();
    assert_eq!(
        x.diff(0, 1, Some(&p), None)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![1, 3, 5, 7]
    );
    let bl = Tensor::from_slice(&[true, true, false], &[3]).unwrap();
    assert_eq!(
        bl.diff(-1, 1, None, None)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![false, true]
    );
    let m = Tensor::arange(1, 7, 1, DType::F32)
        .unwrap()
        .reshape(&[2, 3])
        .unwrap();
    assert_eq!(
        m.tril(0).unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, 0.0, 0.0, 4.0, 5.0, 0.0]
    );
    assert_eq!(
        m.triu(1).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0, 2.0, 3.0, 0.0, 0.0, 6.0]
    );
    assert_eq!(
        m.triu(i64::MIN).unwrap().to_vec::<f32>().unwrap(),
        m.to_vec::<f32>().unwrap()
    );
    assert_eq!(
        m.tril(i64::MIN).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0; 6]
    );
    assert!(x.tril(0).is_err());
    let a = Tensor::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    let b = Tensor::from_slice(&[10i32, 20], &[2]).unwrap();
    let g = Tensor::meshgrid(&[a.clone(), b.clone()], "xy").unwrap();
    assert_eq!(g[0].shape(), &[2, 3]);
    assert_eq!(g[0].to_vec::<i32>().unwrap(), vec![1, 2, 3, 1, 2, 3]);
    assert_eq!(g[1].to_vec::<i32>().unwrap(), vec![10, 10, 10, 20, 20, 20]);
    let g = Tensor::meshgrid(&[a.clone(), b.clone()], "ij").unwrap();
    assert_eq!(g[0].shape(), &[3, 2]);
    assert!(Tensor::meshgrid(std::slice::from_ref(&a), "yx").is_err());
    let ba = Tensor::broadcast_arrays(&[a.reshape(&[3, 1]).unwrap(), b.clone()]).unwrap();
    assert_eq!(ba[1].shape(), &[3, 2]);
}

#[test]
fn creation_repeat_nonzero_searchsorted() {
    assert_eq!(
        Tensor::eye(3, 2, -1, DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(
        Tensor::eye(2, 2, i64::MAX, DType::Bool)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![false; 4]
    );
    let l = Tensor::linspace(0.0, 1.0, 4, false, DType::F32).unwrap();
    assert_eq!(l.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75]);
    assert_eq!(
        Tensor::linspace(2.0, 3.0, 1, true, DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        vec![2.0]
    );
    assert_eq!(
        Tensor::linspace(2.0, 3.0, 0, true, DType::F64)
            .unwrap()
            .shape(),
        &[0]
    );
    let x = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    let two = Tensor::scalar(2, DType::I64).unwrap();
    assert_eq!(
        x.repeat_interleave(&two, Some(0))
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![1, 2, 1, 2, 3, 4, 3, 4]
    );
    let per = Tensor::from_slice(&[0i64, 3], &[2]).unwrap();
    let r = x.repeat_interleave(&per, Some(1)).unwrap();
    assert_eq!(
        (r.shape(), r.to_vec::<i32>().unwrap()),
        (&[2usize, 3][..], vec![2, 2, 2, 4, 4, 4])
    );
    let neg = Tensor::from_slice(&[-1i64, 3], &[2]).unwrap();
    assert!(x.repeat_interleave(&neg, Some(1)).is_err());
    assert!(x.repeat_interleave(&per, None).is_err());
    let w = Tensor::from_slice(&[0.0f64, f64::NAN, 0.0, -0.0, 2.0, 0.0], &[2, 3]).unwrap();
    assert_eq!(
        w.argwhere().unwrap().to_vec::<i64>().unwrap(),
        vec![0, 1, 1, 1]
    );
    assert!(Tensor::scalar(1, DType::I32).unwrap().argwhere().is_err());
    let s = Tensor::from_slice(&[3.0f64, 1.0, f64::NAN, 2.0], &[4]).unwrap();
    let sorter = s.argsort(0, false).unwrap();
    let v = Tensor::from_slice(&[2.0f64, f64::NAN, -5.0], &[3]).unwrap();
    assert_eq!(
        s.searchsorted(&v, false, Some(&sorter))
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![1, 3, 0]
    );
    assert_eq!(
        s.searchsorted(&v, true, Some(&sorter))
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![2, 4, 0]
    );
    let bad = Tensor::from_slice(&[0i64, 1, 2, 4], &[4]).unwrap();
    assert!(matches!(
        s.searchsorted(&v, false, Some(&bad))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Lanes long enough for the radix path (>= 512), with ties, signed zeros and NaNs, in
    /// f64, f32, i8 and i64: sort, argsort (both directions) and unique against references.
    #[test]
    fn long_lanes_take_the_radix_path_and_match_references(
        v in proptest::collection::vec(value(), 512..1500),
        desc: bool,
        wide in proptest::collection::vec(any::<i64>(), 512..1500),
    ) {
        let n = v.len();
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&i, &j| {
            let o = np_cmp(v[i], v[j]);
            if desc { o.reverse() } else { o }
        });
        let want: Vec<f64> = idx.iter().map(|&i| v[i]).collect();
        let t = Tensor::from_vec(v.clone(), &[n]).unwrap();
        prop_assert!(same_bits(&t.sort(0, desc, true).unwrap().to_vec::<f64>().unwrap(), &want));
        let got: Vec<usize> = t.argsort(0, desc).unwrap().to_vec::<i64>().unwrap().into_iter().map(|i| i as usize).collect();
        prop_assert_eq!(&got, &idx);
        let t32 = t.astype(DType::F32).unwrap();
        let got32: Vec<usize> = t32.argsort(0, desc).unwrap().to_vec::<i64>().unwrap().into_iter().map(|i| i as usize).collect();
        prop_assert_eq!(&got32, &idx);
        let s32: Vec<f64> = t32.sort(0, desc, true).unwrap().to_vec::<f32>().unwrap().into_iter().map(f64::from).collect();
        prop_assert!(same_bits(&s32, &want));
        // Finite values as i8: ties everywhere.
        let small: Vec<i8> = v.iter().map(|&x| if x.is_finite() { x as i8 } else { 7 }).collect();
        let ti = Tensor::from_vec(small.clone(), &[n]).unwrap();
        let mut si = small.clone();
        si.sort();
        if desc { si.reverse(); }
        prop_assert_eq!(ti.sort(0, desc, false).unwrap().to_vec::<i8>().unwrap(), si);
        let mut uw = wide.clone();
        uw.sort();
        uw.dedup();
        let tw = Tensor::from_vec(wide.clone(), &[wide.len()]).unwrap();
        prop_assert_eq!(tw.unique_values().unwrap().to_vec::<i64>().unwrap(), uw.clone());
        prop_assert_eq!(tw.unique_all().unwrap().values.to_vec::<i64>().unwrap(), uw);
        let mut sw = wide.clone();
        sw.sort();
        prop_assert_eq!(tw.sort(0, false, true).unwrap().to_vec::<i64>().unwrap(), sw);
    }
}
