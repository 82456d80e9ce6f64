//! Typed `Tensor` methods of the Array API's sorting, searching, set, cumulative and joining
//! functions, each run through its registry op (so differentiable where the op has a rule).
//! A dense tensor that records no gradient goes straight to the op's dense kernel for the
//! cheap per-call ones (sort, argsort, argmax, argmin, the cumulative functions), as the
//! elementwise methods do: the registry's dispatch is a name lookup and an output vector
//! per call, which shows on small inputs. Semantics: `crate::arrayfns` and docs/design.md
//! section A.

use std::slice;

use super::{call1, single};
use crate::arrayfns::cumulative::Accumulate;
use crate::arrayfns::UniqueAll;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::defs::{
    ArgExtremeParams, ConcatParams, CumulativeParams, IsinParams, NoParams, RepeatInterleaveParams,
    SearchParams, Side, SortParams, StackParams,
};
use crate::ops::dispatch::plain_dense;
use crate::ops::registry::registry;
use crate::tensor::Tensor;

impl Tensor {
    /// A sorted copy along `axis` (NumPy's order: NaNs last; first when `descending`).
    /// `stable` keeps equal elements (signed zeros, NaNs) in their input order.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[3.0f64, f64::NAN, -1.0, 2.0], &[4]).unwrap();
    /// let s = t.sort(-1, false, true).unwrap().to_vec::<f64>().unwrap();
    /// assert_eq!(&s[..3], &[-1.0, 2.0, 3.0]);
    /// assert!(s[3].is_nan());
    /// ```
    pub fn sort(&self, axis: isize, descending: bool, stable: bool) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.sort_dense(axis, descending, stable);
        }
        let p = SortParams {
            axis,
            descending,
            stable,
        };
        call1("sort", &p, slice::from_ref(self))
    }

    /// The int64 indices that sort along `axis` (always stable, so equal elements keep their
    /// input order in both directions).
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[2i32, 1, 2, 0], &[4]).unwrap();
    /// assert_eq!(t.argsort(0, false).unwrap().to_vec::<i64>().unwrap(), vec![3, 1, 0, 2]);
    /// assert_eq!(t.argsort(0, true).unwrap().to_vec::<i64>().unwrap(), vec![0, 2, 1, 3]);
    /// ```
    pub fn argsort(&self, axis: isize, descending: bool) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.argsort_dense(axis, descending);
        }
        let p = SortParams {
            axis,
            descending,
            stable: true,
        };
        call1("argsort", &p, slice::from_ref(self))
    }

    /// The int64 index of the first maximum along `axis` (of the flattened tensor when
    /// `None`); the first NaN if there is one. An empty axis is an error.
    pub fn argmax(&self, axis: Option<isize>, keepdims: bool) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.arg_extreme_dense(axis, keepdims, true);
        }
        call1(
            "argmax",
            &ArgExtremeParams { axis, keepdims },
            slice::from_ref(self),
        )
    }

    /// The int64 index of the first minimum along `axis` (as [`Tensor::argmax`]).
    pub fn argmin(&self, axis: Option<isize>, keepdims: bool) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.arg_extreme_dense(axis, keepdims, false);
        }
        call1(
            "argmin",
            &ArgExtremeParams { axis, keepdims },
            slice::from_ref(self),
        )
    }

    /// `x1` where `condition` is true (non-zero), else `x2`, broadcast together; `x1` and `x2`
    /// promote to their result type.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let c = Tensor::from_slice(&[true, false], &[2]).unwrap();
    /// let a = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
    /// let b = Tensor::scalar(0.5f64, tessera::DType::F64).unwrap();
    /// assert_eq!(Tensor::where_(&c, &a, &b).unwrap().to_vec::<f64>().unwrap(), vec![1.0, 0.5]);
    /// ```
    pub fn where_(condition: &Tensor, x1: &Tensor, x2: &Tensor) -> Result<Tensor> {
        call1(
            "where",
            &NoParams {},
            &[condition.clone(), x1.clone(), x2.clone()],
        )
    }

    /// The running sum along `axis` (`None` only for 1-d), in `dtype` (default: int64 for
    /// bool and integers, else the input's); `include_initial` starts with 0.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    /// let c = t.cumulative_sum(None, None, true).unwrap();
    /// assert_eq!(c.to_vec::<i64>().unwrap(), vec![0, 1, 3, 6]);
    /// ```
    pub fn cumulative_sum(
        &self,
        axis: Option<isize>,
        dtype: Option<DType>,
        include_initial: bool,
    ) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.cumulative_dense(Accumulate::Sum, axis, dtype, include_initial);
        }
        let p = CumulativeParams {
            axis,
            dtype,
            include_initial,
        };
        call1("cumulative_sum", &p, slice::from_ref(self))
    }

    /// The running product along `axis` (as [`Tensor::cumulative_sum`]; the initial is 1).
    pub fn cumulative_prod(
        &self,
        axis: Option<isize>,
        dtype: Option<DType>,
        include_initial: bool,
    ) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.cumulative_dense(Accumulate::Prod, axis, dtype, include_initial);
        }
        let p = CumulativeParams {
            axis,
            dtype,
            include_initial,
        };
        call1("cumulative_prod", &p, slice::from_ref(self))
    }

    /// The distinct elements of the flattened tensor, sorted (every NaN distinct).
    pub fn unique_values(&self) -> Result<Tensor> {
        call1("unique_values", &NoParams {}, slice::from_ref(self))
    }

    /// The distinct elements with their first indices, inverse indices and counts.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[3i64, 1, 3, 2], &[2, 2]).unwrap();
    /// let u = t.unique_all().unwrap();
    /// assert_eq!(u.values.to_vec::<i64>().unwrap(), vec![1, 2, 3]);
    /// assert_eq!(u.indices.to_vec::<i64>().unwrap(), vec![1, 3, 0]);
    /// assert_eq!(u.inverse_indices.shape(), &[2, 2]);
    /// assert_eq!(u.inverse_indices.to_vec::<i64>().unwrap(), vec![2, 0, 2, 1]);
    /// assert_eq!(u.counts.to_vec::<i64>().unwrap(), vec![1, 1, 2]);
    /// ```
    pub fn unique_all(&self) -> Result<UniqueAll> {
        let out = registry()
            .def::<NoParams>("unique_all")?
            .call(&NoParams {}, slice::from_ref(self))?;
        let [values, indices, inverse_indices, counts]: [Tensor; 4] =
            out.try_into().map_err(|_| {
                crate::ErrorKind::InvalidArgument(
                    "unique_all returned the wrong number of outputs".into(),
                )
            })?;
        Ok(UniqueAll {
            values,
            indices,
            inverse_indices,
            counts,
        })
    }

    /// `xs` joined along `axis` (flattened first when `None`); dtypes promote.
    pub fn concat(xs: &[Tensor], axis: Option<isize>) -> Result<Tensor> {
        single(
            registry()
                .def::<ConcatParams>("concat")?
                .call(&ConcatParams { axis }, xs)?,
        )
    }

    /// `xs` (one shape) joined along a new axis at `axis`; dtypes promote.
    pub fn stack(xs: &[Tensor], axis: isize) -> Result<Tensor> {
        single(
            registry()
                .def::<StackParams>("stack")?
                .call(&StackParams { axis }, xs)?,
        )
    }

    /// NumPy's `repeat`: each element repeated `repeats` times along `axis` (of the
    /// flattened tensor when `None`); `repeats` is a 0-d or 1-d integer tensor (one count, or
    /// one per element). (`Tensor::repeat` is PyTorch's tiling repeat.)
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    /// let r = Tensor::from_slice(&[2i64, 0, 1], &[3]).unwrap();
    /// assert_eq!(t.repeat_interleave(&r, None).unwrap().to_vec::<i32>().unwrap(), vec![1, 1, 3]);
    /// ```
    pub fn repeat_interleave(&self, repeats: &Tensor, axis: Option<isize>) -> Result<Tensor> {
        call1(
            "repeat_interleave",
            &RepeatInterleaveParams { axis },
            &[self.clone(), repeats.clone()],
        )
    }

    /// The int64 coordinates `[count, rank]` of the non-zero elements (NaN is non-zero), in
    /// row-major order (NumPy's `argwhere`; `nonzero` is its columns). 0-d is an error.
    pub fn argwhere(&self) -> Result<Tensor> {
        call1("argwhere", &NoParams {}, slice::from_ref(self))
    }

    /// The int64 insertion points of `x2`'s elements into this sorted 1-d tensor (read
    /// through the permutation `sorter` when given), before equal elements or after them
    /// (`right`). NaN sorts last.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let s = Tensor::from_slice(&[1.0f64, 2.0, 2.0, 3.0], &[4]).unwrap();
    /// let v = Tensor::from_slice(&[2.0f64, 9.0], &[2]).unwrap();
    /// assert_eq!(s.searchsorted(&v, false, None).unwrap().to_vec::<i64>().unwrap(), vec![1, 4]);
    /// assert_eq!(s.searchsorted(&v, true, None).unwrap().to_vec::<i64>().unwrap(), vec![3, 4]);
    /// ```
    pub fn searchsorted(
        &self,
        x2: &Tensor,
        right: bool,
        sorter: Option<&Tensor>,
    ) -> Result<Tensor> {
        let none = Tensor::zeros(&[0], crate::DType::I64)?;
        let p = SearchParams {
            side: if right { Side::Right } else { Side::Left },
        };
        call1(
            "searchsorted",
            &p,
            &[self.clone(), x2.clone(), sorter.unwrap_or(&none).clone()],
        )
    }

    /// Whether each element equals some element of `test` (NumPy `isin`; the standard's
    /// `isin(x1, x2, invert=...)`): bool, `self`'s shape, compared in the promoted dtype. NaN
    /// is in no set; `invert` negates.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let x = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2]).unwrap();
    /// let s = Tensor::from_slice(&[4.0f64, 2.0, f64::NAN], &[3]).unwrap();
    /// assert_eq!(x.isin(&s, false).unwrap().to_vec::<bool>().unwrap(), vec![false, true, false, true]);
    /// assert_eq!(x.isin(&s, true).unwrap().to_vec::<bool>().unwrap(), vec![true, false, true, false]);
    /// ```
    pub fn isin(&self, test: &Tensor, invert: bool) -> Result<Tensor> {
        call1(
            "isin",
            &IsinParams { invert },
            &[self.clone(), test.clone()],
        )
    }
}
