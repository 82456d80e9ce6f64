//! Storage-type rules of the ops with sparse kernels (docs/design.md O3), one function per rule,
//! and the sparse kernels' registry glue.
//!
//! | op | inputs | output | mode |
//! |---|---|---|---|
//! | zero-preserving unary (`negative`, `absolute`, `sqrt`, `square`, `sin`, `tanh`, `relu`) | csr / row_sparse | same | sparse |
//! | `mul_scalar` | csr / row_sparse | same | sparse |
//! | `add_scalar` | csr / row_sparse, `scalar = 0` | same | sparse |
//! | `add_scalar` | csr / row_sparse, `scalar != 0` | default | fallback |
//! | `quadratic` | csr, `c = 0` | csr | sparse |
//! | `quadratic` | csr with `c != 0`, row_sparse | default | fallback |
//! | `add`, `subtract` | two csr / two row_sparse | same | sparse |
//! | `add`, `subtract` | sparse and default (either order) | default | sparse (native) |
//! | `multiply` | sparse and default (either order) | the sparse type (masked) | sparse |
//! | `dot` | csr, default | default (`transpose_a = false`), row_sparse (`true`) | sparse |
//! | `sum` | csr / row_sparse | default | sparse |
//! | anything else with a sparse input | | default | fallback (logged) |
//!
//! Masked semantics: `sparse * dense` multiplies only the stored elements, so an implicit
//! zero stays zero even where the dense operand is NaN or ±Inf (SciPy's `multiply` does
//! the same); the dense op would give NaN there.

use crate::ops::stype::{DispatchMode, StorageType, StypeDecision};

use StorageType::{Csr, Default as Dense, RowSparse};

fn sparse_out(s: StorageType) -> StypeDecision {
    StypeDecision {
        outputs: smallvec::smallvec![s],
        mode: DispatchMode::Sparse,
    }
}

fn dense_or_fallback(inputs: &[StorageType]) -> StypeDecision {
    StypeDecision::dense_only(inputs, 1)
}

/// Zero-preserving unary ops and `mul_scalar`: the storage type is kept.
pub(crate) fn keep_stype(inputs: &[StorageType]) -> StypeDecision {
    match inputs {
        [s @ (Csr | RowSparse)] => sparse_out(*s),
        _ => dense_or_fallback(inputs),
    }
}

/// `add_scalar`: kept only when the scalar is 0.
pub(crate) fn add_scalar_stype(scalar: f64, inputs: &[StorageType]) -> StypeDecision {
    if scalar == 0.0 {
        keep_stype(inputs)
    } else {
        dense_or_fallback(inputs)
    }
}

/// `quadratic`: csr with `c = 0` is csr; everything else sparse falls back.
pub(crate) fn quadratic_stype(c: f64, inputs: &[StorageType]) -> StypeDecision {
    match inputs {
        [Csr] if c == 0.0 => sparse_out(Csr),
        _ => dense_or_fallback(inputs),
    }
}

/// `_backward_quadratic` (the gradient op of `quadratic`, inputs `grad_output`, `data`): a csr
/// output gradient of a csr input stays csr (the seed's exercise); anything else is dense.
pub(crate) fn backward_quadratic_stype(inputs: &[StorageType]) -> StypeDecision {
    match inputs {
        [Csr, Csr] => sparse_out(Csr),
        _ => dense_or_fallback(inputs),
    }
}

/// `add` / `subtract`.
pub(crate) fn add_sub_stype(inputs: &[StorageType]) -> StypeDecision {
    match inputs {
        [a @ (Csr | RowSparse), b] if a == b => sparse_out(*a),
        [Csr | RowSparse, Dense] | [Dense, Csr | RowSparse] => sparse_out(Dense),
        _ => dense_or_fallback(inputs),
    }
}

/// `multiply`: sparse times dense is sparse (masked).
pub(crate) fn mul_stype(inputs: &[StorageType]) -> StypeDecision {
    match inputs {
        [s @ (Csr | RowSparse), Dense] | [Dense, s @ (Csr | RowSparse)] => sparse_out(*s),
        _ => dense_or_fallback(inputs),
    }
}

/// `dot`: csr times dense is dense, csr.T times dense is row_sparse.
pub(crate) fn dot_stype(transpose_a: bool, inputs: &[StorageType]) -> StypeDecision {
    match (inputs, transpose_a) {
        ([Csr, Dense], false) => sparse_out(Dense),
        ([Csr, Dense], true) => sparse_out(RowSparse),
        _ => dense_or_fallback(inputs),
    }
}

/// Reductions with a sparse kernel (`sum`): dense output.
pub(crate) fn reduce_stype(inputs: &[StorageType]) -> StypeDecision {
    match inputs {
        [Csr | RowSparse] => sparse_out(Dense),
        _ => dense_or_fallback(inputs),
    }
}
