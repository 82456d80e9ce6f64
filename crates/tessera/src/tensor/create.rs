//! Creating tensors: from data, filled, ranges.

use std::sync::Arc;

use super::Tensor;
use crate::dtype::{DType, Element, Scalar};
use crate::error::{ErrorKind, Result, TesseraError};
use crate::layout::Layout;
use crate::shape::{checked_byte_size, checked_numel};
use crate::storage::Storage;
use crate::with_dtype;

impl Tensor {
    /// A contiguous tensor of `shape` taking the elements of `data` (row-major).
    ///
    /// Errors if `data.len()` is not the shape's element count or the shape overflows.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_slice(&data, shape)
    }

    /// A contiguous tensor of `shape` holding a copy of `data` (row-major).
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(format!("{t:?}"), "tensor([[1, 2],\n        [3, 4]])");
    /// assert!(Tensor::from_slice(&[1i64, 2, 3], &[2, 2]).is_err());
    /// ```
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor> {
        let layout = checked_layout(shape, T::DTYPE)?;
        if data.len() != layout.numel() {
            return Err(ErrorKind::DataLength {
                shape: shape.to_vec(),
                expected: layout.numel(),
                got: data.len(),
            }
            .into());
        }
        Ok(Tensor::from_parts(
            Arc::new(Storage::from_slice(data)?),
            layout,
        ))
    }

    /// A rank-0 tensor holding `value` converted to `dtype`.
    pub fn scalar(value: impl Into<Scalar>, dtype: DType) -> Result<Tensor> {
        Tensor::full(&[], value, dtype)
    }

    /// A contiguous tensor of zeros.
    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
        let layout = checked_layout(shape, dtype)?;
        Ok(Tensor::from_parts(
            Arc::new(Storage::zeroed(dtype, layout.numel())?),
            layout,
        ))
    }

    /// A contiguous tensor whose elements are unspecified (but valid values), for kernels that
    /// write every element before returning it.
    pub(crate) fn for_overwrite(shape: &[usize], dtype: DType) -> Result<Tensor> {
        let layout = checked_layout(shape, dtype)?;
        Ok(Tensor::from_parts(
            Arc::new(Storage::for_overwrite(dtype, layout.numel())?),
            layout,
        ))
    }

    /// [`Tensor::for_overwrite`] with `like`'s dims: when `like` is already the canonical
    /// contiguous layout of those dims, the output shares its descriptor (no shape-cache
    /// lookup, a measurable part of a small call: docs/design.md P4).
    pub(crate) fn for_overwrite_like(like: &Layout, dtype: DType) -> Result<Tensor> {
        if !like.is_canonical() {
            return Tensor::for_overwrite(like.dims(), dtype);
        }
        checked_byte_size(like.dims(), dtype.itemsize())?;
        Ok(Tensor::from_parts(
            Arc::new(Storage::for_overwrite(dtype, like.numel())?),
            like.clone(),
        ))
    }

    /// The fresh output of an elementwise op over an input laid out as `like`: in `like`'s
    /// memory order when it is a dense block ([`Layout::dense_order`], NumPy's `order='K'`),
    /// row-major otherwise. Input and output then walk memory the same way, so a transposed
    /// input costs what a contiguous one does (docs/design.md P6).
    pub(crate) fn for_overwrite_in_order(like: &Layout, dtype: DType) -> Result<Tensor> {
        match like.dense_order()? {
            Some(layout) => Tensor::for_overwrite_dense(layout, dtype),
            None => Tensor::for_overwrite_like(like, dtype),
        }
    }

    /// A fresh tensor of `dtype` laid out as `layout`, a dense block at offset 0 (from
    /// [`Layout::dense_order`]), contents unspecified as in [`Tensor::for_overwrite`].
    pub(crate) fn for_overwrite_dense(layout: Layout, dtype: DType) -> Result<Tensor> {
        checked_byte_size(layout.dims(), dtype.itemsize())?;
        let storage = Storage::for_overwrite(dtype, layout.numel())?;
        Ok(Tensor::from_parts(Arc::new(storage), layout))
    }

    /// A contiguous tensor whose contents are unspecified (NumPy `empty`), for callers that
    /// write every element before reading any.
    ///
    /// Every element is still a valid value of its dtype: small buffers and `bool` tensors are
    /// zeroed, large ones are fresh zero pages or a reused buffer holding old values.
    pub fn empty(shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::for_overwrite(shape, dtype)
    }

    /// A contiguous tensor of `shape` over all of `storage` (whose dtype it takes): for
    /// storages made outside the crate, such as [`Storage::from_external`].
    pub fn from_storage(storage: Arc<Storage>, shape: &[usize]) -> Result<Tensor> {
        let layout = checked_layout(shape, storage.dtype())?;
        if layout.numel() != storage.len() {
            return Err(ErrorKind::DataLength {
                shape: shape.to_vec(),
                expected: layout.numel(),
                got: storage.len(),
            }
            .into());
        }
        Ok(Tensor::from_parts(storage, layout))
    }

    /// A strided view over `storage` (dims, signed strides in elements, and the element offset
    /// of index `[0, 0, ...]`), checked to stay inside it: for storages made outside the crate
    /// whose producer described a strided array (DLPack imports).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera::{DType, Storage, Tensor};
    /// let s = Arc::new(Storage::from_slice(&[0i32, 1, 2, 3, 4, 5]).unwrap());
    /// let t = Tensor::from_storage_strided(s.clone(), &[2, 3], &[1, 2], 0).unwrap();
    /// assert_eq!(t.to_vec::<i32>().unwrap(), vec![0, 2, 4, 1, 3, 5]);
    /// let r = Tensor::from_storage_strided(s.clone(), &[3], &[-2], 4).unwrap();
    /// assert_eq!(r.to_vec::<i32>().unwrap(), vec![4, 2, 0]);
    /// assert!(Tensor::from_storage_strided(s, &[4], &[2], 0).is_err()); // reaches element 6
    /// ```
    #[inline]
    pub fn from_storage_strided(
        storage: Arc<Storage>,
        dims: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Tensor> {
        let layout = Layout::as_strided(dims, strides, offset, storage.len())?;
        Ok(Tensor::from_parts(storage, layout))
    }

    /// [`Tensor::from_storage_strided`] with the layout already made (its shape interned
    /// once, for a caller that needed the shape's span first): checked to stay inside
    /// `storage`, which costs no walk over the dims.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera::{Layout, Shape, Storage, Tensor};
    /// let s = Arc::new(Storage::from_slice(&[0i32, 1, 2, 3, 4, 5]).unwrap());
    /// let shape = Shape::new(&[3], &[-2]).unwrap();
    /// assert_eq!(shape.offset_span(), (-4, 0));
    /// let t = Tensor::from_storage_layout(s.clone(), Layout::new(shape.clone(), 4)).unwrap();
    /// assert_eq!(t.to_vec::<i32>().unwrap(), vec![4, 2, 0]);
    /// assert!(Tensor::from_storage_layout(s, Layout::new(shape, 3)).is_err()); // element -1
    /// ```
    #[inline(always)]
    pub fn from_storage_layout(storage: Arc<Storage>, layout: Layout) -> Result<Tensor> {
        layout.check_bounds(storage.len())?;
        Ok(Tensor::from_parts(storage, layout))
    }

    /// A contiguous tensor of ones.
    pub fn ones(shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::full(shape, 1, dtype)
    }

    /// A contiguous tensor with every element `value` converted to `dtype` (Rust `as` rules:
    /// floats to integers truncate and saturate, anything non-zero to bool is `true`).
    pub fn full(shape: &[usize], value: impl Into<Scalar>, dtype: DType) -> Result<Tensor> {
        let value = value.into();
        let t = Tensor::for_overwrite(shape, dtype)?;
        with_dtype!(dtype, T => t.dense_storage()?.write_as::<T>().fill(value.to::<T>()));
        Ok(t)
    }

    /// `[start, start + step, ...]` up to but excluding `end`, like `numpy.arange`.
    ///
    /// When `start`, `end` and `step` are all integers the values are computed exactly in
    /// integer arithmetic; otherwise in `f64` as `start + i * step`. The length is
    /// `ceil((end - start) / step)`, or 0 when that is negative. A zero or non-finite step is
    /// an error.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(10, 0, -3, DType::I32).unwrap();
    /// assert_eq!(t.to_vec::<i32>().unwrap(), vec![10, 7, 4, 1]);
    /// let f = Tensor::arange(0.0, 1.0, 0.25, DType::F64).unwrap();
    /// assert_eq!(f.to_vec::<f64>().unwrap(), vec![0.0, 0.25, 0.5, 0.75]);
    /// ```
    pub fn arange(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        step: impl Into<Scalar>,
        dtype: DType,
    ) -> Result<Tensor> {
        match (
            as_int(start.into()),
            as_int(end.into()),
            as_int(step.into()),
        ) {
            (Ok(a), Ok(b), Ok(s)) => arange_int(a, b, s, dtype),
            (a, b, s) => arange_float(as_float(a), as_float(b), as_float(s), dtype),
        }
    }
}

/// The contiguous layout of `shape`, checked for element-count and byte-size overflow.
fn checked_layout(shape: &[usize], dtype: DType) -> Result<Layout> {
    checked_numel(shape)?;
    checked_byte_size(shape, dtype.itemsize())?;
    Layout::contiguous(shape)
}

fn as_int(s: Scalar) -> std::result::Result<i64, f64> {
    match s {
        Scalar::Bool(b) => Ok(b as i64),
        Scalar::Int(i) => Ok(i),
        Scalar::Float(x) => Err(x),
    }
}

fn as_float(r: std::result::Result<i64, f64>) -> f64 {
    r.map_or_else(|x| x, |i| i as f64)
}

fn arange_int(start: i64, end: i64, step: i64, dtype: DType) -> Result<Tensor> {
    if step == 0 {
        return Err(ErrorKind::InvalidArgument("arange: step must not be zero".into()).into());
    }
    let (span, step128) = (end as i128 - start as i128, step as i128);
    let len = if (span > 0) == (step128 > 0) && span != 0 {
        (span.abs() + step128.abs() - 1) / step128.abs()
    } else {
        0
    };
    let len = usize::try_from(len).map_err(|_| {
        TesseraError::from(ErrorKind::ShapeOverflow(format!(
            "arange of {len} elements"
        )))
    })?;
    let t = Tensor::for_overwrite(&[len], dtype)?;
    with_dtype!(dtype, T => {
        let mut out = t.dense_storage()?.write_as::<T>();
        for (i, o) in out.iter_mut().enumerate() {
            *o = T::from_i64((start as i128 + i as i128 * step128) as i64);
        }
    });
    Ok(t)
}

fn arange_float(start: f64, end: f64, step: f64, dtype: DType) -> Result<Tensor> {
    if step == 0.0 || !step.is_finite() || !start.is_finite() || !end.is_finite() {
        return Err(ErrorKind::InvalidArgument(format!(
            "arange: start, end and step must be finite and step non-zero (got {start}, {end}, {step})"
        )).into());
    }
    let n = ((end - start) / step).ceil();
    if n > isize::MAX as f64 {
        return Err(ErrorKind::ShapeOverflow(format!("arange of {n} elements")).into());
    }
    let len = if n > 0.0 { n as usize } else { 0 };
    let t = Tensor::for_overwrite(&[len], dtype)?;
    with_dtype!(dtype, T => {
        let mut out = t.dense_storage()?.write_as::<T>();
        for (i, o) in out.iter_mut().enumerate() {
            *o = T::from_f64(start + i as f64 * step);
        }
    });
    Ok(t)
}
