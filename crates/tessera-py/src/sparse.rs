//! Sparse tensors from Python: constructors from CSR / row-sparse parts, `tostype`,
//! `todense`, SciPy export. SciPy import is in `tessera/sparse.py` (it calls the constructor).

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tessera::{CsrMatrix, DType, RowSparseArray, SparseParts, StorageType, Tensor};

use crate::convert::{shape_arg, to_tensor};
use crate::errors::PyRes;
use crate::handle::PyTensor;

/// An index array as a tensor of its own integer dtype (TypeError for other dtypes).
fn index_tensor(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let t = to_tensor(obj, None, None)?;
    if !t.dtype().is_integer() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "sparse index arrays must be integers, got {}",
            t.dtype()
        )));
    }
    Ok(t)
}

fn i64_vec(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    index_tensor(obj)?
        .astype(DType::I64)
        .py()?
        .to_vec::<i64>()
        .py()
}

/// A CSR tensor from `(data, indices, indptr)` and a 2-D `shape`, checked (ValueError with
/// the violated invariant).
#[pyfunction]
fn _csr_matrix(
    data: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    indptr: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let shape = shape_arg(shape)?;
    let [rows, cols] = match shape.as_slice() {
        &[r, c] => [r, c],
        s => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "csr_matrix needs a 2-D shape, got {s:?}"
            )))
        }
    };
    let data = to_tensor(data, None, None)?;
    // int32 / int64 parts (SciPy's) are copied once into tensors and kept as they are when
    // already in the matrix's index dtype.
    let (indptr, indices) = (index_tensor(indptr)?, index_tensor(indices)?);
    let m = CsrMatrix::try_from_tensors([rows, cols], indptr, indices, data).py()?;
    Tensor::from_sparse_parts(SparseParts::Csr(m))
        .py()
        .map(Into::into)
}

/// A row-sparse tensor from `(data, indices)` and `shape`, checked.
#[pyfunction]
fn _row_sparse_array(
    data: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let shape = shape_arg(shape)?;
    let data = to_tensor(data, None, None)?;
    let r = RowSparseArray::try_new(&shape, i64_vec(indices)?, data).py()?;
    Tensor::from_sparse_parts(SparseParts::RowSparse(r))
        .py()
        .map(Into::into)
}

#[pymethods]
impl PyTensor {
    /// Converts to storage type `'default'`, `'csr'` (2-D) or `'row_sparse'` (MXNet
    /// `tostype`); dense to sparse keeps only non-zeros.
    fn tostype(&self, stype: &str) -> PyResult<PyTensor> {
        let s: StorageType = stype.parse().py()?;
        self.t().cast_storage(s).py().map(Into::into)
    }

    /// A dense copy (the tensor itself when dense).
    fn todense(&self) -> PyResult<PyTensor> {
        self.t()
            .cast_storage(StorageType::Default)
            .py()
            .map(Into::into)
    }

    /// The parts of a sparse tensor: `(data, indices, indptr)` for csr, `(data, indices)` for
    /// row_sparse (tensors; csr `indices`/`indptr` are int32 when the matrix fits, else int64,
    /// row_sparse `indices` int64).
    fn sparse_parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let wrap = |t: &Tensor| PyTensor::from(t.clone());
        match self.t().sparse_parts() {
            Some(SparseParts::Csr(m)) => {
                PyTuple::new(py, [wrap(m.data()), wrap(m.indices()), wrap(m.indptr())])
            }
            Some(SparseParts::RowSparse(r)) => {
                PyTuple::new(py, [wrap(r.data()), wrap(r.indices())])
            }
            None => Err(pyo3::exceptions::PyValueError::new_err(
                "sparse_parts() needs a csr or row_sparse tensor",
            )),
        }
    }

    /// A `scipy.sparse.csr_matrix` with copies of the parts (csr tensors only). Parts
    /// written after construction (through NumPy views of `sparse_parts()`) raise
    /// ValueError instead of giving SciPy an invalid matrix.
    fn to_scipy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let m = self.t().as_csr().py()?;
        m.validate().py()?;
        let np = py.import("numpy")?;
        let arr = |t: &Tensor| np.call_method1("array", (PyTensor::from(t.clone()),));
        let parts = (arr(m.data())?, arr(m.indices())?, arr(m.indptr())?);
        py.import("scipy.sparse")?
            .call_method1("csr_matrix", (parts, (m.shape()[0], m.shape()[1])))
    }

    /// Rows `start..end` of a csr tensor, as csr.
    fn csr_rows(&self, start: usize, end: usize) -> PyResult<PyTensor> {
        self.t().csr_rows(start, end).py().map(Into::into)
    }

    /// The stored rows of a row_sparse tensor whose ids are in `rows` (MXNet `retain`).
    fn retain(&self, rows: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.t().retain(&i64_vec(rows)?).py().map(Into::into)
    }
}

/// Registers the sparse functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_csr_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(_row_sparse_array, m)?)?;
    Ok(())
}
