//! CSR / row-sparse construction (docs/design.md O4): one error per violated invariant, the COO
//! builder, `cast_storage`, and the representation rule (no dense kernel reads sparse parts).

use tessera::sparse::csr_from_triplets;
use tessera::{
    CsrMatrix, DType, ErrorKind, RowSparseArray, SparseError, StorageType, Tensor, TesseraError,
};

fn f64s(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).unwrap()
}

/// The error `try_new` gives, checked to be the one `try_from_tensors` gives for the same
/// parts as int64 and as int32 tensors.
fn csr_err(shape: [usize; 2], indptr: &[i64], indices: &[i64], n: usize) -> SparseError {
    let data = f64s(&vec![1.0; n]);
    let unwrap = |r: tessera::Result<CsrMatrix>| match r.map_err(TesseraError::into_kind) {
        Err(ErrorKind::Sparse(e)) => e,
        other => panic!("expected a sparse error, got {other:?}"),
    };
    let e = unwrap(CsrMatrix::try_new(
        shape,
        indptr.to_vec(),
        indices.to_vec(),
        data.clone(),
    ));
    let t64 = |v: &[i64]| Tensor::from_slice(v, &[v.len()]).unwrap();
    for dt in [DType::I64, DType::I32] {
        let (p, i) = (
            t64(indptr).astype(dt).unwrap(),
            t64(indices).astype(dt).unwrap(),
        );
        let from_tensors = CsrMatrix::try_from_tensors(shape, p, i, data.clone());
        assert_eq!(unwrap(from_tensors), e, "{dt} parts");
    }
    e
}

#[test]
fn o4_each_csr_violation_has_its_own_error() {
    use SparseError::*;
    assert_eq!(
        csr_err([2, 3], &[0, 1], &[0], 1),
        IndptrLength {
            expected: 3,
            got: 2
        }
    );
    assert_eq!(csr_err([1, 3], &[1, 1], &[], 0), IndptrStart(1));
    assert_eq!(
        csr_err([2, 3], &[0, 2, 1], &[0, 1], 2),
        IndptrDecreasing {
            row: 1,
            from: 2,
            to: 1
        }
    );
    assert_eq!(
        csr_err([1, 3], &[0, 1], &[0, 1], 2),
        IndptrEnd { end: 1, nnz: 2 }
    );
    assert_eq!(
        csr_err([1, 3], &[0, 2], &[0, 1], 3),
        DataLength {
            indices: 2,
            data: 3
        }
    );
    assert_eq!(
        csr_err([1, 3], &[0, 1], &[3], 1),
        ColumnOutOfRange {
            row: 0,
            col: 3,
            cols: 3
        }
    );
    assert_eq!(
        csr_err([1, 3], &[0, 1], &[-1], 1),
        ColumnOutOfRange {
            row: 0,
            col: -1,
            cols: 3
        }
    );
    assert_eq!(
        csr_err([1, 3], &[0, 2], &[2, 0], 2),
        UnsortedColumns {
            row: 0,
            prev: 2,
            next: 0
        }
    );
    assert_eq!(
        csr_err([1, 3], &[0, 2], &[1, 1], 2),
        DuplicateColumn { row: 0, col: 1 }
    );
    let msgs: std::collections::HashSet<String> = [
        csr_err([2, 3], &[0, 1], &[0], 1),
        csr_err([1, 3], &[1, 1], &[], 0),
        csr_err([2, 3], &[0, 2, 1], &[0, 1], 2),
        csr_err([1, 3], &[0, 1], &[0, 1], 2),
        csr_err([1, 3], &[0, 2], &[0, 1], 3),
        csr_err([1, 3], &[0, 1], &[3], 1),
        csr_err([1, 3], &[0, 2], &[2, 0], 2),
        csr_err([1, 3], &[0, 2], &[1, 1], 2),
    ]
    .iter()
    .map(|e| e.to_string())
    .collect();
    assert_eq!(msgs.len(), 8, "distinct messages");
    // A valid matrix, including an empty row.
    let m =
        CsrMatrix::try_new([3, 3], vec![0, 1, 1, 3], vec![2, 0, 1], f64s(&[1., 2., 3.])).unwrap();
    assert_eq!(m.nnz(), 3);
}

#[test]
fn o4_each_row_sparse_violation_has_its_own_error() {
    let block = |k: usize| Tensor::zeros(&[k, 2], DType::F32).unwrap();
    let err = |idx: &[i64], b: Tensor| match RowSparseArray::try_new(&[4, 2], idx.to_vec(), b)
        .map_err(TesseraError::into_kind)
    {
        Err(ErrorKind::Sparse(e)) => e,
        other => panic!("expected a sparse error, got {other:?}"),
    };
    assert_eq!(
        err(&[2, 1], block(2)),
        SparseError::UnsortedRows { prev: 2, next: 1 }
    );
    assert_eq!(err(&[1, 1], block(2)), SparseError::DuplicateRow(1));
    assert_eq!(
        err(&[4], block(1)),
        SparseError::RowOutOfRange { row: 4, rows: 4 }
    );
    assert_eq!(
        err(&[-1], block(1)),
        SparseError::RowOutOfRange { row: -1, rows: 4 }
    );
    assert_eq!(
        err(&[0, 1], block(1)),
        SparseError::BlockShape {
            expected: vec![2, 2],
            got: vec![1, 2]
        }
    );
    assert!(RowSparseArray::try_new(&[4, 2], vec![0, 3], block(2)).is_ok());
}

#[test]
fn o4_builder_sorts_and_sums_duplicates() {
    let m = csr_from_triplets(
        [3, 3],
        &[2, 0, 2, 0],
        &[1, 2, 1, 0],
        &[1.0f64, 2.0, 3.0, 4.0],
    )
    .unwrap();
    assert_eq!(m.index_dtype(), DType::I32);
    assert_eq!(m.indptr().to_vec::<i32>().unwrap(), vec![0, 2, 2, 3]);
    assert_eq!(m.indices().to_vec::<i32>().unwrap(), vec![0, 2, 1]);
    assert_eq!(m.data().to_vec::<f64>().unwrap(), vec![4.0, 2.0, 4.0]);
    assert!(csr_from_triplets([1, 1], &[0], &[1], &[1.0f64]).is_err());
    assert!(csr_from_triplets([1, 1], &[0, 0], &[0], &[1.0f64]).is_err());
}

#[test]
fn cast_storage_round_trips_and_stores_only_non_zeros() {
    let d = Tensor::from_vec(vec![0i32, 5, 0, 0, 0, 0, 7, 0, 8], &[3, 3]).unwrap();
    let c = d.cast_storage(StorageType::Csr).unwrap();
    assert_eq!(
        (c.stype(), c.dtype(), c.shape()),
        (StorageType::Csr, DType::I32, &[3usize, 3][..])
    );
    assert_eq!(c.as_csr().unwrap().nnz(), 3);
    assert_eq!(c.numel(), 9);
    let r = c.cast_storage(StorageType::RowSparse).unwrap();
    assert_eq!(
        r.as_row_sparse()
            .unwrap()
            .indices()
            .to_vec::<i64>()
            .unwrap(),
        vec![0, 2]
    );
    assert_eq!(
        r.cast_storage(StorageType::Csr)
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        d.to_vec::<i32>().unwrap()
    );
    assert_eq!(
        r.cast_storage(StorageType::Default)
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        d.to_vec::<i32>().unwrap()
    );
    // csr needs 2-D; row_sparse needs rank >= 1.
    assert!(Tensor::zeros(&[3], DType::F32)
        .unwrap()
        .cast_storage(StorageType::Csr)
        .is_err());
    assert!(Tensor::zeros(&[], DType::F32)
        .unwrap()
        .cast_storage(StorageType::RowSparse)
        .is_err());
    // 3-D row sparse.
    let t = Tensor::arange(0, 12, 1, DType::F64)
        .unwrap()
        .reshape(&[3, 2, 2])
        .unwrap();
    let rs = t.cast_storage(StorageType::RowSparse).unwrap();
    assert_eq!(
        rs.as_row_sparse()
            .unwrap()
            .indices()
            .to_vec::<i64>()
            .unwrap(),
        vec![0, 1, 2]
    );
    assert_eq!(rs.to_vec::<f64>().unwrap(), t.to_vec::<f64>().unwrap());
    // Empty shapes.
    for shape in [[0usize, 4], [4, 0], [0, 0]] {
        let z = Tensor::zeros(&shape, DType::F64)
            .unwrap()
            .cast_storage(StorageType::Csr)
            .unwrap();
        assert_eq!(z.shape(), &shape);
        assert_eq!(z.to_vec::<f64>().unwrap(), Vec::<f64>::new());
    }
}

#[test]
fn sparse_tensors_print_densified_and_refuse_dense_kernels() {
    let c = Tensor::from_vec(vec![0.0f64, 1.5, 0.0, 0.0], &[2, 2])
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    assert_eq!(c.to_string(), "[[0.  1.5]\n [0.  0. ]]");
    assert!(format!("{c:?}").ends_with("stype=csr)"), "{c:?}");
    // Typed arithmetic runs the registry's storage-type dispatch, as `invoke` does.
    let n = c.neg().unwrap();
    assert_eq!(n.stype(), StorageType::Csr);
    assert_eq!(n.to_vec::<f64>().unwrap(), vec![0.0, -1.5, 0.0, 0.0]);
    assert_eq!(c.add(&c).unwrap().stype(), StorageType::Csr);
    // Dense entry points (storage, views, in-place writes): a clear error, never a read of
    // the parts.
    for e in [
        c.storage().map(|_| ()).unwrap_err(),
        c.reshape(&[4]).map(|_| ()).unwrap_err(),
        c.expand(&[2, 2]).map(|_| ()).unwrap_err(),
        c.t().map(|_| ()).unwrap_err(),
        c.contiguous().map(|_| ()).unwrap_err(),
        c.fill_(1.0).unwrap_err(),
    ] {
        assert!(e.to_string().contains("needs a dense tensor"), "{e}");
    }
    assert!(c.data_ptr().is_null());
    // Pure reads work.
    assert!(c.item::<f64>().is_err());
    assert_eq!(c.sum(None, false).unwrap().item::<f64>().unwrap(), 1.5);
}

#[test]
fn retain_keeps_the_listed_rows() {
    let t = Tensor::arange(1, 9, 1, DType::I64)
        .unwrap()
        .reshape(&[4, 2])
        .unwrap();
    let rs = t.cast_storage(StorageType::RowSparse).unwrap();
    let k = rs.retain(&[3, 1, 7]).unwrap();
    assert_eq!(k.to_vec::<i64>().unwrap(), vec![0, 0, 3, 4, 0, 0, 7, 8]);
    assert!(Tensor::zeros(&[2, 2], DType::F32)
        .unwrap()
        .retain(&[0])
        .is_err());
}

#[test]
fn csr_index_dtype_is_int32_when_the_matrix_fits_else_int64() {
    let small = CsrMatrix::try_new([2, 3], vec![0, 1, 2], vec![2, 0], f64s(&[1., 2.])).unwrap();
    assert_eq!(small.index_dtype(), DType::I32);
    assert_eq!(small.indptr().dtype(), DType::I32);
    // More columns than i32 can index: int64 (the matrix itself stays tiny).
    let wide_cols = i32::MAX as usize + 1;
    let wide = CsrMatrix::try_new(
        [2, wide_cols],
        vec![0, 1, 2],
        vec![wide_cols as i64 - 1, 0],
        f64s(&[1., 2.]),
    )
    .unwrap();
    assert_eq!(wide.index_dtype(), DType::I64);
    assert_eq!(wide.indptr().dtype(), DType::I64);
    assert_eq!(
        wide.indices().to_vec::<i64>().unwrap(),
        vec![wide_cols as i64 - 1, 0]
    );
    // Row slicing and eliminate_zeros keep the rule; int32 tensors given for it are widened.
    assert_eq!(wide.rows_slice(1, 2).unwrap().index_dtype(), DType::I64);
    let t32 = |v: &[i32]| Tensor::from_slice(v, &[v.len()]).unwrap();
    let from32 =
        CsrMatrix::try_from_tensors([2, wide_cols], t32(&[0, 1, 1]), t32(&[5]), f64s(&[1.]))
            .unwrap();
    assert_eq!(from32.index_dtype(), DType::I64);
    assert_eq!(from32.eliminate_zeros().unwrap().index_dtype(), DType::I64);
}

#[test]
fn csr_from_tensors_shares_parts_of_the_index_dtype_and_converts_others() {
    let data = f64s(&[1., 2., 3.]);
    let ptr32 = Tensor::from_slice(&[0i32, 2, 2, 3], &[4]).unwrap();
    let idx32 = Tensor::from_slice(&[0i32, 2, 1], &[3]).unwrap();
    let m =
        CsrMatrix::try_from_tensors([3, 3], ptr32.clone(), idx32.clone(), data.clone()).unwrap();
    assert!(m.indptr().shares_storage(&ptr32) && m.indices().shares_storage(&idx32));
    let want = m.to_dense().unwrap().to_vec::<f64>().unwrap();
    // int64, uint8 and mixed index dtypes give the same matrix, stored as int32.
    let ptr64 = ptr32.astype(DType::I64).unwrap();
    let idx8 = idx32.astype(DType::U8).unwrap();
    for (p, i) in [
        (ptr64.clone(), idx32.astype(DType::I64).unwrap()),
        (ptr64, idx8.clone()),
        (ptr32.astype(DType::U8).unwrap(), idx8),
    ] {
        let m = CsrMatrix::try_from_tensors([3, 3], p, i, data.clone()).unwrap();
        assert_eq!(m.index_dtype(), DType::I32);
        assert_eq!(m.to_dense().unwrap().to_vec::<f64>().unwrap(), want);
    }
    // Non-integer or non-1-D index parts are errors.
    let bad = [
        (ptr32.astype(DType::F64).unwrap(), idx32.clone()),
        (ptr32.clone(), idx32.astype(DType::Bool).unwrap()),
        (ptr32.clone(), idx32.reshape(&[3, 1]).unwrap()),
    ];
    for (p, i) in bad {
        let e = CsrMatrix::try_from_tensors([3, 3], p, i, data.clone()).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Sparse(SparseError::Part(_))),
            "{e}"
        );
    }
}

#[test]
fn csr_try_new_noncanonical_checks_the_structure_but_not_the_order() {
    let data = || f64s(&[1., 2.]);
    // Unsorted and duplicate columns are accepted...
    assert!(CsrMatrix::try_new_noncanonical([1, 3], vec![0, 2], vec![2, 0], data()).is_ok());
    assert!(CsrMatrix::try_new_noncanonical([1, 3], vec![0, 2], vec![1, 1], data()).is_ok());
    // ...but anything a kernel could index out of bounds with is not.
    for (ptr, idx) in [
        (vec![0, 2], vec![0, 3]),
        (vec![0, 2], vec![-1, 0]),
        (vec![0, 3], vec![0, 1]),
        (vec![1, 2], vec![0, 1]),
        (vec![0], vec![0, 1]),
    ] {
        let e = CsrMatrix::try_new_noncanonical([1, 3], ptr, idx, data()).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Sparse(_)), "{e}");
    }
}
