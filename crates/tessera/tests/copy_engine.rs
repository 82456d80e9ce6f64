//! The copy engine (docs/design.md §1) through its public entry points — `contiguous`, `copy`,
//! `to_vec`, `assign`, `fill_`, `repeat`, `tile` — each against a naive element-by-element
//! reference written here with plain index arithmetic.

use proptest::prelude::*;
use tessera::{DType, ErrorKind, Tensor};

/// Storage offset of each element of a strided view, in row-major order of `dims`.
fn naive_offsets(dims: &[usize], strides: &[isize], offset: usize) -> Vec<usize> {
    let n: usize = dims.iter().product();
    (0..n)
        .map(|lin| {
            let (mut rem, mut at) = (lin, offset as isize);
            for i in (0..dims.len()).rev() {
                at += (rem % dims[i]) as isize * strides[i];
                rem /= dims[i];
            }
            at as usize
        })
        .collect()
}

fn arange(n: usize) -> Tensor {
    Tensor::arange(0, n as i64, 1, DType::I64).unwrap()
}

/// A random view: rank 0-4, dims 0-4, strides -6..=6 (zero allowed), offset chosen so the view
/// stays inside a storage of `len` elements.
fn strided_view() -> impl Strategy<Value = (Vec<usize>, Vec<isize>, usize)> {
    (0usize..=4)
        .prop_flat_map(|r| {
            (
                prop::collection::vec(0usize..=4, r),
                prop::collection::vec(-6isize..=6, r),
            )
        })
        .prop_flat_map(|(dims, strides)| {
            let (mut lo, mut hi) = (0isize, 0isize);
            if dims.iter().all(|&d| d > 0) {
                for (&d, &s) in dims.iter().zip(&strides) {
                    let reach = (d as isize - 1) * s;
                    if reach < 0 {
                        lo += reach
                    } else {
                        hi += reach
                    }
                }
            }
            let min_off = (-lo) as usize;
            (Just(dims), Just(strides), min_off..=min_off + 3, Just(hi))
        })
        .prop_map(|(d, s, o, _)| (d, s, o))
}

const LEN: usize = 200;

proptest! {
    /// V6 / §1: contiguous(), copy() and to_vec() of any strided view equal the naive gather.
    #[test]
    fn contiguous_of_any_view_equals_naive_gather((dims, strides, off) in strided_view()) {
        let base = arange(LEN);
        let v = base.as_strided(&dims, &strides, off).unwrap();
        let want: Vec<i64> = naive_offsets(&dims, &strides, off).iter().map(|&o| o as i64).collect();
        prop_assert_eq!(v.to_vec::<i64>().unwrap(), want.clone());
        let c = v.contiguous().unwrap();
        prop_assert!(c.is_contiguous());
        prop_assert_eq!(c.shape(), &dims[..]);
        prop_assert_eq!(c.to_vec::<i64>().unwrap(), want.clone());
        let k = v.copy().unwrap();
        prop_assert!(!k.shares_storage(&base));
        prop_assert_eq!(k.to_vec::<i64>().unwrap(), want);
    }

    /// V7: assign of a broadcast source into a strided (non-overlapping) view writes exactly
    /// the view's elements of the base.
    #[test]
    fn assign_broadcast_into_view_reaches_base(
        (dims, strides, off) in strided_view(),
        mask in prop::collection::vec(any::<bool>(), 4),
    ) {
        let base = arange(LEN);
        let dst = base.as_strided(&dims, &strides, off).unwrap();
        // Source: the view's shape with some dims set to 1 (broadcast) and maybe fewer dims.
        let src_dims: Vec<usize> = dims.iter().zip(&mask).map(|(&d, &m)| if m { 1 } else { d }).collect();
        let n: usize = src_dims.iter().product();
        let src = Tensor::from_vec((0..n as i64).map(|x| 1000 + x).collect(), &src_dims).unwrap();
        let offs = naive_offsets(&dims, &strides, off);
        let mut uniq = offs.clone();
        uniq.sort();
        uniq.dedup();
        let result = dst.assign(&src);
        if uniq.len() < offs.len() {
            prop_assert!(matches!(result.as_ref().map_err(|e| e.kind()), Err(ErrorKind::OverlappingWrite(_))));
            return Ok(());
        }
        result.unwrap();
        let mut want: Vec<i64> = (0..LEN as i64).collect();
        let src_strides: Vec<usize> = {
            let mut s = vec![0usize; src_dims.len()];
            let mut acc = 1;
            for i in (0..src_dims.len()).rev() {
                s[i] = if src_dims[i] == 1 { 0 } else { acc };
                acc *= src_dims[i];
            }
            s
        };
        for (lin, &o) in offs.iter().enumerate() {
            let (mut rem, mut at) = (lin, 0usize);
            for i in (0..dims.len()).rev() {
                at += (rem % dims[i]) * src_strides[i];
                rem /= dims[i];
            }
            want[o] = 1000 + at as i64;
        }
        prop_assert_eq!(base.to_vec::<i64>().unwrap(), want);
    }

    /// E2: repeat equals a naive repeat and the naive `reshape -> expand -> reshape`.
    #[test]
    fn repeat_equals_naive_and_reshape_expand_reshape(
        (dims, strides, off) in strided_view(),
        extra in prop::collection::vec(0usize..=3, 0..=2),
        counts_seed in prop::collection::vec(0usize..=3, 4),
    ) {
        let v = arange(LEN).as_strided(&dims, &strides, off).unwrap();
        let x = v.to_vec::<i64>().unwrap();
        let mut counts = extra.clone();
        counts.extend(counts_seed.iter().take(dims.len()));
        let r = v.repeat(&counts).unwrap();
        let m = counts.len();
        let mut sd = vec![1usize; m - dims.len()];
        sd.extend(&dims);
        let out: Vec<usize> = counts.iter().zip(&sd).map(|(c, d)| c * d).collect();
        prop_assert_eq!(r.shape(), &out[..]);
        prop_assert!(r.is_contiguous());
        // Naive repeat: out index i maps to source index i % d per dim.
        let n: usize = out.iter().product();
        let naive: Vec<i64> = (0..n).map(|lin| {
            let (mut rem, mut src_lin, mut mul) = (lin, 0, 1);
            for k in (0..m).rev() {
                src_lin += (rem % out[k]) % sd[k] * mul;
                rem /= out[k];
                mul *= sd[k];
            }
            x[src_lin]
        }).collect();
        prop_assert_eq!(r.to_vec::<i64>().unwrap(), naive.clone());
        // reshape to [1, s0, 1, s1, ...] -> expand to [c0, s0, c1, s1, ...] -> reshape to out:
        // row-major over (r0, s0, r1, s1, ...) the element is x at the s-indices.
        let big: Vec<usize> = counts.iter().zip(&sd).flat_map(|(&c, &d)| [c, d]).collect();
        let nb: usize = big.iter().product();
        let expanded: Vec<i64> = (0..nb).map(|lin| {
            let (mut rem, mut src_lin, mut mul) = (lin, 0, 1);
            for k in (0..2 * m).rev() {
                let i = rem % big[k];
                rem /= big[k];
                if k % 2 == 1 {
                    src_lin += i * mul;
                    mul *= big[k];
                }
            }
            x[src_lin]
        }).collect();
        prop_assert_eq!(naive, expanded);
    }
}

/// V7: `a[1:] = a[:-1]` with views of one storage behaves as if the source were copied first.
#[test]
fn v7_overlapping_assign_copies_source_first() {
    let a = arange(10);
    let dst = a.as_strided(&[9], &[1], 1).unwrap();
    let src = a.as_strided(&[9], &[1], 0).unwrap();
    dst.assign(&src).unwrap();
    assert_eq!(
        a.to_vec::<i64>().unwrap(),
        vec![0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
    );
    // The other direction and a reversal in place: a[:] = a[::-1].
    let b = arange(6);
    b.assign(&b.as_strided(&[6], &[-1], 5).unwrap()).unwrap();
    assert_eq!(b.to_vec::<i64>().unwrap(), vec![5, 4, 3, 2, 1, 0]);
    // In-place transpose of a square matrix: m[...] = m.T.
    let m = arange(9).as_strided(&[3, 3], &[3, 1], 0).unwrap();
    m.assign(&m.as_strided(&[3, 3], &[1, 3], 0).unwrap())
        .unwrap();
    assert_eq!(m.to_vec::<i64>().unwrap(), vec![0, 3, 6, 1, 4, 7, 2, 5, 8]);
}

/// V7: writing into a view that overlaps itself is an error (stride 0, or interleaved).
#[test]
fn v7_write_into_overlapping_view_errors() {
    let a = arange(6);
    let expanded = a.as_strided(&[3, 2], &[0, 1], 0).unwrap();
    let one = Tensor::scalar(1i64, DType::I64).unwrap();
    assert!(matches!(
        expanded.assign(&one).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::OverlappingWrite(_))
    ));
    assert!(matches!(
        expanded.fill_(3).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::OverlappingWrite(_))
    ));
    let interleaved = a.as_strided(&[2, 2], &[1, 1], 0).unwrap();
    assert!(matches!(
        interleaved.fill_(3).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::OverlappingWrite(_))
    ));
    // Non-nested but disjoint strides are fine: offsets 0, 2, 3, 5.
    let disjoint = a.as_strided(&[2, 2], &[3, 2], 0).unwrap();
    disjoint.fill_(-1).unwrap();
    assert_eq!(a.to_vec::<i64>().unwrap(), vec![-1, 1, -1, -1, 4, -1]);
    // Size-1 dims with stride 0 do not overlap.
    a.as_strided(&[1, 3], &[0, 1], 0).unwrap().fill_(7).unwrap();
    assert_eq!(a.to_vec::<i64>().unwrap()[..3], [7, 7, 7]);
}

#[test]
fn assign_errors_on_dtype_and_shape() {
    let a = Tensor::zeros(&[2, 3], DType::F32).unwrap();
    let f64s = Tensor::zeros(&[2, 3], DType::F64).unwrap();
    assert!(matches!(
        a.assign(&f64s).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::DType(_))
    ));
    let bad = Tensor::zeros(&[2], DType::F32).unwrap();
    assert!(matches!(
        a.assign(&bad).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    let too_many = Tensor::zeros(&[1, 2, 3], DType::F32).unwrap();
    assert!(matches!(
        a.assign(&too_many).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
}

/// V7: a fill through a column view reaches the base and a sibling view.
#[test]
fn v7_fill_through_view_reaches_base_and_siblings() {
    let a = Tensor::zeros(&[3, 4], DType::F64).unwrap();
    let col = a.as_strided(&[3], &[4], 2).unwrap();
    let row = a.as_strided(&[4], &[1], 4).unwrap();
    col.fill_(2.5).unwrap();
    assert_eq!(row.to_vec::<f64>().unwrap(), vec![0., 0., 2.5, 0.]);
    assert_eq!(
        a.to_vec::<f64>()
            .unwrap()
            .iter()
            .filter(|&&x| x == 2.5)
            .count(),
        3
    );
}

/// Large sizes take the parallel path (420 000 elements, past the 256 Ki cut-over): transpose,
/// flip, expand, assign.
#[test]
fn large_copies_take_the_parallel_path() {
    let (r, c) = (600usize, 700usize);
    let a = Tensor::arange(0, (r * c) as i64, 1, DType::I32).unwrap();
    let at = a.as_strided(&[c, r], &[1, c as isize], 0).unwrap();
    let got = at.contiguous().unwrap().to_vec::<i32>().unwrap();
    let want: Vec<i32> = naive_offsets(&[c, r], &[1, c as isize], 0)
        .iter()
        .map(|&o| o as i32)
        .collect();
    assert_eq!(got, want);
    let flip = a
        .as_strided(&[r, c], &[-(c as isize), -1], r * c - 1)
        .unwrap();
    let got = flip.contiguous().unwrap().to_vec::<i32>().unwrap();
    assert_eq!(got, (0..(r * c) as i32).rev().collect::<Vec<_>>());
    let row = a.as_strided(&[r, c], &[0, 1], 5).unwrap();
    let got = row.contiguous().unwrap().to_vec::<i32>().unwrap();
    assert!(got
        .chunks(c)
        .all(|ch| ch == (5..5 + c as i32).collect::<Vec<_>>()));
    // Assign a transposed source into every other column of a wide base (strided dst).
    let base = Tensor::zeros(&[c, 2 * r], DType::I32).unwrap();
    let dst = base.as_strided(&[c, r], &[2 * r as isize, 2], 1).unwrap();
    dst.assign(&at).unwrap();
    let b = base.to_vec::<i32>().unwrap();
    for i in 0..c {
        for j in 0..r {
            assert_eq!(b[i * 2 * r + 2 * j], 0);
            assert_eq!(b[i * 2 * r + 2 * j + 1], (j * c + i) as i32);
        }
    }
}

/// E2: `np.tile` examples worked by hand.
#[test]
fn e2_tile_matches_numpy_examples() {
    let m = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2]).unwrap();
    // np.tile([[1,2],[3,4]], (2,3))
    let t = m.tile(&[2, 3]).unwrap();
    assert_eq!(t.shape(), &[4, 6]);
    assert_eq!(
        t.to_vec::<i64>().unwrap(),
        vec![1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4]
    );
    // np.tile([1,2,3], 2)
    let v = Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap();
    assert_eq!(
        v.tile(&[2]).unwrap().to_vec::<i64>().unwrap(),
        vec![1, 2, 3, 1, 2, 3]
    );
    // np.tile([1,2,3], (2,1,2)): reps longer than rank -> shape (2, 1, 6)
    let t = v.tile(&[2, 1, 2]).unwrap();
    assert_eq!(t.shape(), &[2, 1, 6]);
    assert_eq!(
        t.to_vec::<i64>().unwrap(),
        vec![1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]
    );
    // np.tile([[1,2],[3,4]], 2): reps shorter than rank -> (1, 2) -> shape (2, 4)
    let t = m.tile(&[2]).unwrap();
    assert_eq!(t.shape(), &[2, 4]);
    assert_eq!(t.to_vec::<i64>().unwrap(), vec![1, 2, 1, 2, 3, 4, 3, 4]);
    // np.tile(5, 3) on a rank-0 array, and np.tile(x, ()) == x copy
    let s = Tensor::scalar(5i64, DType::I64).unwrap();
    assert_eq!(
        s.tile(&[3]).unwrap().to_vec::<i64>().unwrap(),
        vec![5, 5, 5]
    );
    let same = m.tile(&[]).unwrap();
    assert_eq!(same.shape(), &[2, 2]);
    assert!(!same.shares_storage(&m));
    // np.tile([1,2,3], 0) -> empty
    assert_eq!(v.tile(&[0]).unwrap().shape(), &[0]);
}

/// E2: edge cases of repeat: rank 0, count 0, empty dims, too few counts, overflow.
#[test]
fn e2_repeat_edge_cases() {
    let s = Tensor::scalar(7i32, DType::I32).unwrap();
    let r = s.repeat(&[]).unwrap();
    assert_eq!((r.shape(), r.to_vec::<i32>().unwrap()), (&[][..], vec![7]));
    assert_eq!(
        s.repeat(&[2, 3]).unwrap().to_vec::<i32>().unwrap(),
        vec![7; 6]
    );
    let v = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
    assert_eq!(v.repeat(&[0]).unwrap().shape(), &[0]);
    assert_eq!(v.repeat(&[3, 0]).unwrap().shape(), &[3, 0]);
    let e = Tensor::zeros(&[0, 2], DType::I32).unwrap();
    assert_eq!(e.repeat(&[5, 2]).unwrap().shape(), &[0, 4]);
    let m = Tensor::zeros(&[2, 2], DType::I32).unwrap();
    assert!(matches!(
        m.repeat(&[2]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        v.repeat(&[usize::MAX]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    assert!(matches!(
        v.repeat(&[1 << 40, 1 << 40]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeOverflow(_))
    ));
    // PyTorch: torch.tensor([1,2]).repeat(2, 2) == [[1,2,1,2],[1,2,1,2]]
    let r = v.repeat(&[2, 2]).unwrap();
    assert_eq!(r.shape(), &[2, 4]);
    assert_eq!(r.to_vec::<i32>().unwrap(), vec![1, 2, 1, 2, 1, 2, 1, 2]);
}

#[test]
fn contiguous_returns_the_same_handle_when_possible() {
    let a = arange(12);
    let c = a.contiguous().unwrap();
    assert!(c.shares_storage(&a));
    // A contiguous view at an offset, with size-1 dims of any stride (V6), is kept.
    let v = a.as_strided(&[1, 4], &[99, 1], 3).unwrap();
    let c = v.contiguous().unwrap();
    assert!(c.shares_storage(&a));
    assert_eq!(c.to_vec::<i64>().unwrap(), vec![3, 4, 5, 6]);
    // Materialised expand and flip (fill / reversed-copy inner loops).
    let e = a
        .as_strided(&[3, 4], &[1, 0], 0)
        .unwrap()
        .contiguous()
        .unwrap();
    assert_eq!(
        e.to_vec::<i64>().unwrap(),
        vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    );
    let f = a
        .as_strided(&[12], &[-1], 11)
        .unwrap()
        .contiguous()
        .unwrap();
    assert_eq!(
        f.to_vec::<i64>().unwrap(),
        (0..12).rev().collect::<Vec<_>>()
    );
}

#[test]
fn every_dtype_copies() {
    for d in DType::ALL {
        let a = Tensor::ones(&[3, 4], d).unwrap();
        let t = a
            .as_strided(&[4, 3], &[1, 4], 0)
            .unwrap()
            .contiguous()
            .unwrap();
        assert_eq!(t.dtype(), d);
        let r = a.repeat(&[2, 1]).unwrap();
        assert_eq!(r.shape(), &[6, 4]);
        r.fill_(0).unwrap();
        r.assign(&a).unwrap_err(); // [3,4] does not broadcast to [6,4]
    }
}
