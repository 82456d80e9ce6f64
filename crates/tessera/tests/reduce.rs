//! Reductions against a naive reference, and NumPy's dtype and edge-case rules.

use proptest::prelude::*;
use tessera::{DType, ErrorKind, Tensor};

/// The row-major index among the kept dims (`mask[d]` false) of the element at row-major
/// index `lin` of `dims`: where a reduction puts that element's contribution.
fn kept_index(lin: usize, dims: &[usize], mask: &[bool]) -> usize {
    let (mut rem, mut o, mut mul) = (lin, 0, 1);
    for d in (0..dims.len()).rev() {
        let i = rem % dims[d];
        rem /= dims[d];
        if !mask[d] {
            o += i * mul;
            mul *= dims[d];
        }
    }
    o
}

#[test]
fn dtypes_follow_numpy() {
    let u = Tensor::from_slice(&[200u8, 100], &[2]).unwrap();
    let s = u.sum(None, false).unwrap();
    // Unsigned integers sum in uint64 (NumPy, the array API standard).
    assert_eq!((s.dtype(), s.item::<u64>().unwrap()), (DType::U64, 300));
    let m = u.mean(None, false).unwrap();
    assert_eq!((m.dtype(), m.item::<f64>().unwrap()), (DType::F64, 150.0));
    let b = Tensor::from_slice(&[true, true, false], &[3]).unwrap();
    assert_eq!(b.sum(None, false).unwrap().item::<i64>().unwrap(), 2);
    assert!(b.max(None, false).unwrap().item::<bool>().unwrap());
    let h = Tensor::full(&[4096], 1.0, DType::F16).unwrap();
    // f16 accumulates in f32: 4096 is exact (a naive f16 sum would stall at 2048).
    assert_eq!(
        h.sum(None, false)
            .unwrap()
            .item::<half::f16>()
            .unwrap()
            .to_f32(),
        4096.0
    );
    let f = Tensor::from_slice(&[1.0f32, f64::NAN as f32, 3.0], &[3]).unwrap();
    assert!(f.max(None, false).unwrap().item::<f32>().unwrap().is_nan());
    assert!(f.min(None, false).unwrap().item::<f32>().unwrap().is_nan());
}

#[test]
fn axes_keepdims_and_errors() {
    let t = Tensor::arange(0, 24, 1, DType::I32)
        .unwrap()
        .as_strided(&[2, 3, 4], &[12, 4, 1], 0)
        .unwrap();
    let s = t.sum(Some(&[0, -1]), false).unwrap();
    assert_eq!(s.shape(), &[3]);
    assert_eq!(s.to_vec::<i64>().unwrap(), vec![60, 92, 124]);
    assert_eq!(t.max(Some(&[1]), true).unwrap().shape(), &[2, 1, 4]);
    assert_eq!(t.min(None, true).unwrap().shape(), &[1, 1, 1]);
    assert!(matches!(
        t.sum(Some(&[3]), false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        t.sum(Some(&[-4]), false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        t.sum(Some(&[1, -2]), false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert_eq!(t.sum(Some(&[]), false).unwrap().shape(), &[2, 3, 4]);
}

#[test]
fn empty_and_rank0() {
    let e = Tensor::zeros(&[0, 3], DType::F64).unwrap();
    assert_eq!(
        e.sum(Some(&[0]), false).unwrap().to_vec::<f64>().unwrap(),
        vec![0.0; 3]
    );
    assert!(e.mean(None, false).unwrap().item::<f64>().unwrap().is_nan());
    assert!(matches!(
        e.max(Some(&[0]), false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert_eq!(e.max(Some(&[1]), false).unwrap().shape(), &[0]);
    let s = Tensor::scalar(5i64, DType::I64).unwrap();
    assert_eq!(s.sum(None, false).unwrap().item::<i64>().unwrap(), 5);
    assert!(matches!(
        s.sum(Some(&[0]), false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
}

#[test]
fn pairwise_float_sum_is_close_to_exact() {
    let n = 1 << 20;
    let t = Tensor::full(&[n], 0.1, DType::F32).unwrap();
    let s = t.sum(None, false).unwrap().item::<f32>().unwrap();
    assert!((s as f64 - n as f64 * 0.1f32 as f64).abs() < 0.5, "{s}");
    // Column sums of a large matrix (parallel path, row accumulation).
    let m = Tensor::ones(&[512, 256], DType::F64).unwrap();
    assert_eq!(
        m.sum(Some(&[0]), false).unwrap().to_vec::<f64>().unwrap(),
        vec![512.0; 256]
    );
}

proptest! {
    #[test]
    fn sum_and_max_match_naive(dims in proptest::collection::vec(1usize..5, 0..=4),
                               mask in proptest::collection::vec(any::<bool>(), 4),
                               flip in any::<bool>()) {
        let n: usize = dims.iter().product();
        let base = Tensor::arange(0, n as i64, 1, DType::I64).unwrap();
        // Column-major view, optionally reversed along dim 0.
        let mut strides = vec![0isize; dims.len()];
        let mut acc = 1isize;
        for d in 0..dims.len() { strides[d] = acc; acc *= dims[d] as isize; }
        let mut off = 0;
        if flip && !dims.is_empty() {
            off = (dims[0] - 1) as isize * strides[0];
            strides[0] = -strides[0];
        }
        let t = base.as_strided(&dims, &strides, off as usize).unwrap();
        let axes: Vec<isize> = (0..dims.len()).filter(|&d| mask[d]).map(|d| d as isize).collect();
        let s = t.sum(Some(&axes), true).unwrap();
        let mx = t.max(Some(&axes), true).unwrap();
        let out_shape: Vec<usize> = (0..dims.len()).map(|d| if mask[d] { 1 } else { dims[d] }).collect();
        prop_assert_eq!(s.shape(), &out_shape[..]);
        let vals = t.to_vec::<i64>().unwrap();
        let m: usize = out_shape.iter().product();
        let mut want_s = vec![0i64; m];
        let mut want_m = vec![i64::MIN; m];
        for (lin, &v) in vals.iter().enumerate() {
            let o = kept_index(lin, &dims, &mask);
            want_s[o] += v;
            want_m[o] = want_m[o].max(v);
        }
        prop_assert_eq!(s.to_vec::<i64>().unwrap(), want_s);
        prop_assert_eq!(mx.to_vec::<i64>().unwrap(), want_m);
    }
}

proptest! {
    /// Float max/min over any axes of a row-major tensor (outer axes take the vertical
    /// row-update path, inner ones the flagged run fold), with NaNs, infinities and signed
    /// zeros at random places, against the naive NaN-propagating fold per output element.
    #[test]
    fn float_max_and_min_propagate_nan_on_every_axis(
        dims in proptest::collection::vec(1usize..40, 1..=3),
        mask in proptest::collection::vec(any::<bool>(), 3),
        picks in proptest::collection::vec(0usize..9, 64_000),
    ) {
        let pool = [1.5, -2.0, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, 7.25, -7.25, f64::NAN];
        let n: usize = dims.iter().product();
        // NaN is one pick in nine: often no NaN in a row, often several.
        let vals: Vec<f64> = picks[..n].iter().map(|&k| pool[k]).collect();
        let axes: Vec<isize> = (0..dims.len()).filter(|&d| mask[d]).map(|d| d as isize).collect();
        let m: usize = (0..dims.len()).filter(|&d| !mask[d]).map(|d| dims[d]).product();
        let mut want_max = vec![f64::NEG_INFINITY; m];
        let mut want_min = vec![f64::INFINITY; m];
        for (lin, &v) in vals.iter().enumerate() {
            let o = kept_index(lin, &dims, &mask);
            // NaN-propagating, written out.
            want_max[o] = if v.is_nan() || want_max[o].is_nan() { f64::NAN } else { want_max[o].max(v) };
            want_min[o] = if v.is_nan() || want_min[o].is_nan() { f64::NAN } else { want_min[o].min(v) };
        }
        let same = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x == y || (x.is_nan() && y.is_nan()));
        for dtype in [DType::F64, DType::F32] {
            let t = Tensor::from_slice(&vals, &dims).unwrap().astype(dtype).unwrap();
            let got_max = t.max(Some(&axes), false).unwrap().astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            let got_min = t.min(Some(&axes), false).unwrap().astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            prop_assert!(same(&got_max, &want_max), "max {:?} axes {:?}: {:?} vs {:?}", dims, axes, got_max, want_max);
            prop_assert!(same(&got_min, &want_min), "min {:?} axes {:?}: {:?} vs {:?}", dims, axes, got_min, want_min);
        }
    }
}

/// The reference of `prod`, `any`, `all` and `count_nonzero` over the axes in `mask`: a
/// naive fold per output element of `vals` (row-major over `dims`).
fn naive_truth_and_prod(
    vals: &[f64],
    dims: &[usize],
    mask: &[bool],
) -> (Vec<f64>, Vec<bool>, Vec<bool>, Vec<i64>) {
    let m: usize = (0..dims.len())
        .filter(|&d| !mask[d])
        .map(|d| dims[d])
        .product();
    let (mut prod, mut any, mut all, mut count) =
        (vec![1.0; m], vec![false; m], vec![true; m], vec![0i64; m]);
    for (lin, &v) in vals.iter().enumerate() {
        let o = kept_index(lin, dims, mask);
        // Sequential, in index order.
        prod[o] *= v;
        let t = v != 0.0; // NaN is true, -0.0 false
        any[o] |= t;
        all[o] &= t;
        count[o] += t as i64;
    }
    (prod, any, all, count)
}

proptest! {
    /// `prod`, `any`, `all` and `count_nonzero` over any axes of strided, reversed and
    /// broadcast views, for f64 (with zeros of both signs, NaN and infinities) and i64,
    /// against the naive fold (products compared to a relative 1e-12: lanes reorder them).
    #[test]
    fn prod_and_truth_reductions_match_naive(
        dims in proptest::collection::vec(1usize..6, 0..=3),
        mask in proptest::collection::vec(any::<bool>(), 3),
        picks in proptest::collection::vec(0usize..8, 216),
        layout in 0usize..3,
        whole in any::<bool>(),
    ) {
        let pool = [1.5, -2.0, 0.0, -0.0, f64::INFINITY, 3.0, f64::NAN, 0.5];
        let n: usize = dims.iter().product();
        let base: Vec<f64> = picks[..n].iter().map(|&k| pool[k]).collect();
        let t0 = Tensor::from_slice(&base, &dims).unwrap();
        // Layouts: row-major; transposed (reversed dims, then the values read in that order);
        // broadcast along a new leading dim of 3.
        let (t, vals, vdims, vmask): (Tensor, Vec<f64>, Vec<usize>, Vec<bool>) = match layout {
            0 => (t0, base.clone(), dims.clone(), mask[..dims.len()].to_vec()),
            1 => {
                let perm: Vec<isize> = (0..dims.len() as isize).rev().collect();
                let t = t0.permute(&perm).unwrap();
                let v = t.to_vec::<f64>().unwrap();
                let d = t.shape().to_vec();
                (t, v, d, mask[..dims.len()].to_vec())
            }
            _ => {
                let mut d = vec![3];
                d.extend(&dims);
                let t = t0.broadcast_to(&d).unwrap();
                let v = t.to_vec::<f64>().unwrap();
                let mut m = vec![mask[2]];
                m.extend(&mask[..dims.len()]);
                (t, v, d, m)
            }
        };
        let axes: Vec<isize> = (0..vdims.len()).filter(|&d| vmask[d]).map(|d| d as isize).collect();
        let (axes_opt, mask_all) = if whole { (None, vec![true; vdims.len()]) } else { (Some(&axes[..]), vmask.clone()) };
        let (want_prod, want_any, want_all, want_count) = naive_truth_and_prod(&vals, &vdims, &mask_all);
        prop_assert_eq!(t.any(axes_opt, false).unwrap().to_vec::<bool>().unwrap(), want_any);
        prop_assert_eq!(t.all(axes_opt, false).unwrap().to_vec::<bool>().unwrap(), want_all);
        prop_assert_eq!(t.count_nonzero(axes_opt, false).unwrap().to_vec::<i64>().unwrap(), want_count);
        let got = t.prod(axes_opt, false, None).unwrap().to_vec::<f64>().unwrap();
        for (g, w) in got.iter().zip(&want_prod) {
            let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 1e-12 * w.abs();
            prop_assert!(ok, "prod {:?} vs {:?}", got, want_prod);
        }
        // int64: the same values truncated (NaN and inf replaced by 7); products wrap.
        let ivals: Vec<i64> = vals.iter().map(|&v| if v.is_finite() { v as i64 } else { 7 }).collect();
        let ti = Tensor::from_slice(&ivals, &vdims).unwrap();
        let fvals: Vec<f64> = ivals.iter().map(|&v| v as f64).collect();
        let (_, wa, wl, wc) = naive_truth_and_prod(&fvals, &vdims, &mask_all);
        let mut wp = vec![1i64; wc.len()];
        for (lin, &v) in ivals.iter().enumerate() {
            let o = kept_index(lin, &vdims, &mask_all);
            wp[o] = wp[o].wrapping_mul(v);
        }
        prop_assert_eq!(ti.prod(axes_opt, false, None).unwrap().to_vec::<i64>().unwrap(), wp);
        prop_assert_eq!(ti.any(axes_opt, false).unwrap().to_vec::<bool>().unwrap(), wa);
        prop_assert_eq!(ti.all(axes_opt, false).unwrap().to_vec::<bool>().unwrap(), wl);
        prop_assert_eq!(ti.count_nonzero(axes_opt, false).unwrap().to_vec::<i64>().unwrap(), wc);
    }
}

#[test]
fn complex_truth_counts_either_part_and_long_runs_decide_early() {
    use tessera::complex::C128;
    let z = Tensor::from_slice(
        &[
            C128::new(0.0, 1.0),
            C128::new(0.0, 0.0),
            C128::new(2.0, 0.0),
        ],
        &[3],
    )
    .unwrap();
    // NumPy: np.any([1j, 0, 2]) is True, np.all(...) False, np.count_nonzero(...) 2.
    assert!(z.any(None, false).unwrap().item::<bool>().unwrap());
    assert!(!z.all(None, false).unwrap().item::<bool>().unwrap());
    assert_eq!(
        z.count_nonzero(None, false).unwrap().item::<i64>().unwrap(),
        2
    );
    let first_two = z.narrow(0, 0, 2).unwrap();
    assert!(first_two.any(None, false).unwrap().item::<bool>().unwrap());
    assert!(z.astype(DType::Bool).unwrap().to_vec::<bool>().unwrap() == vec![true, false, true]);
    // Runs longer than one decision block, with the deciding element at the very end,
    // at the start, or nowhere.
    for n in [4095usize, 4096, 4097, 20_000] {
        let mut v = vec![0.0f32; n];
        let t = Tensor::from_slice(&v, &[n]).unwrap();
        assert!(!t.any(None, false).unwrap().item::<bool>().unwrap());
        v[n - 1] = -1.0;
        let t = Tensor::from_slice(&v, &[n]).unwrap();
        assert!(t.any(None, false).unwrap().item::<bool>().unwrap());
        let ones = Tensor::full(&[n], 1.0, DType::F32).unwrap();
        assert!(ones.all(None, false).unwrap().item::<bool>().unwrap());
        let mut w = vec![1.0f32; n];
        w[n - 1] = 0.0;
        let t = Tensor::from_slice(&w, &[n]).unwrap();
        assert!(!t.all(None, false).unwrap().item::<bool>().unwrap());
        assert_eq!(
            t.count_nonzero(None, false).unwrap().item::<i64>().unwrap(),
            n as i64 - 1
        );
    }
}

proptest! {
    /// Integer `max`/`min` over rows long enough for the AVX-512 copy (from 256 elements),
    /// down columns (the row-at-a-time fold) and over everything, for signed, unsigned and
    /// 8-bit types, against a naive fold of the same values.
    #[test]
    fn int_max_and_min_match_naive_on_long_runs(
        vals in proptest::collection::vec(any::<i64>(), 1..4000),
        cols in 1usize..700,
    ) {
        let cols = cols.min(vals.len());
        let rows = vals.len() / cols;
        let vals = &vals[..rows * cols];
        let base = Tensor::from_vec(vals.to_vec(), &[rows, cols]).unwrap();
        macro_rules! check {
            ($t:ty, $dt:expr) => {{
                let t = base.astype($dt).unwrap();
                let v = t.to_vec::<$t>().unwrap();
                for (axis, outer, len) in [(1isize, rows, cols), (0, cols, rows)] {
                    let at = |o: usize, i: usize| if axis == 1 { v[o * cols + i] } else { v[i * cols + o] };
                    let want_max: Vec<$t> = (0..outer).map(|o| (0..len).map(|i| at(o, i)).max().unwrap()).collect();
                    let want_min: Vec<$t> = (0..outer).map(|o| (0..len).map(|i| at(o, i)).min().unwrap()).collect();
                    prop_assert_eq!(t.max(Some(&[axis]), false).unwrap().to_vec::<$t>().unwrap(), want_max);
                    prop_assert_eq!(t.min(Some(&[axis]), false).unwrap().to_vec::<$t>().unwrap(), want_min);
                }
                prop_assert_eq!(t.max(None, false).unwrap().item::<$t>().unwrap(), *v.iter().max().unwrap());
                prop_assert_eq!(t.min(None, false).unwrap().item::<$t>().unwrap(), *v.iter().min().unwrap());
            }};
        }
        check!(i64, DType::I64);
        check!(u64, DType::U64);
        check!(i32, DType::I32);
        check!(u8, DType::U8);
        check!(i8, DType::I8);
    }
}
