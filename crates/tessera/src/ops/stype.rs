//! Storage types and dispatch decisions (docs/design.md O2).

use smallvec::{smallvec, SmallVec};

use crate::dtype::DType;
pub use crate::stype::StorageType;
use crate::tensor::Tensor;

/// Which implementation runs an op call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DispatchMode {
    /// The dense kernel on dense inputs.
    Dense,
    /// The op's sparse kernel.
    Sparse,
    /// Inputs cast to dense, the dense kernel, outputs cast to the inferred storage types;
    /// logged once per (op, storage types).
    Fallback,
}

/// The outcome of storage-type inference: output storage types and the dispatch mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StypeDecision {
    /// Storage type of each output (inline up to four outputs: every call decides, so this
    /// must not allocate).
    pub outputs: SmallVec<[StorageType; 4]>,
    /// How to run.
    pub mode: DispatchMode,
}

impl StypeDecision {
    /// The rule for ops without sparse kernels: dense in, dense kernel; anything else falls
    /// back and produces dense outputs.
    pub fn dense_only(inputs: &[StorageType], n_outputs: usize) -> StypeDecision {
        let mode = if inputs.iter().all(|&s| s == StorageType::Default) {
            DispatchMode::Dense
        } else {
            DispatchMode::Fallback
        };
        StypeDecision {
            outputs: smallvec![StorageType::Default; n_outputs],
            mode,
        }
    }
}

/// [`StypeDecision::dense_only`] for a one-output op, as a storage-inference function.
pub fn dense_stype<P>(_params: &P, inputs: &[StorageType]) -> StypeDecision {
    StypeDecision::dense_only(inputs, 1)
}

/// Storage inference of the view ops: always the dense kernel, which refuses a sparse input
/// with an error saying to convert it (a view of a densified copy would not be a view).
pub fn view_stype<P>(_params: &P, _inputs: &[StorageType]) -> StypeDecision {
    StypeDecision {
        outputs: smallvec![StorageType::Default],
        mode: DispatchMode::Dense,
    }
}

/// What inference knows of a tensor without its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMeta {
    /// Dims.
    pub shape: Vec<usize>,
    /// Element type.
    pub dtype: DType,
    /// Storage type.
    pub stype: StorageType,
}

impl TensorMeta {
    /// A dense meta.
    pub fn dense(shape: Vec<usize>, dtype: DType) -> TensorMeta {
        TensorMeta {
            shape,
            dtype,
            stype: StorageType::Default,
        }
    }
}

impl Tensor {
    /// Shape, dtype and storage type, as inference sees them.
    pub fn meta(&self) -> TensorMeta {
        TensorMeta {
            shape: self.shape().to_vec(),
            dtype: self.dtype(),
            stype: self.stype(),
        }
    }
}
