//! Materialisation: every method that writes elements through a layout goes through the one
//! copy kernel ([`crate::kernels::copy`], docs/design.md §1): `contiguous`, `copy`, `to_vec`,
//! `assign`, `fill_`, `repeat` and `tile`.

use std::sync::Arc;

use super::Tensor;
use crate::dtype::{Element, Scalar};
use crate::error::{DTypeFacts, ErrorKind, Result};
use crate::kernels::copy::{contiguous_plan, copy_strided};
use crate::kernels::plan::Plan;
use crate::layout::Layout;
use crate::shape::checked_byte_size;
use crate::storage::Storage;
use crate::with_dtype;

impl Tensor {
    /// This tensor if it is already C-contiguous (V6: size-1 dims ignored, any offset), else a
    /// new C-contiguous copy of the same dtype.
    ///
    /// Materialising an expanded view (stride 0) runs as memcpy/fill runs; a flipped view
    /// (negative strides) as a reversed copy; a transposed view as a blocked transpose.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(0, 6, 1, DType::I32).unwrap();
    /// let tt = t.as_strided(&[3, 2], &[1, 3], 0).unwrap(); // the transpose of a 2x3
    /// let c = tt.contiguous().unwrap();
    /// assert!(c.is_contiguous() && !c.shares_storage(&t));
    /// assert_eq!(c.to_vec::<i32>().unwrap(), vec![0, 3, 1, 4, 2, 5]);
    /// assert!(t.contiguous().unwrap().shares_storage(&t));
    /// ```
    pub(crate) fn contiguous_dense(&self) -> Result<Tensor> {
        self.dense_storage()?;
        if self.is_contiguous() {
            Ok(self.clone())
        } else {
            self.copy_dense()
        }
    }

    /// This tensor as one that no other handle shares, for keeping as a leaf's `.grad`: itself
    /// when it is C-contiguous, spans its whole storage and holds the only reference to it;
    /// otherwise a contiguous copy. Sparse tensors are returned as they are (their parts are
    /// never written in place).
    pub(crate) fn contiguous_owned(self) -> Result<Tensor> {
        let Ok(s) = self.dense_storage() else {
            return Ok(self);
        };
        let whole = self.layout.offset() == 0 && s.len() == self.numel();
        if whole && self.is_contiguous() && std::sync::Arc::strong_count(s) == 1 {
            Ok(self)
        } else {
            self.copy_dense()
        }
    }

    /// A new C-contiguous tensor holding a copy of the elements (never shares storage).
    pub(crate) fn copy_dense(&self) -> Result<Tensor> {
        self.materialize(self.shape(), self.strides())
    }

    /// A new contiguous tensor of `dims` read from this tensor's storage through
    /// `src_strides` (starting at this tensor's offset): the one strided copy.
    fn materialize(&self, dims: &[usize], src_strides: &[isize]) -> Result<Tensor> {
        let out = Tensor::for_overwrite(dims, self.dtype())?;
        let plan = contiguous_plan(dims, src_strides, self.layout.offset())?;
        with_dtype!(self.dtype(), T => {
            let src = self.dense_storage()?.read_as::<T>();
            let mut dst = out.dense_storage()?.write_as::<T>();
            copy_strided(&plan, &mut dst, &src);
        });
        Ok(out)
    }

    /// Writes `src`, broadcast to this tensor's shape, into this view (NumPy `self[...] = src`).
    /// The writes reach the base and every other view of the storage (V7).
    ///
    /// Errors: `DType` if the dtypes differ (no implicit cast), `ShapeMismatch` if `src` does
    /// not broadcast to `self.shape()`, `OverlappingWrite` if this view overlaps itself (e.g. an
    /// expanded, stride-0 view). When `src` shares storage with `self`, the result is as if
    /// `src` were copied first (V7, NumPy).
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let a = Tensor::zeros(&[2, 3], DType::F32).unwrap();
    /// let col = a.as_strided(&[2], &[3], 1).unwrap(); // a[:, 1]
    /// col.assign(&Tensor::from_slice(&[7f32], &[1]).unwrap()).unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![0., 7., 0., 0., 7., 0.]);
    /// ```
    ///
    /// Refused while grad mode is on and `self` or `src` requires a gradient (docs/design.md
    /// G4).
    pub fn assign(&self, src: &Tensor) -> Result<()> {
        self.check_inplace("assign", &[src])?;
        self.assign_dense(src)
    }

    /// [`Tensor::assign`] without the autograd check: for the crate's own writes into
    /// parameters (an optimiser step), which autograd does not record.
    pub(crate) fn assign_dense(&self, src: &Tensor) -> Result<()> {
        if src.dtype() != self.dtype() {
            return Err(ErrorKind::DType(DTypeFacts::Differ {
                op: "assign".into(),
                what: "source",
                expected: self.dtype(),
                got: src.dtype(),
            })
            .into());
        }
        let bcast = src.layout.broadcast_to(self.shape())?;
        self.layout.check_writable()?;
        if self.numel() == 0 {
            return Ok(());
        }
        if self.shares_storage(src) {
            // V7: as if the source were copied first. Copying the un-broadcast source keeps the
            // temporary small; it never holds this storage's read and write locks at once.
            return self.assign_dense(&src.copy_dense()?);
        }
        let plan = Plan::new(
            self.shape(),
            [self.strides(), bcast.strides()],
            [self.layout.offset(), bcast.offset()],
        );
        with_dtype!(self.dtype(), T => {
            write_from::<T>(self.dense_storage()?, src.dense_storage()?, |dst, s| copy_strided(&plan, dst, s))
        });
        Ok(())
    }

    /// Writes `value` (converted to this tensor's dtype, Rust `as` rules) into every element of
    /// this view; the writes reach the base (V7). Errors with `OverlappingWrite` on a view that
    /// overlaps itself.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let a = Tensor::zeros(&[4], DType::I64).unwrap();
    /// a.as_strided(&[2], &[2], 1).unwrap().fill_(5).unwrap(); // a[1::2] = 5
    /// assert_eq!(a.to_vec::<i64>().unwrap(), vec![0, 5, 0, 5]);
    /// ```
    pub fn fill_(&self, value: impl Into<Scalar>) -> Result<()> {
        self.check_inplace("fill_", &[])?;
        self.layout.check_writable()?;
        let value = value.into();
        // The source is one element seen with stride 0 everywhere: the fill inner loop.
        let zeros = vec![0isize; self.rank()];
        let plan = Plan::new(
            self.shape(),
            [self.strides(), &zeros],
            [self.layout.offset(), 0],
        );
        with_dtype!(self.dtype(), T => {
            let one = [value.to::<T>()];
            copy_strided(&plan, &mut self.dense_storage()?.write_as::<T>(), &one);
        });
        Ok(())
    }

    /// PyTorch `repeat` (E2): the output has shape `[counts[i] * d[i]]` where `d` is this
    /// tensor's shape padded with 1s on the left to `counts.len()` dims (new dims at the front);
    /// a count of 0 gives an empty dim. Always a new contiguous tensor.
    ///
    /// Built as ONE strided copy: the output is viewed as `[r0, s0, r1, s1, ...]` (count, source
    /// dim) and the source gets stride 0 on every `r` dim.
    ///
    /// Errors: `InvalidArgument` if `counts.len() < rank`, `ShapeOverflow` if the output size
    /// overflows.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
    /// let r = t.repeat(&[2, 2]).unwrap();
    /// assert_eq!(r.shape(), &[2, 4]);
    /// assert_eq!(r.to_vec::<i32>().unwrap(), vec![1, 2, 1, 2, 1, 2, 1, 2]);
    /// ```
    pub(crate) fn repeat_dense(&self, counts: &[usize]) -> Result<Tensor> {
        let rank = self.rank();
        if counts.len() < rank {
            return Err(ErrorKind::InvalidArgument(format!(
                "repeat: {} counts given for a tensor of rank {rank} (need at least {rank})",
                counts.len()
            ))
            .into());
        }
        let lead = counts.len() - rank;
        let mut out_dims = Vec::with_capacity(counts.len());
        let mut view_dims = Vec::with_capacity(2 * counts.len());
        let mut view_strides = Vec::with_capacity(2 * counts.len());
        for (i, &c) in counts.iter().enumerate() {
            let (d, s) = if i < lead {
                (1, 0)
            } else {
                (self.shape()[i - lead], self.strides()[i - lead])
            };
            out_dims.push(
                c.checked_mul(d).ok_or_else(|| {
                    ErrorKind::ShapeOverflow(format!("repeat: {c} x {d} overflows"))
                })?,
            );
            view_dims.extend([c, d]);
            view_strides.extend([0, s]);
        }
        checked_byte_size(&out_dims, self.dtype().itemsize())?;
        // The contiguous strides of `view_dims` are those of `out_dims` split in two, so
        // writing `view_dims` contiguously fills the output in row-major order.
        let out = self.materialize(&view_dims, &view_strides)?;
        out.with_layout(Layout::contiguous(&out_dims)?)
    }

    /// NumPy `tile` (E2): `reps` shorter than the rank is padded with 1s on the left; longer
    /// `reps` pad the shape with 1s on the left. Then [`Tensor::repeat`].
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(t.tile(&[2]).unwrap().to_vec::<i64>().unwrap(), vec![1, 2, 1, 2, 3, 4, 3, 4]);
    /// ```
    pub(crate) fn tile_dense(&self, reps: &[usize]) -> Result<Tensor> {
        let rank = self.rank();
        if reps.len() >= rank {
            return self.repeat_dense(reps);
        }
        let mut padded = vec![1usize; rank - reps.len()];
        padded.extend_from_slice(reps);
        self.repeat_dense(&padded)
    }

    /// The elements in row-major order through the copy kernel; errors if `T` is not the
    /// tensor's dtype.
    pub(super) fn gather_vec<T: Element>(&self) -> Result<Vec<T>> {
        let data = self.dense_storage()?.read::<T>()?;
        // Sized by the view (possibly a huge broadcast): fallible, an error and not an abort.
        let mut out = crate::storage::try_zeroed_vec::<T>(self.numel())?;
        let plan = contiguous_plan(self.shape(), self.strides(), self.layout.offset())?;
        copy_strided(&plan, &mut out, &data);
        Ok(out)
    }
}

/// Runs `f(dst, src)` with `dst` write-locked and `src` read-locked; `dst` and `src` must be
/// different storages. The locks are taken in address order, so two threads assigning in
/// opposite directions (`a <- b` and `b <- a`) cannot deadlock.
fn write_from<T: Element>(dst: &Arc<Storage>, src: &Arc<Storage>, f: impl FnOnce(&mut [T], &[T])) {
    debug_assert!(!Arc::ptr_eq(dst, src));
    if Arc::as_ptr(dst) < Arc::as_ptr(src) {
        let mut d = dst.write_as::<T>();
        let s = src.read_as::<T>();
        f(&mut d, &s)
    } else {
        let s = src.read_as::<T>();
        let mut d = dst.write_as::<T>();
        f(&mut d, &s)
    }
}
