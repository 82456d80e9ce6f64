//! argmax and argmin (docs/design.md A3) on long lanes and every layout, against a
//! first-occurrence loop, and their edge cases: flattened, 0-d, empty, zero-size dims, errors.

use proptest::prelude::*;
use tessera::{DType, ErrorKind, Tensor};

#[test]
fn argmax_flattened_and_errors() {
    let t = Tensor::from_slice(&[1i32, 5, 5, 2], &[2, 2]).unwrap();
    assert_eq!(
        t.argmax(None, false).unwrap().to_vec::<i64>().unwrap(),
        vec![1]
    );
    assert_eq!(t.argmax(None, true).unwrap().shape(), &[1, 1]);
    assert_eq!(t.argmin(None, false).unwrap().shape(), &[] as &[usize]);
    let s = Tensor::scalar(3, DType::I64).unwrap();
    assert_eq!(
        s.argmax(None, false).unwrap().to_vec::<i64>().unwrap(),
        vec![0]
    );
    let e = Tensor::zeros(&[0], DType::F64).unwrap();
    assert!(matches!(
        e.argmax(None, false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        t.argmin(Some(2), false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    // No lanes (a zero-size dim beside the axis), in every layout: an empty result.
    let z = Tensor::zeros(&[3, 0, 4], DType::F32).unwrap();
    for axis in [0isize, 2] {
        for v in [z.clone(), z.permute(&[2, 1, 0]).unwrap()] {
            let got = v.argmax(Some(axis), true).unwrap();
            let mut want = v.shape().to_vec();
            want[axis as usize] = 1;
            assert_eq!(got.shape(), &want[..]);
        }
    }
}

proptest! {
    /// argmax/argmin along every axis of 3-D tensors with lanes long enough to cross the
    /// scan's blocks, on contiguous, permuted (a transposed copy read back) and broadcast
    /// layouts, in f64, f32 and i64, against a first-occurrence loop (first NaN wins).
    /// NaN is rare (one pick in 400) so that most lanes compare values; many ties.
    #[test]
    fn argmax_argmin_on_long_lanes_and_every_layout(
        dims in (1usize..4, 1usize..700, 1usize..4).prop_map(|(a, b, c)| vec![a, b, c]),
        rot in 0usize..3,
        picks in proptest::collection::vec(0usize..400, 6300),
        layout in 0usize..3,
        axis in 0usize..3,
    ) {
        let mut dims = dims;
        dims.rotate_left(rot);
        let n: usize = dims.iter().product();
        let vals: Vec<f64> = picks[..n]
            .iter()
            .map(|&k| match k {
                0 => f64::NAN,
                1 => -0.0,
                k => (k % 37) as f64 - 18.0,
            })
            .collect();
        let lay = |base: Tensor| match layout {
            0 => base,
            // The same values, stored in reversed-axis order.
            1 => base.permute(&[2, 1, 0]).unwrap().contiguous().unwrap().permute(&[2, 1, 0]).unwrap(),
            // Dim 0 broadcast from its first slice.
            _ => base.narrow(0, 0, 1).unwrap().broadcast_to(&dims).unwrap(),
        };
        let ints: Vec<i64> = vals.iter().map(|&x| if x.is_nan() { 99 } else { x as i64 }).collect();
        let strides = [dims[1] * dims[2], dims[2], 1];
        for dtype in [DType::F64, DType::F32, DType::I64] {
            let td = if dtype == DType::I64 {
                lay(Tensor::from_vec(ints.clone(), &dims).unwrap())
            } else {
                lay(Tensor::from_vec(vals.clone(), &dims).unwrap()).astype(dtype).unwrap()
            };
            // The values as the tensor holds them, row-major (i64 exactly representable).
            let vd = td.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            for max in [true, false] {
                let got = if max { td.argmax(Some(axis as isize), false) } else { td.argmin(Some(axis as isize), false) };
                let got = got.unwrap().to_vec::<i64>().unwrap();
                let (o1, o2) = match axis { 0 => (1, 2), 1 => (0, 2), _ => (0, 1) };
                let mut k = 0;
                for i in 0..dims[o1] {
                    for j in 0..dims[o2] {
                        let lane: Vec<f64> = (0..dims[axis])
                            .map(|p| vd[i * strides[o1] + j * strides[o2] + p * strides[axis]])
                            .collect();
                        let want = match lane.iter().position(|x| x.is_nan()) {
                            Some(p) => p,
                            None => (0..lane.len()).fold(0, |b, p| if (max && lane[p] > lane[b]) || (!max && lane[p] < lane[b]) { p } else { b }),
                        };
                        prop_assert_eq!(got[k], want as i64, "{:?} {:?} axis {} max {} layout {}", dims, dtype, axis, max, layout);
                        k += 1;
                    }
                }
            }
        }
    }
}
