//! The Array API's manipulation functions built from registry ops (views where the standard
//! allows, copies through `concat` and `where` otherwise; each differentiable where its
//! pieces are): `moveaxis`, `unstack`, `broadcast_arrays`, `roll`, `diff`, `tril`, `triu`,
//! `meshgrid`. Rules: docs/design.md A9.

use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::layout::{broadcast_shapes, normalize_axes, normalize_axis};
use crate::tensor::arith::CompareOp;
use crate::tensor::Tensor;

impl Tensor {
    /// A view with the axes `source` moved to positions `destination` (the others keep their
    /// order).
    pub fn moveaxis(&self, source: &[isize], destination: &[isize]) -> Result<Tensor> {
        let rank = self.rank();
        let src = normalize_axes(source, rank)?;
        let dst = normalize_axes(destination, rank)?;
        if src.len() != dst.len() {
            return Err(ErrorKind::InvalidArgument(format!(
                "moveaxis: {} source axes but {} destinations",
                src.len(),
                dst.len()
            ))
            .into());
        }
        let mut rest = (0..rank).filter(|d| !src.contains(d));
        let mut order = vec![0isize; rank];
        for (pos, slot) in order.iter_mut().enumerate() {
            *slot = match dst.iter().position(|&d| d == pos) {
                Some(k) => src[k] as isize,
                None => rest.next().unwrap_or(0) as isize,
            };
        }
        self.permute(&order)
    }

    /// The slices along `axis`, each without that axis (views).
    pub fn unstack(&self, axis: isize) -> Result<Vec<Tensor>> {
        let a = normalize_axis(axis, self.rank())?;
        (0..self.shape()[a])
            .map(|i| self.narrow(a as isize, i, 1)?.squeeze(Some(&[a as isize])))
            .collect()
    }

    /// `xs` broadcast to their common shape (stride-0 views).
    pub fn broadcast_arrays(xs: &[Tensor]) -> Result<Vec<Tensor>> {
        let mut dims: Vec<usize> = Vec::new();
        for x in xs {
            dims = broadcast_shapes(&dims, x.shape())?;
        }
        xs.iter().map(|x| x.broadcast_to(&dims)).collect()
    }

    /// A copy with the elements shifted by `shift` along `axes` (wrapping round); with no
    /// axes the flattened tensor is rolled and the shape restored. One shift applies to every
    /// axis; else there is one per axis.
    pub fn roll(&self, shift: &[isize], axes: Option<&[isize]>) -> Result<Tensor> {
        let Some(axes) = axes else {
            let dims: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
            return self.reshape(&[-1])?.roll(shift, Some(&[0]))?.reshape(&dims);
        };
        let shifts: Vec<isize> = match shift.len() {
            1 => vec![shift[0]; axes.len()],
            n if n == axes.len() => shift.to_vec(),
            n => {
                return Err(ErrorKind::InvalidArgument(format!(
                    "roll: {n} shifts for {} axes",
                    axes.len()
                ))
                .into())
            }
        };
        let mut out = self.copy()?;
        for (&s, &a) in shifts.iter().zip(axes) {
            let a = normalize_axis(a, self.rank())?;
            let n = self.shape()[a] as isize;
            let s = if n == 0 { 0 } else { s.rem_euclid(n) } as usize;
            if s == 0 {
                continue;
            }
            let n = n as usize;
            let ax = a as isize;
            out = Tensor::concat(
                &[out.narrow(ax, n - s, s)?, out.narrow(ax, 0, n - s)?],
                Some(ax),
            )?;
        }
        Ok(out)
    }

    /// The `n`-th forward difference along `axis`, after joining `prepend` before and
    /// `append` after (bool uses `!=`, as NumPy). The axis shrinks by `n` (to no less than 0).
    pub fn diff(
        &self,
        axis: isize,
        n: usize,
        prepend: Option<&Tensor>,
        append: Option<&Tensor>,
    ) -> Result<Tensor> {
        let a = normalize_axis(axis, self.rank())? as isize;
        let mut x = match (prepend, append) {
            (None, None) => self.clone(),
            _ => {
                let parts: Vec<Tensor> = prepend
                    .into_iter()
                    .chain([self])
                    .chain(append)
                    .cloned()
                    .collect();
                Tensor::concat(&parts, Some(a))?
            }
        };
        for _ in 0..n {
            let len = x.shape()[a as usize];
            if len == 0 {
                break;
            }
            let (hi, lo) = (x.narrow(a, 1, len - 1)?, x.narrow(a, 0, len - 1)?);
            x = if x.dtype() == DType::Bool {
                hi.ne(&lo)?
            } else {
                hi.sub(&lo)?
            };
        }
        Ok(x)
    }

    /// The lower triangle of the last two dims: elements with `col - row <= k`, others zero.
    pub fn tril(&self, k: i64) -> Result<Tensor> {
        self.triangle(k, true)
    }

    /// The upper triangle of the last two dims: elements with `col - row >= k`, others zero.
    pub fn triu(&self, k: i64) -> Result<Tensor> {
        self.triangle(k, false)
    }

    fn triangle(&self, k: i64, lower: bool) -> Result<Tensor> {
        let r = self.rank();
        if r < 2 {
            return Err(ErrorKind::InvalidArgument(format!(
                "{} needs at least 2 dims, got {r}",
                if lower { "tril" } else { "triu" }
            ))
            .into());
        }
        let (rows, cols) = (self.shape()[r - 2] as i64, self.shape()[r - 1] as i64);
        let i = Tensor::arange(0, rows, 1, DType::I64)?.reshape(&[rows as isize, 1])?;
        let j = Tensor::arange(0, cols, 1, DType::I64)?;
        // col - row <= k  <=>  col <= row + k; k clamped to where it stops mattering, so
        // that row + k cannot wrap.
        let bound = i.add_scalar(k.clamp(-(rows + 1), cols + 1))?;
        let keep = j.compare(&bound, if lower { CompareOp::Le } else { CompareOp::Ge })?;
        let zero = Tensor::zeros(&[], self.dtype())?;
        Tensor::where_(&keep, self, &zero)
    }

    /// Coordinate grids of the 1-d `xs`: `indexing` "xy" (Cartesian: the first two output
    /// dims swapped) or "ij" (matrix). Each output is a contiguous copy.
    pub fn meshgrid(xs: &[Tensor], indexing: &str) -> Result<Vec<Tensor>> {
        let xy = match indexing {
            "xy" => true,
            "ij" => false,
            other => {
                return Err(ErrorKind::InvalidArgument(format!(
                    "meshgrid: indexing must be \"xy\" or \"ij\", got {other:?}"
                ))
                .into())
            }
        };
        if let Some(x) = xs.iter().find(|x| x.rank() != 1) {
            return Err(ErrorKind::InvalidArgument(format!(
                "meshgrid takes 1-d tensors, got shape {:?}",
                x.shape()
            ))
            .into());
        }
        let n = xs.len();
        let mut dims: Vec<usize> = xs.iter().map(|x| x.shape()[0]).collect();
        let swap = xy && n >= 2;
        if swap {
            dims.swap(0, 1);
        }
        xs.iter()
            .enumerate()
            .map(|(k, x)| {
                let pos = match (swap, k) {
                    (true, 0) => 1,
                    (true, 1) => 0,
                    _ => k,
                };
                let mut shape = vec![1isize; n];
                shape[pos] = -1;
                x.reshape(&shape)?.broadcast_to(&dims)?.copy()
            })
            .collect()
    }
}
