//! CSR index parts: one index dtype per matrix, `int32` when the matrix fits (as SciPy's
//! `get_index_dtype` chooses), else `int64`. Half the index bytes is most of the memory traffic
//! SpMV saves on banded matrices.

use super::{alloc, values, with_slice};
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result};
use crate::tensor::Tensor;

/// An integer type CSR index parts are stored in: `i32` or `i64`.
pub(crate) trait CsrIndex: Element + Ord {
    /// The value as an offset. Valid parts are non-negative; a negative value maps to an
    /// offset past any slice, so a lookup with `get` fails instead of wrapping to a valid one.
    fn to_usize(self) -> usize;
}

impl CsrIndex for i32 {
    #[inline(always)]
    fn to_usize(self) -> usize {
        // Zero-extension (cheaper than sign-extension); negatives become >= 2^31.
        self as u32 as usize
    }
}

impl CsrIndex for i64 {
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
}

/// Runs `$body` with `$I` the index type of dtype `$dtype`: `i32` for `I32`, else `i64`
/// (CSR index parts are only ever `int32` or `int64`).
macro_rules! with_index {
    ($dtype:expr, $I:ident => $body:expr) => {
        match $dtype {
            $crate::DType::I32 => {
                type $I = i32;
                $body
            }
            _ => {
                type $I = i64;
                $body
            }
        }
    };
}
pub(crate) use with_index;

/// The index dtype of a CSR matrix with `nnz` stored elements and `cols` columns: `int32`
/// when every pointer (at most `nnz`) and column index (below `cols`) fits, else `int64`.
pub(crate) fn index_dtype_for(nnz: usize, cols: usize) -> DType {
    if nnz.max(cols) <= i32::MAX as usize {
        DType::I32
    } else {
        DType::I64
    }
}

/// A 1-D index tensor of dtype `dt` (`I32` or `I64`) holding `v`; the values must fit
/// (they are validated parts whose dtype came from [`index_dtype_for`]).
pub(crate) fn index_tensor(v: Vec<i64>, dt: DType) -> Result<Tensor> {
    if dt == DType::I32 {
        values(alloc::collect(v.len(), v.iter().map(|&x| x as i32))?)
    } else {
        values(v)
    }
}

/// The elements of a contiguous `int32` or `int64` index part, widened to `i64`.
pub(crate) fn index_vec(t: &Tensor) -> Result<Vec<i64>> {
    with_index!(t.dtype(), I => with_slice::<I, _>(t, |s| alloc::collect(s.len(), s.iter().map(|v| v.to_i64())))?)
}

/// A user-given index part as a contiguous 1-D `int32` or `int64` tensor (other integer
/// dtypes are widened to `int64`); `name` is the part's name for errors.
pub(crate) fn index_part(name: &str, t: Tensor) -> Result<Tensor> {
    if !t.dtype().is_integer() || t.stype() != crate::StorageType::Default {
        return Err(ErrorKind::Sparse(super::SparseError::Part(format!(
            "csr {name} must be a dense integer tensor, got {} {}",
            t.stype(),
            t.dtype()
        )))
        .into());
    }
    if t.rank() != 1 {
        return Err(ErrorKind::Sparse(super::SparseError::Part(format!(
            "csr {name} must be 1-D, got shape {:?}",
            t.shape()
        )))
        .into());
    }
    match t.dtype() {
        DType::I32 | DType::I64 => t.contiguous_dense(),
        _ => t.astype_dense(DType::I64),
    }
}
