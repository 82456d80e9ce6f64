//! Tessera: a tensor operator runtime.
//!
//! The crate is layered (docs/design.md §1): [`shape`] (the shared shape-descriptor cache) and
//! [`layout`] hold metadata only; [`storage`] owns element buffers; [`Tensor`] joins them.
//! Every kernel is generic over [`Element`] and reached through [`with_dtype!`].
//!
//! Imports go one way, down this list (`tests/module_graph.rs` fails on any cycle between
//! modules): [`io`] (checkpoint files); [`optim`] (optimisers); [`ops`] (the registry, the
//! one dispatch on storage type and the autograd recording point); [`autograd`] (the graph
//! nodes and the backward engine); [`sparse`] and [`ring`]; [`tensor`] (dense kernels only);
//! [`index`]; [`layout`], [`kernels`], [`storage`], [`promote`]; [`shape`], [`stype`];
//! [`error`]; [`dtype`].
//!
//! ```
//! use tessera::{DType, Tensor};
//! let t = Tensor::full(&[2, 2], 1.5, DType::F32).unwrap();
//! assert_eq!(format!("{t:?}"), "tensor([[1.5, 1.5],\n        [1.5, 1.5]], dtype=float32)");
//! ```

pub mod advanced_index;
pub mod arrayfns;
pub mod autograd;
pub mod dtype;
pub use dtype::complex;
pub mod dtype_info;
pub mod error;
pub mod fft;
pub mod index;
pub mod io;
pub mod kernels;
pub mod layout;
mod linalg;
pub mod ops;
pub mod optim;
pub mod promote;
pub mod ring;
pub mod shape;
pub mod sparse;
pub mod storage;
pub mod stype;
pub mod tensor;

#[doc(hidden)]
pub use half;

pub use advanced_index::IndexItem;
pub use complex::{C128, C64};
pub use dtype::{DType, Element, Scalar};
pub use error::{
    DTypeFacts, ErrorKind, IndexFacts, IoFacts, Result, ShapeFacts, SparseError, TesseraError,
};
pub use fft::{FftKind, FftNorm};
pub use layout::Layout;
pub use num_complex;
pub use ops::MatrixNorm;
pub use ring::RingBuffer;
pub use shape::{Shape, ShapeCache};
pub use sparse::{CsrMatrix, RowSparseArray, SparseParts};
pub use storage::Storage;
pub use stype::StorageType;
pub use tensor::arith::{BinaryOp, CompareOp, UnaryOp};
pub use tensor::ufunc::{MathBinaryOp, MathOp};
pub use tensor::{Tensor, TensorRef};
