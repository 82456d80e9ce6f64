//! `matmul` (dense 2-D products; batched and 1-D operands in `matmul_batched.rs`) against a
//! naive triple loop, through the typed method and
//! through `ops::invoke`, with dtype promotion and typed errors.

use proptest::prelude::*;
use tessera::ops;
use tessera::{DType, ErrorKind, Tensor, C128};

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn naive_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for l in 0..k {
                c[i * n + j] += a[i * k + l] * b[l * n + j];
            }
        }
    }
    c
}

proptest! {
    #[test]
    fn matmul_matches_a_naive_triple_loop(
        m in 0usize..70, k in 0usize..300, n in 0usize..40, seed in 0u64..1000,
    ) {
        let gen = |len: usize, s: u64| -> Vec<f64> {
            (0..len).map(|i| (((i as u64 * 2654435761 + s * 97) % 17) as f64) - 8.0).collect()
        };
        let (av, bv) = (gen(m * k, seed), gen(k * n, seed + 1));
        let want = naive_matmul(&av, &bv, m, k, n);
        let a = Tensor::from_vec(av.clone(), &[m, k]).unwrap();
        let b = Tensor::from_vec(bv.clone(), &[k, n]).unwrap();
        prop_assert_eq!(f64s(&a.matmul(&b).unwrap()), want.clone());
        let got = ops::invoke("matmul", &[a.astype(DType::F32).unwrap(), b.astype(DType::I32).unwrap()], &[]).unwrap();
        prop_assert_eq!(got[0].dtype(), DType::F64);
        let a32 = a.astype(DType::F32).unwrap();
        let b32 = b.astype(DType::F32).unwrap();
        let c32 = a32.matmul(&b32).unwrap().to_vec::<f32>().unwrap();
        prop_assert_eq!(c32.iter().map(|&v| v as f64).collect::<Vec<_>>(), want.clone());
        let ai = a.astype(DType::I64).unwrap();
        let bi = b.astype(DType::I64).unwrap();
        let ci = ai.t().unwrap().contiguous().unwrap().t().unwrap().matmul(&bi).unwrap().to_vec::<i64>().unwrap();
        prop_assert_eq!(ci.iter().map(|&v| v as f64).collect::<Vec<_>>(), want);
    }
}

/// Integer operands of different dtypes are cast before the exact integer product; a
/// transposed operand must be read through its layout after the cast (a review found that
/// reading the cast as row-major would give the untransposed product).
#[test]
fn mixed_integer_dtypes_with_transposed_operands() {
    let a = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let eye = Tensor::from_slice(&[1i64, 0, 0, 1], &[2, 2]).unwrap();
    let c = a.t().unwrap().matmul(&eye).unwrap();
    assert_eq!(c.dtype(), DType::I64);
    assert_eq!(c.to_vec::<i64>().unwrap(), vec![1, 4, 2, 5, 3, 6]);
    // Transposed right operand, u8 x i16 -> i16: [[1, 2], [3, 4]] @ [[1, 2], [3, 4]]^T.
    let l = Tensor::from_slice(&[1u8, 2, 3, 4], &[2, 2]).unwrap();
    let r = Tensor::from_slice(&[1i16, 2, 3, 4], &[2, 2]).unwrap();
    let c = l.matmul(&r.t().unwrap()).unwrap();
    assert_eq!(c.dtype(), DType::I16);
    assert_eq!(c.to_vec::<i16>().unwrap(), vec![5, 11, 11, 25]);
}

/// `a @ b` for logical `[batch, m, k]` and `[batch, k, n]` element lists, in `i64`.
fn naive_batched(a: &[i64], b: &[i64], batch: usize, m: usize, k: usize, n: usize) -> Vec<i64> {
    let mut out = vec![0i64; batch * m * n];
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                out[(z * m + i) * n + j] = (0..k)
                    .map(|p| a[(z * m + i) * k + p] * b[(z * k + p) * n + j])
                    .sum();
            }
        }
    }
    out
}

#[test]
fn mixed_dtypes_with_permuted_batched_operands_match_a_naive_product() {
    // i32 [3, 4, 2] seen as a (0, 2, 1) permutation of a [3, 2, 4] base, times u8 [3, 2, 5]
    // seen the same way from [3, 5, 2]: both are cast before the exact loop reads them.
    let a = Tensor::arange(-10, 14, 1, DType::I32)
        .unwrap()
        .reshape(&[3, 2, 4])
        .unwrap()
        .permute(&[0, 2, 1])
        .unwrap();
    let b = Tensor::arange(0, 30, 1, DType::U8)
        .unwrap()
        .reshape(&[3, 5, 2])
        .unwrap()
        .permute(&[0, 2, 1])
        .unwrap();
    let c = a.matmul(&b).unwrap();
    assert_eq!((c.dtype(), c.shape()), (DType::I32, &[3, 4, 5][..]));
    let av = a.astype(DType::I64).unwrap().to_vec::<i64>().unwrap();
    let bv = b.astype(DType::I64).unwrap().to_vec::<i64>().unwrap();
    let want = naive_batched(&av, &bv, 3, 4, 2, 5);
    let got = c.astype(DType::I64).unwrap().to_vec::<i64>().unwrap();
    assert_eq!(got, want);
    // bool @ bool: any of the ands (NumPy), with a transposed left operand.
    let p = Tensor::from_slice(&[true, false, false, false, true, true], &[2, 3]).unwrap();
    let q = Tensor::from_slice(&[true, false, false, true], &[2, 2]).unwrap();
    let r = p.t().unwrap().matmul(&q).unwrap();
    assert_eq!(r.dtype(), DType::Bool);
    // p.T = [[1, 0], [0, 1], [0, 1]]; q = identity.
    assert_eq!(
        r.to_vec::<bool>().unwrap(),
        vec![true, false, false, true, false, true]
    );
}

#[test]
fn matmul_errors_are_typed() {
    let a = Tensor::ones(&[2, 3], DType::F32).unwrap();
    assert!(matches!(
        a.matmul(&a).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::ShapeMismatch(_))
    ));
    // A 1-D rhs is a column (NumPy): [2, 3] @ [3] is [2]; a 0-D operand is refused.
    let v = Tensor::ones(&[3], DType::F32).unwrap();
    assert_eq!(a.matmul(&v).unwrap().shape(), &[2]);
    let s = Tensor::ones(&[], DType::F32).unwrap();
    assert!(matches!(
        a.matmul(&s).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    let h = Tensor::ones(&[3, 2], DType::F16).unwrap();
    let c = a.astype(DType::F16).unwrap().matmul(&h).unwrap();
    assert_eq!(
        (
            c.dtype(),
            c.to_vec::<tessera::half::f16>().unwrap()[0].to_f64()
        ),
        (DType::F16, 3.0)
    );
}

// ---- Strided operands (faer's kernel reads views in place) ----

/// How an operand of logical shape `[r, c]` is laid out in its storage.
#[derive(Clone, Copy, Debug)]
enum View {
    Contiguous,
    /// `.t()` of a `[c, r]` tensor (column-major).
    Transposed,
    /// `flip` of rows (1), columns (2) or both (3): negative strides.
    Flipped(u8),
    /// `[1, c]` broadcast to `[r, c]` (row stride 0).
    RowExpanded,
    /// `[r, 1]` expanded to `[r, c]` (column stride 0).
    ColExpanded,
    /// `narrow`ed out of a larger tensor: offset and a row stride wider than `c`.
    Offset,
    /// Every other column of a wider tensor, starting at column 1 (column stride 2).
    Stepped,
    /// A transposed view with both dims flipped.
    FlippedTransposed,
}

fn views() -> impl Strategy<Value = View> {
    prop_oneof![
        Just(View::Contiguous),
        Just(View::Transposed),
        (1u8..4).prop_map(View::Flipped),
        Just(View::RowExpanded),
        Just(View::ColExpanded),
        Just(View::Offset),
        Just(View::Stepped),
        Just(View::FlippedTransposed),
    ]
}

/// `len` values from `seed` (splitmix64): integers in -8..=8 for integer dtypes, else
/// reals in [-1, 1).
fn values(len: usize, seed: u64, integer: bool) -> Vec<f64> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            if integer {
                (z % 17) as f64 - 8.0
            } else {
                (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            }
        })
        .collect()
}

/// An `[r, c]` operand of dtype `dt` laid out as `v`.
fn operand(r: usize, c: usize, v: View, dt: DType, seed: u64) -> Tensor {
    let base = |dims: &[usize]| {
        let len = dims.iter().product();
        let re = values(len, seed, !dt.is_float() && !dt.is_complex());
        if dt.is_complex() {
            let im = values(len, seed ^ 0xC0FFEE, false);
            let z: Vec<C128> = re.iter().zip(&im).map(|(&r, &i)| C128::new(r, i)).collect();
            return Tensor::from_vec(z, dims).unwrap().astype(dt).unwrap();
        }
        Tensor::from_vec(re, dims).unwrap().astype(dt).unwrap()
    };
    let (ri, ci) = (r as isize, c as isize);
    let t = match v {
        View::Contiguous => base(&[r, c]),
        View::Transposed => base(&[c, r]).t().unwrap(),
        View::Flipped(axes) => {
            let axes: &[isize] = match axes {
                1 => &[0],
                2 => &[1],
                _ => &[0, 1],
            };
            base(&[r, c]).flip(Some(axes)).unwrap()
        }
        View::RowExpanded => base(&[1, c]).broadcast_to(&[r, c]).unwrap(),
        View::ColExpanded => base(&[r, 1]).expand(&[ri, ci]).unwrap(),
        View::Offset => base(&[r + 3, c + 2])
            .narrow(0, 2, r)
            .and_then(|t| t.narrow(1, 1, c))
            .unwrap(),
        View::Stepped => base(&[r, 2 * c + 1])
            .as_strided(&[r, c], &[2 * ci + 1, 2], 1)
            .unwrap(),
        View::FlippedTransposed => base(&[c, r]).t().and_then(|t| t.flip(None)).unwrap(),
    };
    assert_eq!(t.shape(), &[r, c]);
    t
}

/// `a @ b` by the triple loop in `f64`, and `sum_l |a_il| |b_lj|` (for error bounds).
fn naive_with_bound(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let abs_a: Vec<f64> = a.iter().map(|v| v.abs()).collect();
    let abs_b: Vec<f64> = b.iter().map(|v| v.abs()).collect();
    (
        naive_matmul(a, b, m, k, n),
        naive_matmul(&abs_a, &abs_b, m, k, n),
    )
}

fn logical(t: &Tensor) -> Vec<f64> {
    f64s(&t.astype(DType::F64).unwrap())
}

/// The real and imaginary parts of a complex tensor, as f64.
fn parts(t: &Tensor) -> (Vec<f64>, Vec<f64>) {
    (logical(&t.real().unwrap()), logical(&t.imag().unwrap()))
}

/// [`check_product`] for complex operands: `(ar + i ai)(br + i bi)` from four real loops,
/// within the bound of a `k`-term complex sum (`sum |ar||br| + |ai||bi| + ...`).
fn check_complex(got: &Tensor, a: &Tensor, b: &Tensor) -> Result<(), TestCaseError> {
    let (m, k, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    prop_assert_eq!(got.shape(), &[m, n]);
    let ((ar, ai), (br, bi)) = (parts(a), parts(b));
    let (rr, brr) = naive_with_bound(&ar, &br, m, k, n);
    let (ii, bii) = naive_with_bound(&ai, &bi, m, k, n);
    let (ri, bri) = naive_with_bound(&ar, &bi, m, k, n);
    let (ir, bir) = naive_with_bound(&ai, &br, m, k, n);
    let (gr, gi) = parts(got);
    let eps = if got.dtype() == DType::C64 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    for e in 0..m * n {
        let tol = 4.0 * (k as f64 + 2.0) * eps * (brr[e] + bii[e] + bri[e] + bir[e]);
        prop_assert!(
            (gr[e] - (rr[e] - ii[e])).abs() <= tol,
            "re of {e}: {} vs {}",
            gr[e],
            rr[e] - ii[e]
        );
        prop_assert!(
            (gi[e] - (ri[e] + ir[e])).abs() <= tol,
            "im of {e}: {} vs {}",
            gi[e],
            ri[e] + ir[e]
        );
    }
    Ok(())
}

/// Checks `got` (any dtype, the product of the logical `a` and `b`) against the naive loop:
/// floats within the worst-case bound of a `k`-term sum (`2 (k + 1) eps sum |a||b|`, plus
/// the final rounding for `f16`), integers exactly.
fn check_product(got: &Tensor, a: &Tensor, b: &Tensor) -> Result<(), TestCaseError> {
    let (m, k, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    prop_assert_eq!(got.shape(), &[m, n]);
    let (want, bound) = naive_with_bound(&logical(a), &logical(b), m, k, n);
    let got_v = logical(got);
    let eps = match got.dtype() {
        DType::F64 => f64::EPSILON,
        DType::F32 | DType::F16 | DType::BF16 => f32::EPSILON as f64,
        _ => 0.0,
    };
    // The final rounding of a narrow float: relative, and absolute for f16 subnormals.
    let (round, round_abs) = match got.dtype() {
        DType::F16 => (2f64.powi(-10), 2f64.powi(-24)),
        DType::BF16 => (2f64.powi(-7), 0.0),
        _ => (0.0, 0.0),
    };
    for (i, ((&g, &w), &s)) in got_v.iter().zip(&want).zip(&bound).enumerate() {
        let tol = 2.0 * (k as f64 + 1.0) * eps * s + round * w.abs() + round_abs;
        prop_assert!(
            (g - w).abs() <= tol,
            "element {} of {}x{}x{} {:?}: got {}, want {} (tol {})",
            i,
            m,
            k,
            n,
            got.dtype(),
            g,
            w,
            tol
        );
    }
    Ok(())
}

fn dtypes() -> impl Strategy<Value = DType> {
    prop_oneof![
        3 => Just(DType::F32),
        3 => Just(DType::F64),
        1 => Just(DType::F16),
        1 => Just(DType::I32),
        1 => Just(DType::I64),
        1 => Just(DType::C64),
        1 => Just(DType::C128),
    ]
}

fn check_case(
    (m, k, n): (usize, usize, usize),
    (va, vb): (View, View),
    dt: DType,
    seed: u64,
) -> Result<(), TestCaseError> {
    let a = operand(m, k, va, dt, seed);
    let b = operand(k, n, vb, dt, seed ^ 0x5555);
    let got = a.matmul(&b).unwrap();
    prop_assert_eq!(got.dtype(), dt);
    if dt.is_complex() {
        return check_complex(&got, &a, &b);
    }
    check_product(&got, &a, &b)?;
    // The same product through `dot` (the kernel behind dense `dot`).
    let via_dot = a.dot(&b).unwrap();
    prop_assert_eq!(f64s(&via_dot.astype(DType::F64).unwrap()), logical(&got));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn matmul_of_strided_views_matches_a_naive_loop(
        m in 0usize..40, k in 0usize..40, n in 0usize..40,
        va in views(), vb in views(), dt in dtypes(), seed in any::<u64>(),
    ) {
        check_case((m, k, n), (va, vb), dt, seed)?;
    }

    /// Operands of two dtypes: the promoted product (here always through converted copies).
    #[test]
    fn mixed_dtype_strided_matmul_promotes(
        m in 1usize..20, k in 0usize..20, n in 1usize..20, va in views(), vb in views(),
        seed in any::<u64>(),
    ) {
        let a = operand(m, k, va, DType::F32, seed);
        let b = operand(k, n, vb, DType::I32, seed + 1);
        let got = a.matmul(&b).unwrap();
        prop_assert_eq!(got.dtype(), DType::F64);
        check_product(&got, &a, &b)?;
    }

    /// 1-D operands of `dot` (a row or a column view of a strided vector) and `transpose_a`.
    #[test]
    fn dot_of_strided_vectors_matches_a_naive_loop(
        k in 0usize..40, n in 0usize..20, step in prop_oneof![Just(-2isize), Just(-1), Just(1), Just(3)],
        dt in dtypes(), vb in views(), seed in any::<u64>(),
    ) {
        prop_assume!(!dt.is_complex()); // the real checks below; complex: the matmul tests
        // x: k elements of a longer vector, every `step`-th, backwards for a negative step.
        let len = k * step.unsigned_abs() + 1;
        let base = Tensor::from_vec(values(len, seed, !dt.is_float()), &[len]).unwrap().astype(dt).unwrap();
        let start = if step < 0 { len - 1 } else { 0 };
        let x = base.as_strided(&[k], &[step], start).unwrap();
        let b = operand(k, n, vb, dt, seed ^ 7);
        let x_row = x.reshape(&[1, -1]).unwrap();
        let x_col = x.reshape(&[-1, 1]).unwrap();
        // [k] . [k, n] -> [n]
        let xb = x.dot(&b).unwrap();
        prop_assert_eq!(xb.shape(), &[n]);
        check_product(&xb.reshape(&[1, -1]).unwrap(), &x_row, &b)?;
        // [n, k] . [k] -> [n], with the lhs a transposed view
        let bx = b.t().unwrap().dot(&x).unwrap();
        check_product(&bx.reshape(&[-1, 1]).unwrap(), &b.t().unwrap(), &x_col)?;
        // [k] . [k] -> []
        let xx = x.dot(&x).unwrap();
        prop_assert_eq!(xx.shape(), &[] as &[usize]);
        check_product(&xx.reshape(&[1, 1]).unwrap(), &x_row, &x_col)?;
        // transpose_a: b.T @ b without materialising b.T
        let btb = ops::invoke("dot", &[b.clone(), b.clone()], &[("transpose_a", "true")]).unwrap();
        check_product(&btb[0], &b.t().unwrap(), &b)?;
    }
}

/// Sizes past faer's register and cache blocks, and past the parallel threshold.
#[test]
fn large_strided_products_match_a_naive_loop() {
    let cases = [
        ((70, 130, 65), (View::Contiguous, View::Contiguous)),
        ((70, 130, 65), (View::Transposed, View::Flipped(3))),
        ((70, 130, 65), (View::Offset, View::RowExpanded)),
        ((129, 300, 97), (View::FlippedTransposed, View::Stepped)),
        ((129, 300, 97), (View::ColExpanded, View::Transposed)),
        ((1, 700, 600), (View::Flipped(2), View::Offset)),
        ((300, 600, 1), (View::Stepped, View::Flipped(1))),
    ];
    for (i, (mkn, vs)) in cases.into_iter().enumerate() {
        for dt in [DType::F32, DType::F64, DType::I64, DType::C64, DType::C128] {
            check_case(mkn, vs, dt, i as u64).unwrap();
        }
    }
}

/// Both operands views of one storage (one read guard serves both), and a writer waiting
/// on that storage from another thread does not deadlock the product.
#[test]
fn operands_sharing_a_storage_multiply_while_writers_wait() {
    let a = operand(96, 96, View::Contiguous, DType::F32, 3);
    let want = a
        .matmul(&a.t().unwrap().contiguous().unwrap())
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            for _ in 0..50 {
                a.storage().unwrap().write::<f32>().unwrap()[0] += 0.0;
            }
        });
        for _ in 0..50 {
            let got = a.matmul(&a.t().unwrap()).unwrap().to_vec::<f32>().unwrap();
            assert_eq!(got.len(), want.len());
        }
        writer.join().unwrap();
    });
    let got = a.matmul(&a.t().unwrap()).unwrap().to_vec::<f32>().unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{g} vs {w}");
    }
}

/// `dot` of `f16`/`bf16` vectors accumulates in `f32` and rounds once, as `matmul` does:
/// 3000 (300) ones sum to 3000 (300), where a running sum in the narrow type would stop at
/// 2048 (256), the first value at which adding 1 rounds back.
#[test]
fn half_precision_dot_accumulates_in_f32() {
    for (dt, len) in [(DType::F16, 3000), (DType::BF16, 300)] {
        let x = Tensor::ones(&[len], dt).unwrap();
        let s = x.dot(&x).unwrap().astype(DType::F64).unwrap();
        assert_eq!(s.item::<f64>().unwrap(), len as f64, "{dt:?}");
        let row = x.reshape(&[1, -1]).unwrap();
        let m = row.matmul(&row.t().unwrap()).unwrap();
        assert_eq!(
            m.astype(DType::F64).unwrap().item::<f64>().unwrap(),
            len as f64
        );
    }
}
