//! The `Tensor` handle: dense (shared storage + layout) or sparse (an opaque payload).
//!
//! Representation rule (docs/design.md O3/O4): the element buffer of a dense tensor is reachable only
//! through [`Tensor::storage`] / the crate-internal `dense_storage`, which return an error for
//! a sparse tensor, so no dense kernel can read a sparse tensor's parts as if they were dense
//! elements. Pure reads (`to_vec`, `item`, printing) work on a densified copy. The typed
//! methods that compute (arithmetic, reductions, views, copies) are defined in the ops layer
//! (`ops/methods/`) and run their registry op, so arithmetic on a sparse tensor takes the
//! sparse kernels or the logged fallback like `ops::invoke`; views and in-place writes of a
//! sparse tensor are errors that say to use `cast_storage`. This layer holds their dense
//! kernels (`*_dense`), and the autograd state of a handle (`grad_meta.rs`).
//!
//! Layering: this module and its children import only the layers below them (storage,
//! layout, index, kernels, promote, shape, stype, dtype, error). The sparse formats live in
//! the sparse layer, which implements `SparsePayload` (`payload.rs`); the methods that choose
//! between dense and sparse kernels (`astype`, `sum`) live in the ops layer, `cast_storage`
//! and the sparse accessors in the sparse layer. The dense kernels here are `astype_dense` and
//! `sum_dense`.

pub mod arith;
mod borrowed;
mod clip;
pub mod complex_parts;
mod create;
mod create_grid;
mod distinct;
mod element_format;
pub(crate) mod flat;
pub(crate) mod flat_select;
mod format;
pub(crate) mod grad_meta;
mod interop;
mod map;
mod materialize;
pub(crate) mod matmul;
mod payload;
pub(crate) mod reduce;
mod trig_huge;
pub mod ufunc;
mod vector_math;
mod views;

use std::any::Any;
use std::sync::Arc;

pub use borrowed::TensorRef;
pub use format::{EDGE_ITEMS, LINE_WIDTH, PRINT_THRESHOLD};
pub use grad_meta::is_grad_enabled;
pub(crate) use payload::SparsePayload;

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::layout::Layout;
use crate::storage::Storage;
use crate::stype::StorageType;

/// A tensor: a handle to shared [`Storage`] seen through a [`Layout`] (dense), or to shared
/// sparse parts (CSR or row-sparse; see the `sparse` module and [`Tensor::cast_storage`]).
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
    /// The elements; private to the `tensor` module so that every access goes through
    /// `dense_storage` (an error for sparse tensors).
    data: TensorData,
    /// Dense: the view into the storage. Sparse: the logical shape as a contiguous layout
    /// (metadata only, never used to read elements).
    pub(crate) layout: Layout,
    /// Autograd state (`grad_meta.rs`): `None` for a tensor that does not require a gradient.
    /// Shared by clones of this handle; a view starts without it.
    autograd: Option<Arc<grad_meta::AutogradMeta>>,
}

/// Where a tensor's elements live.
#[derive(Clone)]
enum TensorData {
    /// A storage, and the state a higher layer attached to it, if any.
    Dense(Arc<Storage>, Option<Attachment>),
    Sparse(Arc<dyn SparsePayload>),
}

/// State that a higher layer keeps with a dense storage (the ring buffer's ring:
/// docs/design.md O5). Every view made from a tensor that carries it carries it too (views
/// are made only through `with_layout`), so it is shared by all the handles on that storage
/// and dropped with the last of them; copies and conversions, which make new storage, do not
/// carry it.
pub(crate) type Attachment = Arc<dyn Any + Send + Sync>;

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
            data: TensorData::Dense(storage, None),
            layout,
            autograd: None,
        }
    }

    /// A view of the same storage through `layout`, which must already be checked against
    /// the storage bounds (all layout functions keep views in bounds). Keeps the storage's
    /// [`Attachment`]. Errors for a sparse tensor.
    #[inline]
    pub(crate) fn with_layout(&self, layout: Layout) -> Result<Tensor> {
        match &self.data {
            TensorData::Dense(..) => Ok(Tensor {
                data: self.data.clone(),
                layout,
                autograd: None,
            }),
            TensorData::Sparse(p) => Err(self.not_dense(p.as_ref())),
        }
    }

    /// This dense tensor with `state` attached to its storage (see [`Attachment`]); meant
    /// for a fresh storage that no other handle sees yet. Errors for a sparse tensor.
    pub(crate) fn with_attachment(mut self, state: Attachment) -> Result<Tensor> {
        match &mut self.data {
            TensorData::Dense(_, slot) => {
                *slot = Some(state);
                Ok(self)
            }
            TensorData::Sparse(p) => {
                let p = p.clone();
                Err(self.not_dense(p.as_ref()))
            }
        }
    }

    /// The state attached to this tensor's storage, if any.
    pub(crate) fn attachment(&self) -> Option<&Attachment> {
        match &self.data {
            TensorData::Dense(_, a) => a.as_ref(),
            TensorData::Sparse(_) => None,
        }
    }

    /// Wraps a checked sparse payload (the logical shape comes from the payload).
    pub(crate) fn from_payload(payload: impl SparsePayload) -> Result<Tensor> {
        let layout = Layout::contiguous(&payload.shape())?;
        Ok(Tensor {
            data: TensorData::Sparse(Arc::new(payload)),
            layout,
            autograd: None,
        })
    }

    /// The sparse payload, or `None` for a dense tensor.
    pub(crate) fn sparse_payload(&self) -> Option<&dyn SparsePayload> {
        match &self.data {
            TensorData::Dense(..) => None,
            TensorData::Sparse(p) => Some(p.as_ref()),
        }
    }

    /// The storage of a dense tensor; the one gate every dense kernel passes. Errors for a
    /// sparse tensor.
    pub(crate) fn dense_storage(&self) -> Result<&Arc<Storage>> {
        match &self.data {
            TensorData::Dense(s, _) => Ok(s),
            TensorData::Sparse(p) => Err(self.not_dense(p.as_ref())),
        }
    }

    /// The error of a dense-only operation on this sparse tensor (payload `p`).
    fn not_dense(&self, p: &dyn SparsePayload) -> crate::TesseraError {
        crate::ErrorKind::InvalidArgument(format!(
            "this operation needs a dense tensor, got a {} tensor of shape {:?}; use \
             ops::invoke (sparse kernels or the logged fallback) or cast_storage(default)",
            p.stype(),
            self.shape()
        ))
        .into()
    }

    /// This tensor if dense, else a dense copy (for pure reads: `to_vec`, printing).
    pub(crate) fn densified(&self) -> Result<Tensor> {
        match &self.data {
            TensorData::Dense(..) => Ok(self.clone()),
            TensorData::Sparse(p) => p.to_dense(),
        }
    }

    /// Storage type (dense tensors are [`StorageType::Default`]).
    pub fn stype(&self) -> StorageType {
        match &self.data {
            TensorData::Dense(..) => StorageType::Default,
            TensorData::Sparse(p) => p.stype(),
        }
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        match &self.data {
            TensorData::Dense(s, _) => s.dtype(),
            TensorData::Sparse(p) => p.dtype(),
        }
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

    /// The shared storage of a dense tensor (an error for a sparse one).
    pub fn storage(&self) -> Result<&Arc<Storage>> {
        self.dense_storage()
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

    /// True when both tensors are views of the same storage (or the same sparse parts).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        match (&self.data, &other.data) {
            (TensorData::Dense(a, _), TensorData::Dense(b, _)) => Arc::ptr_eq(a, b),
            (TensorData::Sparse(a), TensorData::Sparse(b)) => {
                std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
            }
            _ => false,
        }
    }

    /// The elements in row-major order (a sparse tensor is densified first); errors if `T`
    /// is not the tensor's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.densified()?.gather_vec()
    }

    /// The single element of a one-element tensor, or an error.
    pub fn item<T: Element>(&self) -> Result<T> {
        if self.numel() != 1 {
            return Err(crate::ErrorKind::InvalidArgument(format!(
                "item() needs exactly one element, tensor has {}",
                self.numel()
            ))
            .into());
        }
        Ok(self.to_vec::<T>()?[0])
    }
}
