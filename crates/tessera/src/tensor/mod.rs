//! The `Tensor` handle: shared storage + layout. The dtype is the storage's.

pub mod arith;
mod create;
mod element_format;
mod format;
mod interop;
mod materialize;
pub(crate) mod matmul;
mod reduce;
mod views;

use std::sync::Arc;

pub use format::{EDGE_ITEMS, LINE_WIDTH, PRINT_THRESHOLD};

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::layout::Layout;
use crate::storage::Storage;
use crate::stype::StorageType;

/// A dense tensor: a handle to shared [`Storage`] seen through a [`Layout`].
///
/// Cloning a `Tensor` clones the handle, not the elements: both handles see the same storage,
/// like a second Python reference to one NumPy array.
///
/// ```
/// use tessera::{DType, Tensor};
/// let t = Tensor::from_vec(vec![0f32, 1., 2., 3., 4., 5.], &[2, 3]).unwrap();
/// assert_eq!(t.dtype(), DType::F32);
/// assert_eq!(t.shape(), &[2, 3]);
/// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0., 1., 2., 3., 4., 5.]);
/// assert_eq!(t.to_string(), "[[0. 1. 2.]\n [3. 4. 5.]]");
/// ```
#[derive(Clone)]
pub struct Tensor {
    pub(crate) storage: Arc<Storage>,
    pub(crate) layout: Layout,
    pub(crate) stype: StorageType,
}

impl Tensor {
    /// Wraps a storage and a layout. The layout must stay inside the storage.
    pub(crate) fn from_parts(storage: Arc<Storage>, layout: Layout) -> Tensor {
        debug_assert!(
            layout.numel() == 0 || {
                let (lo, hi) = layout.shape().offset_span();
                layout.offset() as isize + lo >= 0
                    && ((layout.offset() as isize + hi) as usize) < storage.len()
            }
        );
        Tensor {
            storage,
            layout,
            stype: StorageType::Default,
        }
    }

    /// Storage type (dense tensors are [`StorageType::Default`]).
    pub fn stype(&self) -> StorageType {
        self.stype
    }

    /// Converts to another storage type (`default` to `default` returns the same handle).
    ///
    /// CSR and row-sparse storage arrive with the sparse kernels; until then casting to them
    /// is an error. The hidden test storage type tags a dense tensor as non-default so the
    /// dispatch fallback can be tested.
    pub fn cast_storage(&self, to: StorageType) -> Result<Tensor> {
        match to {
            StorageType::Default | StorageType::TestSparse => Ok(Tensor {
                stype: to,
                ..self.clone()
            }),
            StorageType::Csr | StorageType::RowSparse => Err(crate::TesseraError::InvalidArgument(
                format!("storage type {to} is not supported yet"),
            )),
        }
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.storage.dtype()
    }

    /// Size of each dimension.
    pub fn shape(&self) -> &[usize] {
        self.layout.dims()
    }

    /// Strides in elements (signed).
    pub fn strides(&self) -> &[isize] {
        self.layout.strides()
    }

    /// The layout (shape descriptor + offset).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The shared storage.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.layout.rank()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.layout.numel()
    }

    /// C-contiguous (ignoring size-1 dims; empty tensors are contiguous).
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// True when both tensors are views of the same storage.
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// The elements in row-major order; errors if `T` is not the tensor's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.gather_vec()
    }

    /// The single element of a one-element tensor, or an error.
    pub fn item<T: Element>(&self) -> Result<T> {
        if self.numel() != 1 {
            return Err(crate::TesseraError::InvalidArgument(format!(
                "item() needs exactly one element, tensor has {}",
                self.numel()
            )));
        }
        Ok(self.to_vec::<T>()?[0])
    }
}
