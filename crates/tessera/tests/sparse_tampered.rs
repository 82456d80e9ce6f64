//! Sparse kernels on tensors whose shared index parts were written after construction
//! (breaking the "never write into the parts" contract, as `fill_` / `assign` on a part or a
//! NumPy view of it can): every kernel that reads the parts returns
//! `SparseError::Modified`, never panics, reads out of bounds or returns a wrong result.
//! Each kernel is also run on intact parts and compared with a dense reference, so the tests
//! fail if a kernel errors for the wrong reason.

use tessera::ops::{self, StorageType};
use tessera::{DType, ErrorKind, SparseError, Tensor, TesseraError};

/// The matrix every CSR case starts from: `indptr [0, 2, 2, 4]`, `indices [0, 2, 1, 3]`.
const DENSE: [f64; 12] = [1., 0., 2., 0., 0., 0., 0., 0., 0., 3., 0., 4.];
const ROWS: usize = 3;
const COLS: usize = 4;

/// Ways to break the CSR parts: (what, new indptr, new indices). Each keeps the lengths
/// (writes cannot change them) and breaks exactly one O4 invariant.
const CSR_TAMPERS: &[(&str, [i64; 4], [i64; 4])] = &[
    ("column out of range", [0, 2, 2, 4], [0, 2, 1, 4]),
    ("negative column", [0, 2, 2, 4], [0, 2, -1, 3]),
    ("indptr decreasing", [0, 3, 2, 4], [0, 2, 1, 3]),
    ("indptr past nnz (middle)", [0, 2, 6, 6], [0, 2, 1, 3]),
    ("indptr past nnz (end)", [0, 2, 2, 9], [0, 2, 1, 3]),
    ("indptr negative start", [-1, 2, 2, 4], [0, 2, 1, 3]),
    ("columns unsorted", [0, 2, 2, 4], [2, 0, 1, 3]),
    ("column duplicated", [0, 2, 2, 4], [0, 0, 1, 3]),
];

/// Whether a tamper breaks only the column order (SpMV does not depend on it, see below).
fn order_only(what: &str) -> bool {
    what.starts_with("columns unsorted") || what.starts_with("column duplicated")
}

fn dense() -> Tensor {
    Tensor::from_vec(DENSE.to_vec(), &[ROWS, COLS]).unwrap()
}

fn csr() -> Tensor {
    dense().cast_storage(StorageType::Csr).unwrap()
}

/// Overwrites a 1-D part with `vals` (in the part's dtype), as a user could.
fn overwrite(part: &Tensor, vals: &[i64]) {
    let src = Tensor::from_vec(vals.to_vec(), &[vals.len()])
        .unwrap()
        .astype(part.dtype())
        .unwrap();
    part.assign(&src).unwrap();
}

fn tampered_csr(ptr: &[i64], idx: &[i64]) -> Tensor {
    let t = csr();
    let m = t.as_csr().unwrap();
    assert_eq!(m.index_dtype(), DType::I32);
    overwrite(m.indptr(), ptr);
    overwrite(m.indices(), idx);
    t
}

fn f64s(t: &Tensor) -> Vec<f64> {
    t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

fn assert_modified(r: tessera::Result<Tensor>, what: &str, kernel: &str) {
    match r.as_ref().map_err(TesseraError::kind) {
        Err(ErrorKind::Sparse(SparseError::Modified(_))) => {}
        Err(e) => panic!("{kernel} on {what}: wrong error {e:?}"),
        Ok(t) => panic!("{kernel} on {what}: no error, got {:?}", f64s(t)),
    }
}

fn invoke(op: &str, x: &[Tensor], kv: &[(&str, &str)]) -> tessera::Result<Tensor> {
    ops::invoke(op, x, kv).map(|mut v| v.remove(0))
}

type Kernel = (&'static str, fn(&Tensor) -> tessera::Result<Tensor>);

/// Every CSR kernel that reads the index parts, run on `x` (the dense reference of each is
/// the same op on `dense()`, see `csr_kernels_on_intact_parts_match_dense`).
fn csr_kernels() -> Vec<Kernel> {
    vec![
        ("cast_storage(default)", |x| {
            x.cast_storage(StorageType::Default)
        }),
        ("to_vec", |x| {
            Tensor::from_vec(x.to_vec::<f64>()?, &[ROWS, COLS])
        }),
        ("CsrMatrix::to_dense", |x| x.as_csr()?.to_dense()),
        ("cast_storage(row_sparse)", |x| {
            x.cast_storage(StorageType::RowSparse)
        }),
        ("csr_rows(0, 3)", |x| x.csr_rows(0, ROWS)),
        ("eliminate_zeros", |x| x.eliminate_zeros()),
        ("sum(axis 0)", |x| x.sum(Some(&[0]), false)),
        ("sum(axis 1)", |x| x.sum(Some(&[1]), true)),
        ("add(csr, csr)", |x| invoke("add", &[x.clone(), csr()], &[])),
        ("subtract(csr, csr)", |x| {
            invoke("subtract", &[csr(), x.clone()], &[])
        }),
        ("add(csr, dense)", |x| {
            invoke("add", &[x.clone(), dense()], &[])
        }),
        ("multiply(csr, dense)", |x| {
            invoke("multiply", &[x.clone(), dense()], &[])
        }),
        ("exp (fallback)", |x| {
            invoke("exp", std::slice::from_ref(x), &[])
        }),
        ("quadratic(c = 0) then densify", |x| {
            let q = invoke(
                "quadratic",
                std::slice::from_ref(x),
                &[("a", "1"), ("c", "0")],
            )?;
            q.cast_storage(StorageType::Default)
        }),
    ]
}

/// The products (SpMV, SpMM, and `csr.T @ b`) check bounds as they read (not the column order).
fn spmv_kernels() -> Vec<Kernel> {
    vec![
        ("dot(csr, v) 1 thread", |x| {
            let v = Tensor::from_vec(vec![1.0, -2.0, 3.0, 0.5], &[COLS])?;
            invoke("dot", &[x.clone(), v], &[("parallel", "false")])
        }),
        ("dot(csr, dense)", |x| {
            let b = Tensor::from_vec((0..COLS * 3).map(|v| v as f64).collect(), &[COLS, 3])?;
            invoke("dot", &[x.clone(), b], &[])
        }),
        ("dot(csr.T, dense)", |x| {
            let b = Tensor::from_vec((0..ROWS * 2).map(|v| v as f64).collect(), &[ROWS, 2])?;
            invoke("dot", &[x.clone(), b], &[("transpose_a", "true")])
        }),
        ("dot(csr.T, v)", |x| {
            let v = Tensor::from_vec(vec![1.0, -2.0, 3.0], &[ROWS])?;
            invoke("dot", &[x.clone(), v], &[("transpose_a", "true")])
        }),
    ]
}

#[test]
fn csr_kernels_on_intact_parts_match_dense() {
    // Kernels that only exist for csr input keep the matrix (its dense form is DENSE).
    let identity = ["CsrMatrix::to_dense", "csr_rows(0, 3)", "eliminate_zeros"];
    for (name, k) in csr_kernels().into_iter().chain(spmv_kernels()) {
        let got = k(&csr()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = if identity.contains(&name) {
            DENSE.to_vec()
        } else {
            f64s(&k(&dense()).unwrap_or_else(|e| panic!("{name} dense: {e}")))
        };
        assert_eq!(f64s(&got), want, "{name}");
    }
}

#[test]
fn csr_kernels_on_tampered_parts_are_errors() {
    for &(what, ptr, idx) in CSR_TAMPERS {
        for (name, k) in csr_kernels() {
            assert_modified(k(&tampered_csr(&ptr, &idx)), what, name);
        }
        let x = tampered_csr(&ptr, &idx);
        assert!(matches!(
            x.as_csr()
                .unwrap()
                .validate()
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::Sparse(SparseError::Modified(Some(_))))
        ));
        // Printing never fails (a formatting error would make `to_string` panic).
        assert!(x.to_string().contains("no longer valid"), "{what}");
        assert!(format!("{x:?}").contains("no longer valid"), "{what}");
    }
}

#[test]
fn spmv_on_tampered_parts_is_an_error_or_the_product_of_the_written_pattern() {
    for &(what, ptr, idx) in CSR_TAMPERS {
        for (name, k) in spmv_kernels() {
            let r = k(&tampered_csr(&ptr, &idx));
            if !order_only(what) {
                assert_modified(r, what, name);
                continue;
            }
            // Columns in range but unsorted or repeated: the products (SpMV, and `csr.T @ b`,
            // which sorts the elements by column itself) do not rely on the order, so they
            // return the product of the matrix the parts now describe (duplicates add).
            let mut m = vec![0.0; ROWS * COLS];
            let vals = [1.0, 2.0, 3.0, 4.0];
            for r in 0..ROWS {
                for k in ptr[r] as usize..ptr[r + 1] as usize {
                    m[r * COLS + idx[k] as usize] += vals[k];
                }
            }
            let want = k(&Tensor::from_vec(m, &[ROWS, COLS]).unwrap()).unwrap();
            assert_eq!(f64s(&r.unwrap()), f64s(&want), "{name} on {what}");
        }
    }
}

#[test]
fn modified_errors_name_the_broken_invariant() {
    let x = tampered_csr(&[0, 2, 2, 4], &[0, 2, 1, 4]);
    let e = x.cast_storage(StorageType::Default).unwrap_err();
    let ErrorKind::Sparse(SparseError::Modified(Some(cause))) = e.kind() else {
        panic!("{e:?}")
    };
    assert_eq!(
        **cause,
        SparseError::ColumnOutOfRange {
            row: 2,
            col: 4,
            cols: 4
        }
    );
    let x = tampered_csr(&[0, 2, 6, 6], &[0, 2, 1, 3]);
    let e = x.csr_rows(0, 2).unwrap_err();
    assert!(
        e.to_string()
            .contains("indptr[2] = 6 is outside [0, nnz = 4]"),
        "{e}"
    );
}

#[test]
fn csr_rows_checks_only_the_rows_it_reads() {
    // Row 2's columns are broken; rows 0..2 are intact and can still be sliced.
    let x = tampered_csr(&[0, 2, 2, 4], &[0, 2, 1, 9]);
    let top = x.csr_rows(0, 2).unwrap();
    assert_eq!(f64s(&top), DENSE[..2 * COLS].to_vec());
    assert_modified(x.csr_rows(1, 3), "column out of range", "csr_rows(1, 3)");
}

#[test]
fn non_canonical_unchecked_matrices_still_work() {
    // Built unordered on purpose: kernels check the structure, not the order, for them.
    let data = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    let m = tessera::CsrMatrix::try_new_noncanonical([1, 3], vec![0, 2], vec![2, 0], data).unwrap();
    assert!(!m.has_canonical_format());
    assert!(m.validate().is_ok());
    assert_eq!(
        m.to_dense().unwrap().to_vec::<f64>().unwrap(),
        vec![2., 0., 1.]
    );
    m.indices().fill_(3).unwrap();
    assert!(m.to_dense().is_err());
}

/// The row-sparse array every case starts from: rows `[0, 2]` of a 4 x 2 array.
const RS_DENSE: [f64; 8] = [1., 2., 0., 0., 3., 4., 0., 0.];

fn rs_dense() -> Tensor {
    Tensor::from_vec(RS_DENSE.to_vec(), &[4, 2]).unwrap()
}

fn row_sparse() -> Tensor {
    rs_dense().cast_storage(StorageType::RowSparse).unwrap()
}

const RS_TAMPERS: &[(&str, [i64; 2])] = &[
    ("row id out of range", [0, 4]),
    ("negative row id", [-1, 2]),
    ("row ids unsorted", [2, 0]),
    ("row id duplicated", [2, 2]),
];

fn row_sparse_kernels() -> Vec<Kernel> {
    vec![
        ("cast_storage(default)", |x| {
            x.cast_storage(StorageType::Default)
        }),
        ("to_vec", |x| Tensor::from_vec(x.to_vec::<f64>()?, &[4, 2])),
        ("cast_storage(csr)", |x| x.cast_storage(StorageType::Csr)),
        ("retain", |x| x.retain(&[0, 2, 3])),
        ("eliminate_zeros", |x| x.eliminate_zeros()),
        ("sum(axis 1)", |x| x.sum(Some(&[1]), false)),
        ("add(rs, rs)", |x| {
            invoke("add", &[x.clone(), row_sparse()], &[])
        }),
        ("subtract(rs, rs)", |x| {
            invoke("subtract", &[row_sparse(), x.clone()], &[])
        }),
        ("multiply(rs, dense)", |x| {
            invoke("multiply", &[rs_dense(), x.clone()], &[])
        }),
        ("exp (fallback)", |x| {
            invoke("exp", std::slice::from_ref(x), &[])
        }),
    ]
}

#[test]
fn row_sparse_kernels_on_intact_parts_match_dense() {
    for (name, k) in row_sparse_kernels() {
        if name == "retain" {
            // Keeping every stored row is the identity.
            let got = k(&row_sparse()).unwrap();
            assert_eq!(f64s(&got), RS_DENSE.to_vec(), "{name}");
            continue;
        }
        let got = k(&row_sparse()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = k(&rs_dense()).unwrap_or_else(|e| panic!("{name} dense: {e}"));
        assert_eq!(f64s(&got), f64s(&want), "{name}");
    }
}

#[test]
fn row_sparse_kernels_on_tampered_row_ids_are_errors() {
    for &(what, ids) in RS_TAMPERS {
        for (name, k) in row_sparse_kernels() {
            let x = row_sparse();
            overwrite(x.as_row_sparse().unwrap().indices(), &ids);
            assert_modified(k(&x), what, name);
        }
        let x = row_sparse();
        overwrite(x.as_row_sparse().unwrap().indices(), &ids);
        assert!(x.as_row_sparse().unwrap().validate().is_err());
        assert!(x.to_string().contains("no longer valid"), "{what}");
    }
}
