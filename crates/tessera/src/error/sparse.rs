//! One error kind per violated sparse invariant (docs/design.md O4), carried by
//! [`ErrorKind::Sparse`](super::ErrorKind::Sparse). Re-exported as `tessera::SparseError`
//! and `tessera::sparse::SparseError`.

/// Why sparse parts were rejected; carried by [`ErrorKind::Sparse`](super::ErrorKind::Sparse).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SparseError {
    /// CSR `indptr` must have `rows + 1` entries.
    #[error("csr indptr has {got} entries, expected rows + 1 = {expected}")]
    IndptrLength {
        /// `rows + 1`.
        expected: usize,
        /// Entries given.
        got: usize,
    },
    /// CSR `indptr[0]` must be 0.
    #[error("csr indptr must start at 0, starts at {0}")]
    IndptrStart(i64),
    /// CSR `indptr` must be non-decreasing.
    #[error("csr indptr decreases at row {row}: {from} then {to}")]
    IndptrDecreasing {
        /// The row whose end lies before its start.
        row: usize,
        /// `indptr[row]`.
        from: i64,
        /// `indptr[row + 1]`.
        to: i64,
    },
    /// A CSR row pointer outside `[0, nnz]` (found in parts written after construction).
    #[error("csr indptr[{row}] = {ptr} is outside [0, nnz = {nnz}]")]
    IndptrOutOfRange {
        /// Position in `indptr`.
        row: usize,
        /// The bad pointer.
        ptr: i64,
        /// Number of stored elements.
        nnz: usize,
    },
    /// CSR `indptr[rows]` must equal the number of stored elements.
    #[error("csr indptr ends at {end}, expected nnz = {nnz}")]
    IndptrEnd {
        /// `indptr[rows]`.
        end: i64,
        /// Length of `indices`.
        nnz: usize,
    },
    /// A column index outside `[0, cols)`.
    #[error("csr column index {col} in row {row} is out of range for {cols} columns")]
    ColumnOutOfRange {
        /// Row.
        row: usize,
        /// The bad index.
        col: i64,
        /// Number of columns.
        cols: usize,
    },
    /// Column indices within a row must be sorted.
    #[error("csr column indices of row {row} are not sorted ({prev} before {next})")]
    UnsortedColumns {
        /// Row.
        row: usize,
        /// Earlier index.
        prev: i64,
        /// Later, smaller index.
        next: i64,
    },
    /// A column index stored twice in one row.
    #[error("csr column index {col} appears twice in row {row}")]
    DuplicateColumn {
        /// Row.
        row: usize,
        /// Repeated index.
        col: i64,
    },
    /// `indices` and `data` must have the same length.
    #[error("{indices} indices but {data} data values")]
    DataLength {
        /// Length of `indices`.
        indices: usize,
        /// Length of `data`.
        data: usize,
    },
    /// A part has the wrong rank, dtype or shape.
    #[error("{0}")]
    Part(String),
    /// Row-sparse row indices must be strictly increasing.
    #[error("row_sparse row indices are not sorted ({prev} before {next})")]
    UnsortedRows {
        /// Earlier index.
        prev: i64,
        /// Later, smaller index.
        next: i64,
    },
    /// A row id stored twice.
    #[error("row_sparse row index {0} appears twice")]
    DuplicateRow(i64),
    /// A row id outside `[0, rows)`.
    #[error("row_sparse row index {row} is out of range for {rows} rows")]
    RowOutOfRange {
        /// The bad id.
        row: i64,
        /// Number of rows.
        rows: usize,
    },
    /// The dense block must have shape `[len(indices), shape[1..]...]`.
    #[error("row_sparse data block has shape {got:?}, expected {expected:?}")]
    BlockShape {
        /// Required shape.
        expected: Vec<usize>,
        /// Given shape.
        got: Vec<usize>,
    },
    /// Parts that passed construction but no longer describe a valid array: a shared index
    /// tensor was written afterwards (with `fill_`, through a NumPy view, ...). Carries the
    /// violated invariant when the kernel identified it (SpMV only knows that an index or
    /// pointer was out of range).
    #[error(
        "sparse parts are no longer valid (the shared index tensors were written after \
         construction){}",
        .0.as_ref().map(|c| format!(": {c}")).unwrap_or_default()
    )]
    Modified(Option<Box<SparseError>>),
}

impl SparseError {
    /// This violation, found in parts that were valid when constructed.
    pub(crate) fn modified(self) -> SparseError {
        SparseError::Modified(Some(Box::new(self)))
    }
}
