//! NumPy `matmul` beyond two 2-D operands (docs/design.md M1): stacks of matrices whose batch
//! dims broadcast, and 1-D operands promoted to a row or a column whose added dim is removed.
//! Against a naive reading of NumPy's rules, for float and integer dtypes, with strided
//! operands; typed errors; gradients against the per-matrix rule.

use proptest::prelude::*;
use tessera::autograd;
use tessera::{DType, ErrorKind, Tensor};

/// NumPy `matmul` written naively: operands as nested batches of row-major matrices.
fn naive(a: &[f64], ash: &[usize], b: &[f64], bsh: &[usize]) -> (Vec<f64>, Vec<usize>) {
    let (a_vec, b_vec) = (ash.len() == 1, bsh.len() == 1);
    let a2: Vec<usize> = if a_vec { vec![1, ash[0]] } else { ash.to_vec() };
    let b2: Vec<usize> = if b_vec { vec![bsh[0], 1] } else { bsh.to_vec() };
    let (m, k, n) = (a2[a2.len() - 2], a2[a2.len() - 1], b2[b2.len() - 1]);
    let (ab, bb) = (&a2[..a2.len() - 2], &b2[..b2.len() - 2]);
    let rank = ab.len().max(bb.len());
    let pad = |s: &[usize]| -> Vec<usize> {
        let mut p = vec![1; rank - s.len()];
        p.extend_from_slice(s);
        p
    };
    let (pa, pb) = (pad(ab), pad(bb));
    let batch: Vec<usize> = pa.iter().zip(&pb).map(|(&x, &y)| x.max(y)).collect();
    let count: usize = batch.iter().product();
    let mut out = Vec::new();
    for i in 0..count {
        // The batch index, then each operand's matrix (a size-1 dim repeats its one matrix).
        let mut rest = i;
        let mut idx = vec![0; rank];
        for d in (0..rank).rev() {
            idx[d] = rest % batch[d];
            rest /= batch[d];
        }
        let flat = |p: &[usize]| {
            idx.iter().zip(p).fold(0, |acc, (&x, &dim)| {
                acc * dim + if dim == 1 { 0 } else { x }
            })
        };
        let (ia, ib) = (flat(&pa), flat(&pb));
        for r in 0..m {
            for c in 0..n {
                let mut acc = 0.0;
                for l in 0..k {
                    acc += a[ia * m * k + r * k + l] * b[ib * k * n + l * n + c];
                }
                out.push(acc);
            }
        }
    }
    let mut shape = batch;
    if !a_vec {
        shape.push(m);
    }
    if !b_vec {
        shape.push(n);
    }
    (out, shape)
}

/// Small integers, so every product is exact in every dtype.
fn values(len: usize, seed: u64) -> Vec<f64> {
    (0..len)
        .map(|i| ((i as u64 * 2654435761 + seed * 97) % 7) as f64 - 3.0)
        .collect()
}

/// A pair of operand shapes that broadcast: a common batch shape, each operand taking a
/// suffix of it with some dims set to 1; either operand may be 1-D.
fn shapes() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    (
        proptest::collection::vec(1usize..4, 0..4),
        0usize..4,
        0usize..4,
        0usize..4,
        any::<u64>(),
    )
        .prop_map(|(batch, m, k, n, bits)| {
            let mut bits = bits;
            let mut take = |s: &[usize]| -> Vec<usize> {
                let len = (bits % (s.len() as u64 + 1)) as usize;
                bits /= 5;
                s[s.len() - len..]
                    .iter()
                    .map(|&d| {
                        bits /= 2;
                        if bits % 2 == 0 {
                            d
                        } else {
                            1
                        }
                    })
                    .collect()
            };
            let (ba, bb) = (take(&batch), take(&batch));
            let (a_vec, b_vec) = (bits % 5 == 0, bits % 7 == 0);
            let a = if a_vec {
                vec![k]
            } else {
                [ba, vec![m, k]].concat()
            };
            let b = if b_vec {
                vec![k]
            } else {
                [bb, vec![k, n]].concat()
            };
            (a, b)
        })
}

proptest! {
    #[test]
    fn m1_batched_matmul_matches_numpys_rules(
        (ash, bsh) in shapes(),
        seed in 0u64..1000,
        dt in prop_oneof![Just(DType::F64), Just(DType::F32), Just(DType::I64), Just(DType::I32)],
        flip in any::<bool>(),
    ) {
        let (na, nb) = (ash.iter().product::<usize>(), bsh.iter().product::<usize>());
        let (av, bv) = (values(na, seed), values(nb, seed + 1));
        let a = Tensor::from_vec(av.clone(), &ash).unwrap().astype(dt).unwrap();
        // A strided lhs: stored flipped along dim 0 and flipped back (negative strides).
        let a = if flip {
            a.flip(Some(&[0])).unwrap().contiguous().unwrap().flip(Some(&[0])).unwrap()
        } else {
            a
        };
        let b = Tensor::from_vec(bv.clone(), &bsh).unwrap().astype(dt).unwrap();
        let (want, shape) = naive(&av, &ash, &bv, &bsh);
        let got = a.matmul(&b).unwrap();
        prop_assert_eq!(got.shape(), &shape[..]);
        prop_assert_eq!(got.dtype(), dt);
        prop_assert_eq!(got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap(), want);
    }
}

#[test]
fn m1_stacks_of_many_small_matrices_and_a_few_large_ones() {
    // Many small products (parallel over the batch) and a few large ones (parallel inside
    // each product), with a transposed, broadcast rhs.
    for (batch, m, k, n) in [(300, 3, 5, 4), (3, 80, 90, 70)] {
        let av = values(batch * m * k, 1);
        let bv = values(n * k, 2);
        let a = Tensor::from_vec(av.clone(), &[batch, m, k]).unwrap();
        let bt = Tensor::from_vec(bv, &[n, k]).unwrap();
        let b = bt.t().unwrap();
        let bc = b.contiguous().unwrap().to_vec::<f64>().unwrap();
        let (want, shape) = naive(&av, &[batch, m, k], &bc, &[k, n]);
        let got = a.matmul(&b).unwrap();
        assert_eq!(got.shape(), &shape[..]);
        assert_eq!(got.to_vec::<f64>().unwrap(), want);
    }
}

#[test]
fn m1_batched_errors_are_typed() {
    let a = Tensor::ones(&[2, 3, 4], DType::F32).unwrap();
    let b = Tensor::ones(&[3, 4, 5], DType::F32).unwrap();
    // Batch dims 2 and 3 do not broadcast.
    assert!(matches!(
        a.matmul(&b).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    // Inner dims differ, also for a 1-D rhs.
    let v = Tensor::ones(&[5], DType::F32).unwrap();
    assert!(matches!(
        a.matmul(&v).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    let s = Tensor::ones(&[], DType::F32).unwrap();
    assert!(matches!(
        s.matmul(&a).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    // Empty batch and zero inner dims: zeros of the right shape.
    let e = Tensor::ones(&[0, 3, 4], DType::F64).unwrap();
    assert_eq!(
        e.matmul(&Tensor::ones(&[4, 2], DType::F64).unwrap())
            .unwrap()
            .shape(),
        &[0, 3, 2]
    );
    let z = Tensor::ones(&[2, 3, 0], DType::F64).unwrap();
    let got = z
        .matmul(&Tensor::ones(&[0, 2], DType::F64).unwrap())
        .unwrap();
    assert_eq!(got.to_vec::<f64>().unwrap(), vec![0.0; 12]);
}

#[test]
fn m1_batched_gradients_sum_over_broadcast_dims() {
    // y = sum(a @ b) with a [2, 3, 4] and b [4, 5] shared by the batch: db is the sum over the
    // batch of each matrix's A_i^T @ 1, da_i = 1 @ B^T; checked against the per-matrix rule.
    let av = values(24, 3);
    let bv = values(20, 4);
    let a = Tensor::from_vec(av.clone(), &[2, 3, 4])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let b = Tensor::from_vec(bv.clone(), &[4, 5])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let y = a.matmul(&b).unwrap().sum(None, false).unwrap();
    autograd::backward(&y, None, false).unwrap();
    let row_sums_b: Vec<f64> = (0..4).map(|l| bv[l * 5..l * 5 + 5].iter().sum()).collect();
    let want_da: Vec<f64> = (0..24).map(|i| row_sums_b[i % 4]).collect();
    let mut want_db = vec![0.0; 20];
    for bi in 0..2 {
        for r in 0..3 {
            for l in 0..4 {
                for c in 0..5 {
                    want_db[l * 5 + c] += av[bi * 12 + r * 4 + l];
                }
            }
        }
    }
    assert_eq!(a.grad().unwrap().to_vec::<f64>().unwrap(), want_da);
    assert_eq!(b.grad().unwrap().to_vec::<f64>().unwrap(), want_db);
    // A 1-D lhs: v @ M is [n]; dv = M @ 1, dM = v ⊗ 1.
    let v = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[4])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let m = Tensor::from_vec(bv.clone(), &[4, 5])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let y = v.matmul(&m).unwrap();
    assert_eq!(y.shape(), &[5]);
    autograd::backward(&y.sum(None, false).unwrap(), None, false).unwrap();
    assert_eq!(v.grad().unwrap().to_vec::<f64>().unwrap(), row_sums_b);
    let want_dm: Vec<f64> = (0..20).map(|i| (i / 5 + 1) as f64).collect();
    assert_eq!(m.grad().unwrap().to_vec::<f64>().unwrap(), want_dm);
}

proptest! {
    /// `vecdot` against `(a * b).sum(axis)` (broadcast elementwise product, then a sum).
    #[test]
    fn vecdot_matches_the_elementwise_product_summed(
        (ash, bsh) in (proptest::collection::vec(1usize..4, 1..4), any::<u64>()).prop_map(|(s, bits)| {
            let b: Vec<usize> = s.iter().enumerate()
                .map(|(i, &d)| if i + 1 < s.len() && bits >> i & 1 == 1 { 1 } else { d })
                .collect();
            let cut = (bits >> 8) as usize % b.len();
            (s, b[cut..].to_vec())
        }),
        seed in 0u64..1000,
    ) {
        let a = Tensor::from_vec(values(ash.iter().product(), seed), &ash).unwrap();
        let b = Tensor::from_vec(values(bsh.iter().product(), seed + 1), &bsh).unwrap();
        let want = a.mul(&b).unwrap().sum(Some(&[-1]), false).unwrap();
        let got = a.vecdot(&b, -1).unwrap();
        prop_assert_eq!(got.shape(), want.shape());
        prop_assert_eq!(got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
    }
}

#[test]
fn tensordot_matches_a_naive_contraction() {
    // a [2, 3, 4], b [4, 5, 3]: contract a's (1, 2) with b's (2, 0) -> [2, 5].
    let av = values(24, 5);
    let bv = values(60, 6);
    let a = Tensor::from_vec(av.clone(), &[2, 3, 4]).unwrap();
    let b = Tensor::from_vec(bv.clone(), &[4, 5, 3]).unwrap();
    let got = a.tensordot(&b, &[1, 2], &[2, 0]).unwrap();
    let mut want = vec![0.0; 10];
    for i in 0..2 {
        for j in 0..5 {
            for p in 0..3 {
                for q in 0..4 {
                    want[i * 5 + j] += av[i * 12 + p * 4 + q] * bv[q * 15 + j * 3 + p];
                }
            }
        }
    }
    assert_eq!(got.shape(), &[2, 5]);
    assert_eq!(got.to_vec::<f64>().unwrap(), want);
    // No contracted axes: the outer product.
    let outer = a.tensordot(&b, &[], &[]).unwrap();
    assert_eq!(outer.shape(), &[2, 3, 4, 4, 5, 3]);
    // Errors: sizes differ, repeated or out-of-range axes, unpaired axes.
    assert!(matches!(
        a.tensordot(&b, &[0], &[0]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    assert!(matches!(
        a.tensordot(&b, &[1, 1], &[2, 2])
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        a.tensordot(&b, &[3], &[0]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        a.tensordot(&b, &[1], &[]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        a.vecdot(&b, -1).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    assert!(matches!(
        a.vecdot(&a, 3).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    let v = Tensor::ones(&[3], DType::F64).unwrap();
    assert!(matches!(
        v.matrix_transpose().as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidShape(_))
    ));
    // matrix_transpose of a stack: a view whose elements are each matrix transposed.
    let mt = a.matrix_transpose().unwrap();
    assert_eq!(mt.shape(), &[2, 4, 3]);
    assert!(mt.shares_storage(&a));
    assert_eq!(mt.to_vec::<f64>().unwrap()[..3], [av[0], av[4], av[8]]);
}

#[test]
fn tensordot_and_vecdot_are_differentiable() {
    // d/da sum(tensordot(a, b)) over a's last axis and b's first: each a[i, q] gets the sum of
    // row q of b; vecdot's gradient is the other operand.
    let a = Tensor::from_vec(values(6, 7), &[2, 3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let bv = values(12, 8);
    let b = Tensor::from_vec(bv.clone(), &[3, 4]).unwrap();
    let y = a
        .tensordot(&b, &[1], &[0])
        .unwrap()
        .sum(None, false)
        .unwrap();
    autograd::backward(&y, None, false).unwrap();
    let rows: Vec<f64> = (0..3).map(|q| bv[q * 4..q * 4 + 4].iter().sum()).collect();
    let want: Vec<f64> = (0..6).map(|i| rows[i % 3]).collect();
    assert_eq!(a.grad().unwrap().to_vec::<f64>().unwrap(), want);
    let x = Tensor::from_vec(values(6, 9), &[2, 3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let w = Tensor::from_vec(values(3, 10), &[3]).unwrap();
    let y = x.vecdot(&w, -1).unwrap().sum(None, false).unwrap();
    autograd::backward(&y, None, false).unwrap();
    let wv = w.to_vec::<f64>().unwrap();
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>().unwrap(),
        [wv.clone(), wv].concat()
    );
}
