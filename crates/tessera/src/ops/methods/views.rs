//! View, copy and repeat methods of `Tensor`, each run through its registry op (and so
//! recorded by autograd: a view of a tensor that requires a gradient requires one too); the
//! plain views go straight to their dense kernel when nothing is recorded ([`view1`]). The
//! layout rules are in `layout/` and `tensor/views.rs` (docs/design.md V1–V7).

use std::slice;

use super::call1;
use crate::autograd::wants_record;
use crate::error::Result;
use crate::index::{self, IndexSpec};
use crate::layout::DimList;
use crate::ops::defs::{
    AsStridedParams, AxesParams, CreateViewParams, ExpandParams, NarrowParams, NoParams,
    PermuteParams, RepeatParams, ReshapeParams, ShapeParams, UnsqueezeParams,
};
use crate::ops::dispatch::plain_dense;
use crate::ops::params::OpParams;
use crate::tensor::Tensor;

fn signed(v: &[usize]) -> Vec<isize> {
    v.iter().map(|&d| d as isize).collect()
}

/// Repetition counts as the op's signed parameter; a count past `isize::MAX` cannot give a
/// tensor (`ShapeOverflow`).
fn counts(op: &str, v: &[usize]) -> Result<Vec<isize>> {
    v.iter()
        .map(|&c| {
            isize::try_from(c).map_err(|_| {
                crate::ErrorKind::ShapeOverflow(format!("{op}: count {c} overflows")).into()
            })
        })
        .collect()
}

/// Runs the view op `name` on `x`: straight to its dense kernel `dense` when no gradient is
/// recorded, else through the registry (`call1`, the one recording point, docs/design.md G1).
/// A view op's storage-type rule always picks its dense kernel (`view_stype`), and the kernels
/// build their views with `Tensor::with_layout`, which starts without autograd state, as an
/// unrecorded registry call returns them; so both branches give the same tensor (a test
/// checks each view both ways). The direct one skips the registry lookup, the parameter
/// struct and the output list, which were half of a view's cost.
fn view1<P: OpParams>(
    name: &str,
    x: &Tensor,
    params: impl FnOnce() -> P,
    dense: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    if wants_record(slice::from_ref(x)) {
        call1(name, &params(), slice::from_ref(x))
    } else {
        dense(x)
    }
}

impl Tensor {
    /// A view with explicit `dims`, element `strides` (may be negative or zero) and storage
    /// `offset`, like `torch.as_strided`. Errors if any reachable element lies outside the
    /// storage.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(0, 6, 1, DType::I64).unwrap();
    /// let v = t.as_strided(&[2, 2], &[1, 2], 1).unwrap(); // [[1, 3], [2, 4]]
    /// assert_eq!(v.to_vec::<i64>().unwrap(), vec![1, 3, 2, 4]);
    /// assert!(t.as_strided(&[4], &[2], 0).is_err()); // would reach element 6
    /// ```
    pub fn as_strided(&self, dims: &[usize], strides: &[isize], offset: usize) -> Result<Tensor> {
        let p = AsStridedParams {
            shape: signed(dims),
            strides: strides.to_vec(),
            offset,
        };
        call1("as_strided", &p, slice::from_ref(self))
    }

    /// A zero-copy view of `len` positions from `start` along `axis` (PyTorch `narrow`; NumPy
    /// `t[..., start:start + len, ...]`). `axis` may be negative.
    ///
    /// Errors: `Index` for an axis out of range or `start + len` beyond the dim; a sparse
    /// tensor is an error (views are dense).
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(0, 12, 1, DType::I64).unwrap().view(&[3, 4]).unwrap();
    /// let v = t.narrow(-1, 1, 2).unwrap();
    /// assert_eq!(v.to_vec::<i64>().unwrap(), vec![1, 2, 5, 6, 9, 10]);
    /// assert!(v.shares_storage(&t));
    /// assert!(t.narrow(0, 2, 2).is_err());
    /// ```
    pub fn narrow(&self, axis: isize, start: usize, len: usize) -> Result<Tensor> {
        let p = || NarrowParams {
            axis,
            start,
            length: len,
        };
        view1("narrow", self, p, |x| x.narrow_dense(axis, start, len))
    }

    /// A view selected by index specs (CreateView, V1–V3): points drop dims, intervals slice
    /// (negative steps give negative strides), `NewAxis` inserts a dim, `Ellipsis` fills.
    ///
    /// ```
    /// use tessera::{idx, DType, Tensor};
    /// use tessera::index::NewAxis;
    /// let t = Tensor::arange(0, 12, 1, DType::I64).unwrap().view(&[3, 4]).unwrap();
    /// let v = t.index(&idx![1..; 1, ..; -2, NewAxis]).unwrap();
    /// assert_eq!(v.shape(), &[2, 2, 1]);
    /// assert_eq!(v.to_vec::<i64>().unwrap(), vec![7, 5, 11, 9]);
    /// assert!(v.shares_storage(&t));
    /// ```
    pub fn index(&self, specs: &[IndexSpec]) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.index_dense(specs);
        }
        let p = CreateViewParams {
            index: specs.to_vec(),
        };
        call1("create_view", &p, slice::from_ref(self))
    }

    /// `t[i0, i1, ...]`: the view at integer `points` on the leading dims (negative ones count
    /// from the end), [`Tensor::index`] with only [`IndexSpec::Point`]s, without building the
    /// specs; the shape comes from the base's descriptor, so only the offset is computed.
    ///
    /// Errors: `Index` for a point out of range or more points than dims.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(0, 24, 1, DType::I64).unwrap().view(&[2, 3, 4]).unwrap();
    /// let v = t.index_points(&[1, -1]).unwrap();
    /// assert_eq!(v.to_vec::<i64>().unwrap(), vec![20, 21, 22, 23]);
    /// assert!(v.shares_storage(&t));
    /// assert!(t.index_points(&[2]).is_err());
    /// ```
    #[inline]
    pub fn index_points(&self, points: &[isize]) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.with_layout(index::points(&self.layout, points)?);
        }
        let specs: DimList<IndexSpec> = points.iter().map(|&i| IndexSpec::Point(i)).collect();
        self.index(&specs)
    }

    /// CreateView from the INT64 encoding of index specs (V4, [`crate::index::encode`]).
    pub fn create_view(&self, encoded: &[i64]) -> Result<Tensor> {
        self.index(&index::decode(encoded)?)
    }

    /// PyTorch `expand` (E1): a stride-0 view; see [`crate::Layout::expand`].
    pub fn expand(&self, sizes: &[isize]) -> Result<Tensor> {
        let p = || ExpandParams {
            sizes: sizes.to_vec(),
        };
        view1("expand", self, p, |x| x.expand_dense(sizes))
    }

    /// NumPy `broadcast_to`: a read-only-in-spirit stride-0 view (writes into it error, V7).
    pub fn broadcast_to(&self, dims: &[usize]) -> Result<Tensor> {
        let p = ShapeParams {
            shape: signed(dims),
        };
        call1("broadcast_to", &p, slice::from_ref(self))
    }

    /// Reorders dims (NumPy `transpose(axes)`, PyTorch `permute`).
    pub fn permute(&self, axes: &[isize]) -> Result<Tensor> {
        let p = || PermuteParams {
            axes: axes.to_vec(),
        };
        view1("permute", self, p, |x| x.permute_dense(axes))
    }

    /// Swaps two dims.
    pub fn transpose(&self, a: isize, b: isize) -> Result<Tensor> {
        let rank = self.rank() as isize;
        let norm = |x: isize| if x < 0 { x + rank } else { x };
        if !(0..rank).contains(&norm(a)) || !(0..rank).contains(&norm(b)) {
            // The layout function gives the typed axis error (before `p` below, which
            // needs axes in range, could be asked for).
            return self.transpose_dense(a, b);
        }
        let p = || {
            let mut axes: Vec<isize> = (0..rank).collect();
            axes.swap(norm(a) as usize, norm(b) as usize);
            PermuteParams { axes }
        };
        view1("permute", self, p, |x| x.transpose_dense(a, b))
    }

    /// Reverses all dims (NumPy `.T`).
    pub fn t(&self) -> Result<Tensor> {
        let p = || PermuteParams {
            axes: (0..self.rank() as isize).rev().collect(),
        };
        view1("permute", self, p, |x| x.t_dense())
    }

    /// Removes size-1 dims (all, or the listed ones, which must have size 1).
    pub fn squeeze(&self, axes: Option<&[isize]>) -> Result<Tensor> {
        let p = || AxesParams {
            axis: axes.map(<[isize]>::to_vec),
        };
        view1("squeeze", self, p, |x| x.squeeze_dense(axes))
    }

    /// Inserts a size-1 dim at `axis`.
    pub fn unsqueeze(&self, axis: isize) -> Result<Tensor> {
        let p = || UnsqueezeParams { axis };
        view1("unsqueeze", self, p, |x| x.unsqueeze_dense(axis))
    }

    /// Reverses the listed dims (all for `None`): a zero-copy view with negative strides.
    pub fn flip(&self, axes: Option<&[isize]>) -> Result<Tensor> {
        let p = || AxesParams {
            axis: axes.map(<[isize]>::to_vec),
        };
        view1("flip", self, p, |x| x.flip_dense(axes))
    }

    /// Reshape that never copies (PyTorch `view`, V5): errors when the layout cannot express
    /// the new shape; `-1` infers one dim.
    pub fn view(&self, shape: &[isize]) -> Result<Tensor> {
        let p = || ShapeParams {
            shape: shape.to_vec(),
        };
        view1("view", self, p, |x| x.view_dense(shape))
    }

    /// Reshape (V5): a view when the chunk rule allows it, otherwise a contiguous copy;
    /// `-1` infers one dim. Check [`Tensor::shares_storage`] to know which happened.
    pub fn reshape(&self, shape: &[isize]) -> Result<Tensor> {
        let p = ReshapeParams {
            shape: shape.to_vec(),
        };
        call1("reshape", &p, slice::from_ref(self))
    }

    /// This tensor if it is C-contiguous (the same tensor, sharing storage and autograd
    /// state), else a contiguous copy.
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
    pub fn contiguous(&self) -> Result<Tensor> {
        self.storage()?;
        if self.is_contiguous() {
            Ok(self.clone())
        } else {
            self.copy()
        }
    }

    /// A new C-contiguous tensor holding a copy of the elements (never shares storage).
    pub fn copy(&self) -> Result<Tensor> {
        call1("copy", &NoParams {}, slice::from_ref(self))
    }

    /// PyTorch `repeat` (E2): a new contiguous tensor repeating the input `counts[i]` times
    /// along each dim; extra leading counts add dims. Errors when there are fewer counts than
    /// dims, or the size overflows.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
    /// let r = t.repeat(&[2, 2]).unwrap();
    /// assert_eq!(r.shape(), &[2, 4]);
    /// assert_eq!(r.to_vec::<i32>().unwrap(), vec![1, 2, 1, 2, 1, 2, 1, 2]);
    /// ```
    pub fn repeat(&self, counts: &[usize]) -> Result<Tensor> {
        let p = RepeatParams {
            reps: self::counts("repeat", counts)?,
        };
        call1("repeat", &p, slice::from_ref(self))
    }

    /// NumPy `tile` (E2): `reps` shorter than the rank is padded with 1s on the left; longer
    /// `reps` pad the shape with 1s on the left. Then [`Tensor::repeat`].
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(t.tile(&[2]).unwrap().to_vec::<i64>().unwrap(), vec![1, 2, 1, 2, 3, 4, 3, 4]);
    /// ```
    pub fn tile(&self, reps: &[usize]) -> Result<Tensor> {
        let p = RepeatParams {
            reps: counts("tile", reps)?,
        };
        call1("tile", &p, slice::from_ref(self))
    }
}
