//! Creating tensors of every dtype, reading them back, and the errors for bad input.

use half::{bf16, f16};
use proptest::prelude::*;
use tessera::{with_dtype, DType, Element, ErrorKind, Scalar, Tensor};

#[test]
fn zeros_ones_full_of_every_dtype() {
    for d in DType::ALL {
        with_dtype!(d, T => {
            let z = Tensor::zeros(&[2, 3], d).unwrap();
            assert_eq!(z.dtype(), d);
            assert_eq!(z.shape(), &[2, 3]);
            assert_eq!(z.strides(), &[3, 1]);
            assert!(z.is_contiguous());
            assert_eq!(z.to_vec::<T>().unwrap(), vec![T::from_i64(0); 6]);
            assert_eq!(Tensor::empty(&[4], d).unwrap().numel(), 4);
            assert_eq!(Tensor::ones(&[3], d).unwrap().to_vec::<T>().unwrap(), vec![T::from_i64(1); 3]);
            let f = Tensor::full(&[2, 2], 5, d).unwrap();
            assert_eq!(f.to_vec::<T>().unwrap(), vec![T::from_i64(5); 4]);
            let s = Tensor::scalar(1, d).unwrap();
            assert_eq!(s.rank(), 0);
            assert_eq!(s.item::<T>().unwrap(), T::from_i64(1));
        });
    }
}

#[test]
fn from_vec_round_trips_every_dtype() {
    fn check<T: Element>(data: Vec<T>) {
        let t = Tensor::from_vec(data.clone(), &[data.len()]).unwrap();
        assert_eq!(t.dtype(), T::DTYPE);
        assert_eq!(t.to_vec::<T>().unwrap(), data);
    }
    check(vec![true, false, true]);
    check(vec![0u8, 255, 7]);
    check(vec![-128i8, 127, 0]);
    check(vec![i32::MIN, i32::MAX]);
    check(vec![i64::MIN, i64::MAX, 3]);
    check(vec![f16::from_f32(0.5), f16::MAX, f16::NEG_INFINITY]);
    check(vec![bf16::from_f32(-1.25), bf16::MIN_POSITIVE]);
    check(vec![1.5f32, -0.0, f32::MAX]);
    check(vec![std::f64::consts::PI, 1e-300]);
}

#[test]
fn full_converts_like_rust_as() {
    let t = Tensor::full(&[2], -1.7, DType::I32).unwrap();
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![-1, -1]);
    let t = Tensor::full(&[1], 300.0, DType::U8).unwrap();
    assert_eq!(
        t.to_vec::<u8>().unwrap(),
        vec![255],
        "float to u8 saturates"
    );
    let t = Tensor::full(&[1], (1i64 << 60) + 1, DType::I64).unwrap();
    assert_eq!(
        t.item::<i64>().unwrap(),
        (1i64 << 60) + 1,
        "integer fills stay exact"
    );
    let t = Tensor::full(&[1], 0.5, DType::Bool).unwrap();
    assert!(t.item::<bool>().unwrap());
    assert_eq!(Scalar::from(true).to::<f32>(), 1.0);
}

#[test]
fn bad_input_is_a_typed_error() {
    assert!(matches!(
        Tensor::from_vec(vec![1f32, 2.0, 3.0], &[2, 2])
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::DataLength {
            expected: 4,
            got: 3,
            ..
        })
    ));
    let t = Tensor::zeros(&[2], DType::F32).unwrap();
    assert!(matches!(
        t.to_vec::<f64>().as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::DTypeMismatch {
            expected: DType::F64,
            got: DType::F32
        })
    ));
    assert!(matches!(
        t.item::<f32>().as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        Tensor::zeros(&[1 << 62, 4], DType::U8)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    // Element count fits, byte size does not.
    assert!(matches!(
        Tensor::zeros(&[1 << 61], DType::F64)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    assert!(matches!(
        Tensor::zeros(&[0, 1 << 40, 1 << 40], DType::F32)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    // Fits in isize but not in memory: an error, not an abort.
    assert!(matches!(
        Tensor::zeros(&[1 << 50, 1 << 10], DType::U8)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Allocation(_))
    ));
    assert!(matches!(
        Tensor::arange(0, 5, 0, DType::I32)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        Tensor::arange(0.0, f64::INFINITY, 1.0, DType::F32)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        Tensor::arange(0.0, 1e300, 1e-300, DType::F32)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
}

#[test]
fn empty_shapes_are_fine() {
    let t = Tensor::zeros(&[0, 3], DType::F32).unwrap();
    assert_eq!(t.numel(), 0);
    assert!(t.is_contiguous());
    assert_eq!(t.to_vec::<f32>().unwrap(), Vec::<f32>::new());
    assert_eq!(t.to_string(), "[]");
    assert_eq!(format!("{t:?}"), "tensor([], shape=(0, 3), dtype=float32)");
}

proptest! {
    /// `arange` with integer arguments against the naive NumPy definition.
    #[test]
    fn arange_int_matches_naive(start in -50i64..50, end in -50i64..50, step in prop_oneof![-7i64..-1, 1i64..7]) {
        let t = Tensor::arange(start, end, step, DType::I64).unwrap();
        let mut want = Vec::new();
        let mut v = start;
        while (step > 0 && v < end) || (step < 0 && v > end) {
            want.push(v);
            v += step;
        }
        prop_assert_eq!(t.to_vec::<i64>().unwrap(), want);
    }

    /// `arange` with float arguments: length ceil((end-start)/step), values start + i*step.
    #[test]
    fn arange_float_matches_naive(start in -10.0f64..10.0, len in 0usize..40, step in 0.01f64..3.0) {
        let end = start + step * len as f64;
        let t = Tensor::arange(start, end, step, DType::F64).unwrap();
        let n = ((end - start) / step).ceil().max(0.0) as usize;
        let want: Vec<f64> = (0..n).map(|i| start + i as f64 * step).collect();
        prop_assert_eq!(t.to_vec::<f64>().unwrap(), want);
    }
}
