//! Advanced indexing methods of `Tensor` (docs/design.md X1-X5): `get` and `set` with
//! keys mixing index specs, integer arrays and boolean masks (NumPy's rules), `take` and
//! `take_along_axis`. Reads run through the registry ops `create_view` (no arrays: a view),
//! `boolean_mask` and `index_gather` (copies).

use super::call1;
use crate::advanced_index::{self, gather, plan, Gather, IndexItem, Plan};
use crate::dtype::DType;
use crate::error::{ErrorKind, IndexFacts, Result};
use crate::index::IndexSpec;
use crate::ops::defs::{BooleanMaskParams, IndexGatherParams};
use crate::tensor::Tensor;

fn axis_of(axis: isize, rank: usize) -> Result<usize> {
    let r = rank as isize;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(ErrorKind::Index(IndexFacts::Axis { axis, rank }).into())
    }
}

impl Tensor {
    /// NumPy indexing `self[key]`: a key of only index specs gives a zero-copy view (as
    /// [`Tensor::index`]); a key with integer arrays or boolean masks gives a new tensor laid
    /// out as NumPy lays it out (the broadcast index dims replace adjacent indexed dims in
    /// place, or go first when a slice, new axis or ellipsis separates them; integer points
    /// count as index arrays then).
    ///
    /// Errors (`Index`): an index out of range (naming the axis and its size), a mask whose
    /// shape does not match the dims it covers, index arrays that do not broadcast together,
    /// too many indices, a float array.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// use tessera::index::IndexSpec;
    /// use tessera::IndexItem;
    /// let t = Tensor::arange(0, 12, 1, DType::I64).unwrap().view(&[3, 4]).unwrap();
    /// let rows = Tensor::from_slice(&[2i64, -3, 2], &[3]).unwrap();
    /// let g = t.get(&[IndexItem::Array(rows), IndexSpec::interval(1, 3).into()]).unwrap();
    /// assert_eq!(g.shape(), &[3, 2]);
    /// assert_eq!(g.to_vec::<i64>().unwrap(), vec![9, 10, 1, 2, 9, 10]);
    /// ```
    pub fn get(&self, key: &[IndexItem]) -> Result<Tensor> {
        match plan(self.shape(), key)? {
            Plan::Basic(specs) => self.index(&specs),
            Plan::Mask(m) => self.boolean_mask(&m),
            Plan::Gather(g) => self.index_gather(&g.specs, &g.axes, &g.indices, g.front),
        }
    }

    /// `self[mask]` for a bool `mask` over the leading dims: the selected rows, shape
    /// `[count, *self.shape[mask.rank..]]` (registry op `boolean_mask`).
    pub fn boolean_mask(&self, mask: &Tensor) -> Result<Tensor> {
        let p = BooleanMaskParams {
            count: advanced_index::mask::count(mask)?,
        };
        call1("boolean_mask", &p, &[self.clone(), mask.clone()])
    }

    /// The view `self.index(specs)` gathered at `indices` (shape `[axes.len(), *B]`) along
    /// its dims `axes` (registry op `index_gather`; see [`Tensor::get`] for the layout;
    /// `front` puts the index dims first even when `axes` are adjacent).
    pub fn index_gather(
        &self,
        specs: &[IndexSpec],
        axes: &[isize],
        indices: &Tensor,
        front: bool,
    ) -> Result<Tensor> {
        let p = IndexGatherParams {
            index: specs.to_vec(),
            axes: axes.to_vec(),
            front,
        };
        call1("index_gather", &p, &[self.clone(), indices.clone()])
    }

    /// NumPy `self[key] = values`: `values` (same dtype; cast before) broadcast to the shape
    /// `self.get(key)` would have is written into this tensor's storage. With repeated indices
    /// the last write wins (NumPy). A basic key writes through the view ([`Tensor::assign`]).
    ///
    /// Refused while grad mode is on and `self` or `values` requires a gradient (G4).
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// use tessera::IndexItem;
    /// let t = Tensor::zeros(&[4], DType::F32).unwrap();
    /// let i = Tensor::from_slice(&[3i64, 0, 3], &[3]).unwrap();
    /// t.set(&[IndexItem::Array(i)], &Tensor::from_slice(&[1f32, 2., 5.], &[3]).unwrap()).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![2., 0., 0., 5.]);
    /// ```
    pub fn set(&self, key: &[IndexItem], values: &Tensor) -> Result<()> {
        let g = match plan(self.shape(), key)? {
            Plan::Basic(specs) => return self.index(&specs)?.assign(values),
            Plan::Mask(m) => mask_as_gather(&m)?,
            Plan::Gather(g) => g,
        };
        self.check_inplace("setitem", &[values])?;
        if values.dtype() != self.dtype() {
            return Err(ErrorKind::DType(crate::error::DTypeFacts::Differ {
                op: "setitem".into(),
                what: "values",
                expected: self.dtype(),
                got: values.dtype(),
            })
            .into());
        }
        let view = self.index_dense(&g.specs)?;
        view.layout.check_writable()?;
        // The values are read into an owned buffer first: they may share this storage.
        gather::scatter(&view, &g.axes, &g.indices, g.front, values)
    }

    /// Array API `take(x, indices, /, *, axis=None)`: the entries of `indices` (any integer
    /// dtype and shape; negative entries count from the end) along `axis` (required unless the
    /// tensor is 1-D). The result has the shape `x.shape[:axis] + indices.shape +
    /// x.shape[axis+1:]`. An index out of range is an `Index` error.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(0, 6, 1, DType::I64).unwrap().view(&[2, 3]).unwrap();
    /// let i = Tensor::from_slice(&[2i64, 0], &[2]).unwrap();
    /// assert_eq!(t.take(&i, Some(1)).unwrap().to_vec::<i64>().unwrap(), vec![2, 0, 5, 3]);
    /// ```
    pub fn take(&self, indices: &Tensor, axis: Option<isize>) -> Result<Tensor> {
        let axis = match axis {
            Some(a) => axis_of(a, self.rank())?,
            None if self.rank() == 1 => 0,
            None => {
                return Err(ErrorKind::InvalidArgument(format!(
                    "take: axis is required for a tensor of rank {} (only 1-D may omit it)",
                    self.rank()
                ))
                .into())
            }
        };
        check_index_dtype("take", indices)?;
        let v = advanced_index::wrapped(indices, axis, self.shape()[axis])?;
        let mut shape = vec![1];
        shape.extend_from_slice(indices.shape());
        let idx = Tensor::from_vec(v, &shape)?;
        self.index_gather(&[], &[axis as isize], &idx, false)
    }

    /// Array API `take_along_axis(x, indices, /, axis=-1)`: `out[..., j, ...] =
    /// x[..., indices[..., j, ...], ...]` along `axis`; `indices` has this tensor's rank and
    /// broadcasts with it in the other dims (NumPy). Out of range is an `Index` error.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::from_slice(&[10i64, 30, 20, 5, 7, 6], &[2, 3]).unwrap();
    /// let i = Tensor::from_slice(&[0i64, 2, 1, 0, 2, 1], &[2, 3]).unwrap();
    /// let s = t.take_along_axis(&i, -1).unwrap();
    /// assert_eq!(s.to_vec::<i64>().unwrap(), vec![10, 20, 30, 5, 6, 7]);
    /// ```
    pub fn take_along_axis(&self, indices: &Tensor, axis: isize) -> Result<Tensor> {
        let rank = self.rank();
        let axis = axis_of(axis, rank)?;
        check_index_dtype("take_along_axis", indices)?;
        if indices.rank() != rank {
            return Err(ErrorKind::InvalidArgument(format!(
                "take_along_axis: indices must have the tensor's rank {rank}, got rank {}",
                indices.rank()
            ))
            .into());
        }
        let mut key = Vec::with_capacity(rank);
        for d in 0..rank {
            if d == axis {
                key.push(IndexItem::Array(indices.clone()));
            } else {
                // An arange along dim d, shaped to broadcast with the other dims.
                let mut shape = vec![1isize; rank];
                shape[d] = self.shape()[d] as isize;
                let r = Tensor::arange(0, self.shape()[d] as i64, 1, DType::I64)?.view(&shape)?;
                key.push(IndexItem::Array(r));
            }
        }
        match plan(self.shape(), &key)? {
            Plan::Gather(g) => self.index_gather(&g.specs, &g.axes, &g.indices, g.front),
            _ => unreachable!("every key item is an array"),
        }
    }
}

fn check_index_dtype(op: &str, indices: &Tensor) -> Result<()> {
    if indices.dtype().is_integer() {
        Ok(())
    } else {
        Err(ErrorKind::DType(crate::error::DTypeFacts::Other(format!(
            "{op}: indices must have an integer dtype, got {}",
            indices.dtype()
        )))
        .into())
    }
}

/// A leading-dims mask as a gather (for writes): its `nonzero` arrays.
fn mask_as_gather(m: &Tensor) -> Result<Gather> {
    let key = [
        IndexItem::Array(m.clone()),
        IndexItem::Spec(IndexSpec::Ellipsis),
    ];
    match plan(m.shape(), &key)? {
        Plan::Gather(g) => Ok(g),
        _ => unreachable!("a mask followed by an ellipsis is a gather"),
    }
}
