//! Sparse kernels whose outputs or scratch buffers are sized by a user shape (issue 15 item 3):
//! a shape too large to allocate gives `ErrorKind::Allocation` (or `ShapeOverflow` when the
//! size product overflows), never an abort of the process, and kernels that do not need a
//! buffer of that size do not allocate one.

use tessera::ops::{self, StorageType};
use tessera::sparse::csr_from_triplets;
use tessera::{CsrMatrix, DType, ErrorKind, RowSparseArray, SparseParts, Tensor, TesseraError};

/// 2^40: an f64 buffer of that many elements (8 TiB) is refused by the allocator here.
const HUGE: usize = 1 << 40;

fn too_large(e: &TesseraError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Allocation(_) | ErrorKind::ShapeOverflow(_)
    )
}

fn empty_csr(rows: usize, cols: usize) -> Tensor {
    let data = Tensor::zeros(&[0], DType::F64).unwrap();
    let m = CsrMatrix::try_new([rows, cols], vec![0; rows + 1], vec![], data).unwrap();
    Tensor::from_sparse_parts(SparseParts::Csr(m)).unwrap()
}

#[test]
fn densifying_a_huge_empty_csr_is_an_allocation_error() {
    let t = empty_csr(1, HUGE);
    let e = t.as_csr().unwrap().to_dense().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Allocation(_)), "{e}");
    // Printing densifies; it shows the error instead of aborting.
    let s = format!("{t}");
    assert!(s.contains("allocation"), "{s}");
    assert!(t.to_vec::<f64>().is_err());
}

#[test]
fn densifying_a_csr_whose_size_overflows_is_a_shape_overflow() {
    // The matrix is valid (a tensor of that logical shape is not: its size overflows).
    let data = Tensor::zeros(&[0], DType::F64).unwrap();
    let m = CsrMatrix::try_new([2, usize::MAX / 2 + 1], vec![0; 3], vec![], data).unwrap();
    let e = m.to_dense().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::ShapeOverflow(_)), "{e}");
}

#[test]
fn densifying_a_huge_empty_row_sparse_is_an_allocation_error() {
    let block = Tensor::zeros(&[0], DType::F64).unwrap();
    let r = RowSparseArray::try_new(&[HUGE], vec![], block).unwrap();
    let e = r.to_dense().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Allocation(_)), "{e}");
}

#[test]
fn dense_dot_with_a_huge_output_is_an_allocation_error() {
    // NumPy: ts.ops.dot(ts.zeros(0), ts.zeros((0, 2**40))).
    let a = Tensor::zeros(&[0], DType::F64).unwrap();
    let b = Tensor::zeros(&[0, HUGE], DType::F64).unwrap();
    let e = ops::invoke("dot", &[a, b], &[]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Allocation(_)), "{e}");
}

#[test]
fn csr_transpose_dot_needs_no_table_sized_by_the_columns() {
    // csr.T @ x for a 1 x 2^40 csr: the output is an empty row-sparse [2^40], which fits.
    let m = empty_csr(1, HUGE);
    let x = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    let y = ops::invoke("dot", &[m, x], &[("transpose_a", "true")])
        .unwrap()
        .remove(0);
    assert_eq!(y.stype(), StorageType::RowSparse);
    assert_eq!(y.shape(), &[HUGE]);
    assert_eq!(y.as_row_sparse().unwrap().indices().numel(), 0);
}

#[test]
fn csr_column_sum_with_huge_columns_is_an_allocation_error() {
    let m = empty_csr(1, HUGE);
    let e = ops::invoke("sum", &[m], &[("axis", "0")]).unwrap_err();
    assert!(too_large(&e), "{e}");
}

#[test]
fn triplets_with_a_huge_row_count_are_errors() {
    let e = csr_from_triplets::<f64>([HUGE, 1], &[], &[], &[]).unwrap_err();
    assert!(too_large(&e), "{e}");
    let e = csr_from_triplets::<f64>([usize::MAX, 1], &[], &[], &[]).unwrap_err();
    assert!(too_large(&e), "{e}");
}

#[test]
fn casting_a_tall_empty_dense_tensor_to_csr_is_an_allocation_error() {
    // Zero elements, but csr needs 2^40 + 1 row pointers.
    let d = Tensor::zeros(&[HUGE, 0], DType::F64).unwrap();
    let e = d.cast_storage(StorageType::Csr).unwrap_err();
    assert!(too_large(&e), "{e}");
}

#[test]
fn checked_constructors_with_usize_max_rows_are_errors() {
    let data = Tensor::zeros(&[0], DType::F64).unwrap();
    let e = CsrMatrix::try_new([usize::MAX, 1], vec![0], vec![], data.clone()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Sparse(_)), "{e}");
    let e = CsrMatrix::try_new_noncanonical([usize::MAX, 1], vec![0], vec![], data).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Sparse(_)), "{e}");
}
