//! `isin` (the standard's set-membership function) against a naive double loop.

use proptest::prelude::*;
use tessera::{DType, Tensor};

/// Values with ties, signed zeros, NaN and infinities.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-4i32..4).prop_map(f64::from),
        1 => Just(f64::NAN),
        1 => Just(-0.0),
        1 => Just(f64::INFINITY),
    ]
}

proptest! {
    /// Every element of x against every element of the set with `==` (so NaN is never in a
    /// set and -0.0 == 0.0), in f64, and again with x cast to int32 against the f64 set
    /// (compared after promotion to float64).
    #[test]
    fn isin_matches_a_double_loop(
        x in proptest::collection::vec(value(), 0..40),
        set in proptest::collection::vec(value(), 0..12),
        invert: bool,
    ) {
        let n = x.len();
        let xt = Tensor::from_vec(x.clone(), &[n]).unwrap();
        let st = Tensor::from_vec(set.clone(), &[set.len()]).unwrap();
        let got = xt.isin(&st, invert).unwrap();
        prop_assert_eq!(got.dtype(), DType::Bool);
        let want: Vec<bool> = x.iter().map(|a| set.iter().any(|b| a == b) != invert).collect();
        prop_assert_eq!(got.to_vec::<bool>().unwrap(), want);

        let finite: Vec<i32> = x.iter().map(|&a| if a.is_finite() { a as i32 } else { 7 }).collect();
        let xi = Tensor::from_vec(finite.clone(), &[n]).unwrap();
        let want: Vec<bool> = finite.iter().map(|&a| set.iter().any(|&b| f64::from(a) == b) != invert).collect();
        prop_assert_eq!(xi.isin(&st, invert).unwrap().to_vec::<bool>().unwrap(), want);
    }
}

#[test]
fn isin_keeps_the_shape_of_x_and_takes_a_set_of_any_shape() {
    let x = Tensor::from_slice(&[1u8, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let set = Tensor::from_slice(&[6i16, 1, 3, 300], &[2, 2]).unwrap();
    let r = x.isin(&set, false).unwrap();
    assert_eq!(r.shape(), &[2, 3]);
    assert_eq!(
        r.to_vec::<bool>().unwrap(),
        vec![true, false, true, false, false, true]
    );
    // A 0-d x and an empty set.
    let zero_d = Tensor::from_slice(&[2.5f32], &[]).unwrap();
    let empty = Tensor::zeros(&[0], DType::F32).unwrap();
    assert_eq!(
        zero_d
            .isin(&empty, false)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![false]
    );
    assert_eq!(zero_d.isin(&empty, true).unwrap().shape(), &[] as &[usize]);
    // uint64 with a signed set has no common dtype: a typed error, not a panic.
    let u = Tensor::from_slice(&[1u64], &[1]).unwrap();
    let s = Tensor::from_slice(&[1i64], &[1]).unwrap();
    assert!(u.isin(&s, false).is_err());
}
