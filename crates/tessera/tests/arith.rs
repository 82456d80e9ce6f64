//! Elementwise arithmetic: promotion against NumPy, broadcast/strided operands against a
//! naive reference, dtype rules, and in-place writes through views (docs/design.md V7).

use proptest::prelude::*;
use tessera::promote::{result_type, result_type_scalar};
use tessera::{BinaryOp, DType, ErrorKind, Scalar, Tensor, UnaryOp};

/// `np.result_type(a, b)` for NumPy 2.4, generated with:
///
/// ```python
/// names = ['bool','uint8','int8','int32','int64','float16','float32','float64']
/// for a in names: print([str(np.result_type(a, b)) for b in names])
/// ```
const NUMPY_NAMES: [&str; 8] = [
    "bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64",
];
const NUMPY_RESULT_TYPE: [[&str; 8]; 8] = [
    [
        "bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64",
    ],
    [
        "uint8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64",
    ],
    [
        "int8", "int16", "int8", "int32", "int64", "float16", "float32", "float64",
    ],
    [
        "int32", "int32", "int32", "int32", "int64", "float64", "float64", "float64",
    ],
    [
        "int64", "int64", "int64", "int64", "int64", "float64", "float64", "float64",
    ],
    [
        "float16", "float16", "float16", "float64", "float64", "float16", "float32", "float64",
    ],
    [
        "float32", "float32", "float32", "float64", "float64", "float32", "float32", "float64",
    ],
    [
        "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64",
    ],
];

#[test]
fn promotion_table_matches_numpy() {
    for (i, a) in NUMPY_NAMES.iter().enumerate() {
        for (j, b) in NUMPY_NAMES.iter().enumerate() {
            let (a, b) = (DType::from_name(a).unwrap(), DType::from_name(b).unwrap());
            let want = NUMPY_RESULT_TYPE[i][j];
            match DType::from_name(want) {
                Some(w) => assert_eq!(result_type(a, b).unwrap(), w, "{a} {b}"),
                // int16: not a tessera dtype, a typed error instead.
                None => assert!(matches!(
                    result_type(a, b).as_ref().map_err(|e| e.kind()),
                    Err(ErrorKind::DType(_))
                )),
            }
        }
    }
}

#[test]
fn weak_scalars_follow_nep50() {
    use DType::*;
    assert_eq!(result_type_scalar(F32, Scalar::Float(2.5)).unwrap(), F32);
    assert_eq!(result_type_scalar(I32, Scalar::Int(2)).unwrap(), I32);
    assert_eq!(result_type_scalar(I32, Scalar::Float(2.5)).unwrap(), F64);
    assert_eq!(result_type_scalar(Bool, Scalar::Int(2)).unwrap(), I64);
    assert_eq!(result_type_scalar(BF16, Scalar::Float(1.0)).unwrap(), BF16);
    assert!(result_type_scalar(U8, Scalar::Int(-1)).is_err());
    let t = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let r = t.add_scalar(2.5).unwrap();
    assert_eq!(r.dtype(), F32);
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![3.5, 4.5]);
    let i = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
    assert_eq!(
        i.mul_scalar(3).unwrap().to_vec::<i32>().unwrap(),
        vec![3, 6]
    );
    assert_eq!(i.add_scalar(0.5).unwrap().dtype(), F64);
    let r = i.rbinary_scalar(10, BinaryOp::Sub).unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), vec![9, 8]);
}

#[test]
fn dtype_rules_follow_numpy() {
    let i = Tensor::from_slice(&[1i8, 2, 4], &[3]).unwrap();
    let d = i.div(&i).unwrap();
    assert_eq!(
        (d.dtype(), d.to_vec::<f64>().unwrap()),
        (DType::F64, vec![1.0; 3])
    );
    assert_eq!(i.sqrt().unwrap().dtype(), DType::F16);
    let l = Tensor::from_slice(&[4i64], &[1]).unwrap();
    assert_eq!(l.sqrt().unwrap().to_vec::<f64>().unwrap(), vec![2.0]);
    let b = Tensor::from_slice(&[true, false], &[2]).unwrap();
    assert_eq!(
        b.add(&b).unwrap().to_vec::<bool>().unwrap(),
        vec![true, false]
    );
    assert!(matches!(
        b.sub(&b).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::DType(_))
    ));
    assert!(matches!(
        b.neg().as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::DType(_))
    ));
    assert_eq!(b.pow(&b).unwrap().dtype(), DType::I8);
    let u = Tensor::from_slice(&[1u8], &[1]).unwrap();
    assert_eq!(u.add(&i).unwrap().dtype(), DType::I16);
    let big = Tensor::from_slice(&[1u64], &[1]).unwrap();
    assert!(matches!(
        big.add(&i).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::DType(_))
    ));
    let e = Tensor::from_slice(&[2i32, -1], &[2]).unwrap();
    assert!(matches!(
        e.pow(&e).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    let w = Tensor::from_slice(&[250u8, 3], &[2]).unwrap();
    assert_eq!(
        w.add_scalar(10).unwrap().to_vec::<u8>().unwrap(),
        vec![4, 13]
    );
    let x = Tensor::from_slice(&[1.0f64, f64::NAN], &[2]).unwrap();
    let m = x.maximum_scalar(2.0).unwrap().to_vec::<f64>().unwrap();
    assert!(m[0] == 2.0 && m[1].is_nan());
    assert_eq!(
        x.compare_scalar(1, tessera::CompareOp::Eq)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![true, false]
    );
    for op in UnaryOp::ALL {
        assert!(!op.name().is_empty());
        let h = Tensor::from_slice(&[half::f16::from_f32(0.5)], &[1]).unwrap();
        assert_eq!(h.unary(*op).unwrap().dtype(), DType::F16);
    }
}

#[test]
fn broadcast_errors_are_typed_and_edge_shapes_work() {
    let a = Tensor::zeros(&[2, 3], DType::F32).unwrap();
    let b = Tensor::zeros(&[4], DType::F32).unwrap();
    assert!(matches!(
        a.add(&b).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    let e = Tensor::zeros(&[0, 3], DType::F32).unwrap();
    assert_eq!(
        e.add(&a.as_strided(&[1, 3], &[3, 1], 0).unwrap())
            .unwrap()
            .shape(),
        &[0, 3]
    );
    let s = Tensor::scalar(2.0, DType::F64).unwrap();
    let r = s.mul(&s).unwrap();
    assert_eq!((r.shape(), r.item::<f64>().unwrap()), (&[][..], 4.0));
    assert_eq!(s.add(&a).unwrap().shape(), &[2, 3]);
}

/// docs/design.md V7: `a[1:] += a[:-1]` sees the source as copied first: [a0, a0+a1, a1+a2, ...],
/// not a running sum.
#[test]
fn v7_overlapping_in_place_reads_source_as_copied() {
    let a = Tensor::arange(1, 7, 1, DType::I64).unwrap();
    let tail = a.as_strided(&[5], &[1], 1).unwrap();
    let head = a.as_strided(&[5], &[1], 0).unwrap();
    tail.add_(&head).unwrap();
    assert_eq!(a.to_vec::<i64>().unwrap(), vec![1, 3, 5, 7, 9, 11]);
    // Self as both input and output is elementwise-safe.
    a.mul_(&a).unwrap();
    assert_eq!(a.to_vec::<i64>().unwrap(), vec![1, 9, 25, 49, 81, 121]);
}

/// docs/design.md V7: writes through a view reach the base; an overlapping (stride-0) destination
/// is an error; casting errors like NumPy's `int_arr += 1.5`.
#[test]
fn v7_in_place_through_views_and_errors() {
    let base = Tensor::zeros(&[3, 4], DType::F32).unwrap();
    let col = base.as_strided(&[3], &[4], 1).unwrap();
    col.add_scalar_(5.0).unwrap();
    let v = base.to_vec::<f32>().unwrap();
    assert_eq!((v[1], v[5], v[9], v[0]), (5.0, 5.0, 5.0, 0.0));
    let expanded = base.as_strided(&[3, 4], &[0, 1], 0).unwrap();
    assert!(matches!(
        expanded.add_scalar_(1.0).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::OverlappingWrite(_))
    ));
    let ints = Tensor::zeros(&[2], DType::I32).unwrap();
    assert!(matches!(
        ints.add_scalar_(1.5).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::DType(_))
    ));
    let big = Tensor::zeros(&[2, 2], DType::F32).unwrap();
    assert!(matches!(
        col.add_(&big).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    // Broadcast source into a transposed destination.
    let row = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let t = base.as_strided(&[4, 3], &[1, 4], 0).unwrap();
    t.add_(&row).unwrap();
    assert_eq!(base.to_vec::<f32>().unwrap()[4..8], [2.0, 7.0, 2.0, 2.0]);
}

/// A strided view over an `arange` storage: dims, a permutation and per-dim flips.
fn view(dims: &[usize], perm: &[usize], flips: &[bool], dtype: DType) -> Tensor {
    let n: usize = dims.iter().product();
    let base = Tensor::arange(0, n.max(1) as i64, 1, dtype).unwrap();
    // Lay out memory in permuted order, then view it back in `dims` order.
    let mut strides = vec![0isize; dims.len()];
    let mut acc = 1isize;
    for &p in perm.iter().rev() {
        strides[p] = acc;
        acc *= dims[p] as isize;
    }
    let mut off = 0isize;
    for d in 0..dims.len() {
        if flips[d] && dims[d] > 0 {
            off += (dims[d] as isize - 1) * strides[d];
            strides[d] = -strides[d];
        }
    }
    base.as_strided(dims, &strides, off as usize).unwrap()
}

/// Naive reference: the element of `t` (row-major values `v`, shape `s`) at broadcast index.
fn at(v: &[f64], s: &[usize], idx: &[usize]) -> f64 {
    let lead = idx.len() - s.len();
    let mut lin = 0;
    for (d, &n) in s.iter().enumerate() {
        lin = lin * n + if n == 1 { 0 } else { idx[lead + d] };
    }
    v[lin]
}

/// (dims, ones in a, ones in b, memory permutation, flips, op index).
type Case = (Vec<usize>, Vec<bool>, Vec<bool>, Vec<usize>, Vec<bool>, u32);

fn case() -> impl Strategy<Value = Case> {
    (0usize..=4).prop_flat_map(|r| {
        (
            proptest::collection::vec(0usize..5, r),
            proptest::collection::vec(any::<bool>(), r),
            proptest::collection::vec(any::<bool>(), r),
            Just((0..r).collect::<Vec<_>>()).prop_shuffle(),
            proptest::collection::vec(any::<bool>(), r),
            0u32..4,
        )
    })
}

proptest! {
    #[test]
    fn binary_ops_match_naive_reference((dims, ones_a, ones_b, perm, flips, op) in case()) {
        let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Maximum][op as usize];
        // Broadcast-compatible shapes: some dims set to 1, b possibly with fewer dims.
        let sa: Vec<usize> = dims.iter().zip(&ones_a).map(|(&d, &o)| if o { 1 } else { d }).collect();
        let sb: Vec<usize> = dims.iter().zip(&ones_b).map(|(&d, &o)| if o { 1 } else { d })
            .skip(dims.len() / 2).collect();
        let a = view(&sa, &perm, &flips, DType::F64);
        let b = view(&sb, &(0..sb.len()).rev().collect::<Vec<_>>(), &vec![false; sb.len()], DType::I32);
        let r = a.binary(&b, op).unwrap();
        let shape = tessera::layout::broadcast_shapes(&sa, &sb).unwrap();
        prop_assert_eq!(r.shape(), &shape[..]);
        prop_assert_eq!(r.dtype(), DType::F64);
        let (va, vb) = (a.to_vec::<f64>().unwrap(), b.to_vec::<i32>().unwrap());
        let vb: Vec<f64> = vb.into_iter().map(f64::from).collect();
        let got = r.to_vec::<f64>().unwrap();
        let n: usize = shape.iter().product();
        for (lin, g) in got.iter().enumerate().take(n) {
            let mut idx = vec![0; shape.len()];
            let mut rem = lin;
            for d in (0..shape.len()).rev() { idx[d] = rem % shape[d]; rem /= shape[d]; }
            let (x, y) = (at(&va, &sa, &idx), at(&vb, &sb, &idx));
            let want = match op { BinaryOp::Add => x + y, BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y, _ => x.max(y) };
            prop_assert_eq!(*g, want);
        }
    }

    /// Same-dtype operands, the cases the one-flat-run path takes (`tensor/flat.rs`: two
    /// views in the same memory order, a single element next to any view) and the ones it
    /// must leave to the general walk (different orders, flips), for a binary op, a
    /// comparison, a math function and a unary op, against the naive reference.
    #[test]
    fn same_dtype_ops_match_naive_reference(
        (dims, _oa, _ob, perm, flips, op) in case(),
        other in 0u32..4,
    ) {
        let a = view(&dims, &perm, &flips, DType::F64);
        let r = dims.len();
        let (sb, b) = match other {
            0 => (dims.clone(), view(&dims, &perm, &flips, DType::F64)),
            1 => (vec![], Tensor::scalar(2.5, DType::F64).unwrap()),
            2 => (vec![1; r], view(&vec![1; r], &perm, &flips, DType::F64)),
            _ => (dims.clone(), view(&dims, &(0..r).rev().collect::<Vec<_>>(), &vec![false; r], DType::F64)),
        };
        let (va, vb) = (a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
        let n: usize = dims.iter().product();
        let want = |f: &dyn Fn(f64, f64) -> f64| -> Vec<f64> {
            (0..n).map(|lin| {
                let mut idx = vec![0; r];
                let mut rem = lin;
                for d in (0..r).rev() { idx[d] = rem % dims[d]; rem /= dims[d]; }
                f(at(&va, &dims, &idx), at(&vb, &sb, &idx))
            }).collect()
        };
        let got = match op {
            0 => a.binary(&b, BinaryOp::Sub).unwrap().to_vec::<f64>().unwrap(),
            1 => a.compare(&b, tessera::CompareOp::Lt).unwrap().astype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
            2 => a.math_binary(&b, tessera::MathBinaryOp::Remainder).unwrap().to_vec::<f64>().unwrap(),
            _ => a.unary(tessera::UnaryOp::Neg).unwrap().to_vec::<f64>().unwrap(),
        };
        let expected = match op {
            0 => want(&|x, y| x - y),
            1 => want(&|x, y| f64::from(u8::from(x < y))),
            2 => want(&|x, y| { let m = x % y; if m != 0.0 && (m < 0.0) != (y < 0.0) { m + y } else { m } }),
            _ => want(&|x, _| -x),
        };
        prop_assert_eq!(got.len(), expected.len());
        for (g, w) in got.iter().zip(&expected) {
            prop_assert!(g == w || (g.is_nan() && w.is_nan()), "{:?} vs {:?}", got, expected);
        }
    }

    #[test]
    fn in_place_matches_out_of_place((dims, _oa, ones_b, perm, flips, _op) in case()) {
        let sb: Vec<usize> = dims.iter().zip(&ones_b).map(|(&d, &o)| if o { 1 } else { d }).collect();
        let a = view(&dims, &perm, &flips, DType::I64);
        let b = view(&sb, &(0..sb.len()).collect::<Vec<_>>(), &vec![true; sb.len()], DType::I64);
        let want = a.sub(&b).unwrap().to_vec::<i64>().unwrap();
        a.sub_(&b).unwrap();
        prop_assert_eq!(a.to_vec::<i64>().unwrap(), want);
    }
}

/// Operands whose last axis runs backwards (copied row-major first by the unary and binary
/// paths, docs/performance.md): every unary op and a binary op with a broadcast row give
/// what the same op gives on the contiguous copy, below and above the parallel cut-over.
#[test]
fn reversed_last_axis_operands_match_their_contiguous_copy() {
    for dims in [[3usize, 5], [300, 301]] {
        let n = dims[0] * dims[1];
        let base =
            Tensor::from_vec((0..n).map(|v| (v % 97) as f64 - 48.5).collect(), &dims).unwrap();
        for axes in [&[1isize][..], &[0, 1]] {
            let v = base.flip(Some(axes)).unwrap();
            let c = v.contiguous().unwrap();
            assert!(v.strides()[1] < 0, "the view under test runs backwards");
            for &op in UnaryOp::ALL {
                let (got, want) = (v.unary(op), c.unary(op));
                match (got, want) {
                    (Ok(g), Ok(w)) => assert_eq!(bits(&g), bits(&w), "{op:?} {dims:?} {axes:?}"),
                    (g, w) => assert_eq!(g.is_err(), w.is_err(), "{op:?}"),
                }
            }
            let row = Tensor::from_vec((0..dims[1]).map(|v| v as f64).collect(), &[dims[1]])
                .unwrap()
                .flip(None)
                .unwrap();
            let rowc = row.contiguous().unwrap();
            for (a, b, ac, bc) in [(&v, &row, &c, &rowc), (&row, &v, &rowc, &c)] {
                let got = a.binary(b, BinaryOp::Sub).unwrap();
                let want = ac.binary(bc, BinaryOp::Sub).unwrap();
                assert_eq!(bits(&got), bits(&want));
            }
        }
    }
}

/// The elements of an f64 tensor (or of another dtype, converted) as bit patterns, so that
/// NaNs compare equal to themselves.
fn bits(t: &Tensor) -> Vec<u64> {
    let t = t.astype(DType::F64).unwrap();
    t.to_vec::<f64>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect()
}
