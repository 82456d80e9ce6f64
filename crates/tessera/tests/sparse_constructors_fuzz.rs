//! The checked sparse constructors on random, mostly invalid parts (issue 15 item 10): each
//! returns `Ok` exactly when a naive validator accepts the parts, otherwise a typed error
//! (`Sparse`, or `ShapeOverflow` / `Allocation` for sizes that do not fit), and never panics;
//! when `Ok`, densifying matches a naive dense reference.

use proptest::prelude::*;
use tessera::sparse::csr_from_triplets;
use tessera::{CsrMatrix, DType, ErrorKind, RowSparseArray, SparseParts, Tensor, TesseraError};

/// Errors a constructor or densify may give on bad or oversized input.
fn typed(e: &TesseraError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Sparse(_) | ErrorKind::ShapeOverflow(_) | ErrorKind::Allocation(_)
    )
}

/// An index value: mostly small (around the valid range), sometimes extreme.
fn index() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => -2i64..9,
        1 => prop::sample::select(vec![
            i64::MIN,
            i64::MAX,
            i32::MAX as i64,
            i32::MAX as i64 + 1,
            u32::MAX as i64 + 2,
            -(1i64 << 40),
        ]),
    ]
}

/// A dimension: mostly small, sometimes too large to densify or to add one to.
fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![
        10 => 0usize..6,
        1 => prop::sample::select(vec![1usize << 40, usize::MAX / 2 + 1, usize::MAX]),
    ]
}

/// CSR parts `(shape, indptr, indices, nnz)`: random ones (mostly invalid), or valid ones
/// (sorted or unsorted, with or without repeated columns) with at most one entry changed.
fn csr_parts() -> impl Strategy<Value = ([usize; 2], Vec<i64>, Vec<i64>, usize)> {
    let random = (
        (dim(), dim()).prop_map(|(r, c)| [r, c]),
        prop::collection::vec(index(), 0..8),
        prop::collection::vec(index(), 0..8),
        0usize..8,
    );
    let valid = (0usize..5, 1usize..6)
        .prop_flat_map(|(rows, cols)| {
            let row = prop::collection::vec(0..cols as i64, 0..4);
            (
                Just([rows, cols]),
                prop::collection::vec(row, rows),
                any::<bool>(),
                prop::option::weighted(0.5, (any::<bool>(), any::<prop::sample::Index>(), index())),
            )
        })
        .prop_map(|(shape, sets, sort, change)| {
            let (mut ptr, mut idx) = (vec![0i64], Vec::new());
            for mut cols in sets {
                if sort {
                    cols.sort_unstable();
                    cols.dedup();
                }
                idx.extend(cols);
                ptr.push(idx.len() as i64);
            }
            let nnz = idx.len();
            if let Some((in_ptr, at, v)) = change {
                let part = if in_ptr || idx.is_empty() {
                    &mut ptr
                } else {
                    &mut idx
                };
                let k = at.index(part.len());
                part[k] = v;
            }
            (shape, ptr, idx, nnz)
        });
    prop_oneof![random, valid]
}

fn f64s(n: usize) -> Tensor {
    Tensor::from_vec((1..=n).map(|k| k as f64).collect(), &[n]).unwrap()
}

/// Whether CSR parts are valid: the structure always, sorted unique columns when `canonical`.
fn csr_valid(shape: [usize; 2], ptr: &[i64], idx: &[i64], nnz: usize, canonical: bool) -> bool {
    let [rows, cols] = shape;
    if rows.checked_add(1) != Some(ptr.len()) || ptr[0] != 0 || idx.len() != nnz {
        return false;
    }
    if ptr.windows(2).any(|w| w[0] > w[1]) || ptr[rows] != nnz as i64 {
        return false;
    }
    (0..rows).all(|r| {
        let cs = &idx[ptr[r] as usize..ptr[r + 1] as usize];
        cs.iter().all(|&c| c >= 0 && (c as u64) < cols as u64)
            && (!canonical || cs.windows(2).all(|w| w[0] < w[1]))
    })
}

/// Whether some row stores one column twice.
fn has_duplicates(ptr: &[i64], idx: &[i64]) -> bool {
    ptr.windows(2).any(|w| {
        let mut cs = idx[w[0] as usize..w[1] as usize].to_vec();
        cs.sort_unstable();
        cs.windows(2).any(|p| p[0] == p[1])
    })
}

/// The dense matrix of valid CSR parts with values `1..=nnz`.
fn csr_dense(shape: [usize; 2], ptr: &[i64], idx: &[i64]) -> Vec<f64> {
    let [rows, cols] = shape;
    let mut out = vec![0.0; rows * cols];
    for r in 0..rows {
        for k in ptr[r] as usize..ptr[r + 1] as usize {
            out[r * cols + idx[k] as usize] = (k + 1) as f64;
        }
    }
    out
}

/// Checks one constructor's outcome against the validator and the reference.
fn check_csr(
    what: &str,
    got: tessera::Result<CsrMatrix>,
    valid: bool,
    reference: impl FnOnce() -> Vec<f64>,
) -> Result<(), TestCaseError> {
    match got {
        Err(e) => {
            prop_assert!(typed(&e), "{what}: untyped error {e:?}");
            prop_assert!(!valid, "{what}: valid parts rejected: {e}");
        }
        Ok(m) => {
            prop_assert!(valid, "{what}: invalid parts accepted");
            m.validate().unwrap();
            match m.to_dense() {
                Ok(d) => prop_assert_eq!(d.to_vec::<f64>().unwrap(), reference(), "{}", what),
                Err(e) => prop_assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::ShapeOverflow(_) | ErrorKind::Allocation(_)
                    ),
                    "{what}: densify failed with {e:?}"
                ),
            }
            // As a tensor (whose shape must fit), it prints and sums without panicking.
            if let Ok(t) = Tensor::from_sparse_parts(SparseParts::Csr(m)) {
                let _ = format!("{t}");
                let _ = tessera::ops::invoke("sum", &[t], &[("axis", "1")]);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn csr_constructors_accept_exactly_the_valid_parts(
        (shape, ptr, idx, nnz) in csr_parts(),
        data_rank_two in prop::bool::weighted(0.05),
    ) {
        let data = if data_rank_two { f64s(nnz).reshape(&[nnz as isize, 1]).unwrap() } else { f64s(nnz) };
        let ok = |canonical| !data_rank_two && csr_valid(shape, &ptr, &idx, nnz, canonical);
        let reference = || csr_dense(shape, &ptr, &idx);
        check_csr("try_new", CsrMatrix::try_new(shape, ptr.clone(), idx.clone(), data.clone()), ok(true), reference)?;
        let non = CsrMatrix::try_new_noncanonical(shape, ptr.clone(), idx.clone(), data.clone());
        if let Ok(m) = &non {
            prop_assert_eq!(m.has_canonical_format(), ok(true));
        }
        if ok(false) && has_duplicates(&ptr, &idx) {
            // Accepted; the value of a repeated column is unspecified, so only the outcome is checked.
            prop_assert!(non.is_ok());
        } else {
            check_csr("try_new_noncanonical", non, ok(false), reference)?;
        }
        // From tensors: int64 as given, int32 (values truncated as a caller's cast would),
        // int8 (widened), and a non-contiguous int64 view.
        let t64 = |v: &[i64]| Tensor::from_vec(v.to_vec(), &[v.len()]).unwrap();
        check_csr("from int64", CsrMatrix::try_from_tensors(shape, t64(&ptr), t64(&idx), data.clone()), ok(true), reference)?;
        let (p32, i32s): (Vec<i64>, Vec<i64>) = (
            ptr.iter().map(|&v| v as i32 as i64).collect(),
            idx.iter().map(|&v| v as i32 as i64).collect(),
        );
        let t32 = |v: &[i64]| Tensor::from_vec(v.iter().map(|&x| x as i32).collect(), &[v.len()]).unwrap();
        let ok32 = !data_rank_two && csr_valid(shape, &p32, &i32s, nnz, true);
        check_csr("from int32", CsrMatrix::try_from_tensors(shape, t32(&p32), t32(&i32s), data.clone()), ok32, || csr_dense(shape, &p32, &i32s))?;
        let (p8, i8s): (Vec<i64>, Vec<i64>) = (
            ptr.iter().map(|&v| v as i8 as i64).collect(),
            idx.iter().map(|&v| v as i8 as i64).collect(),
        );
        let t8 = |v: &[i64]| Tensor::from_vec(v.iter().map(|&x| x as i8).collect(), &[v.len()]).unwrap();
        let ok8 = !data_rank_two && csr_valid(shape, &p8, &i8s, nnz, true);
        check_csr("from int8", CsrMatrix::try_from_tensors(shape, t8(&p8), t8(&i8s), data.clone()), ok8, || csr_dense(shape, &p8, &i8s))?;
        let strided = |v: &[i64]| {
            let twice: Vec<i64> = v.iter().flat_map(|&x| [x, -7]).collect();
            Tensor::from_vec(twice, &[2 * v.len()]).unwrap().as_strided(&[v.len()], &[2], 0).unwrap()
        };
        check_csr("from strided", CsrMatrix::try_from_tensors(shape, strided(&ptr), strided(&idx), data), ok(true), reference)?;
    }

    #[test]
    fn row_sparse_constructor_accepts_exactly_the_valid_parts(
        shape in prop::collection::vec(dim(), 0..4),
        ids in prop::collection::vec(index(), 0..5),
        perturb in prop_oneof![4 => Just(None), 1 => (0usize..4, 0usize..4).prop_map(Some)],
    ) {
        let mut dims = vec![ids.len()];
        dims.extend(shape.iter().skip(1).copied());
        if let Some((axis, size)) = perturb {
            match dims.get_mut(axis) {
                Some(d) => *d = size,
                None => dims.push(size),
            }
        }
        // A block of those dims (skipped when even an empty one cannot be made).
        let Ok(block) = Tensor::zeros(&dims, DType::F64) else { return Ok(()) };
        let n = block.numel();
        let block = Tensor::from_vec((1..=n).map(|k| k as f64).collect(), &dims).unwrap();
        let fits = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).is_some();
        let shape_ok = !shape.is_empty() && fits && dims.len() == shape.len()
            && dims[0] == ids.len() && dims[1..] == shape[1..];
        let valid = shape_ok
            && ids.iter().all(|&r| r >= 0 && (r as u64) < shape[0] as u64)
            && ids.windows(2).all(|w| w[0] < w[1]);
        match RowSparseArray::try_new(&shape, ids.clone(), block) {
            Err(e) => {
                prop_assert!(typed(&e), "untyped error {e:?}");
                prop_assert!(!valid, "valid parts rejected: {e}");
            }
            Ok(r) => {
                prop_assert!(valid, "invalid parts accepted");
                let w: usize = shape[1..].iter().product();
                match r.to_dense() {
                    Ok(d) => {
                        let mut want = vec![0.0; shape[0] * w];
                        for (k, &row) in ids.iter().enumerate() {
                            for j in 0..w {
                                want[row as usize * w + j] = (k * w + j + 1) as f64;
                            }
                        }
                        prop_assert_eq!(d.to_vec::<f64>().unwrap(), want);
                    }
                    Err(e) => prop_assert!(
                        matches!(e.kind(), ErrorKind::ShapeOverflow(_) | ErrorKind::Allocation(_)),
                        "densify failed with {e:?}"
                    ),
                }
            }
        }
    }

    #[test]
    fn triplets_build_the_summed_matrix_or_a_typed_error(
        shape in (dim(), dim()).prop_map(|(r, c)| [r, c]),
        rows in prop::collection::vec(-1i64..5, 0..7),
        cols in prop::collection::vec(-1i64..5, 0..7),
        extra in 0usize..2,
    ) {
        let n = rows.len().min(cols.len());
        let (rows, cols) = (&rows[..n], &cols[..n]);
        let vals: Vec<f64> = (1..=n + extra).map(|k| k as f64).collect();
        let in_range = rows.iter().zip(cols).all(|(&r, &c)| {
            r >= 0 && (r as u64) < shape[0] as u64 && c >= 0 && (c as u64) < shape[1] as u64
        });
        match csr_from_triplets(shape, rows, cols, &vals) {
            Err(e) => {
                prop_assert!(typed(&e), "untyped error {e:?}");
                prop_assert!(extra > 0 || !in_range || shape[0] >= 1 << 40, "valid triples rejected: {e}");
            }
            Ok(m) => {
                prop_assert!(extra == 0 && in_range);
                prop_assert!(m.has_canonical_format());
                if let Ok(d) = m.to_dense() {
                    let mut want = vec![0.0; shape[0] * shape[1]];
                    for k in 0..n {
                        want[rows[k] as usize * shape[1] + cols[k] as usize] += vals[k];
                    }
                    prop_assert_eq!(d.to_vec::<f64>().unwrap(), want);
                }
            }
        }
    }
}
