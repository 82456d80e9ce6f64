//! Products built on `matmul` (docs/design.md M2), as the Array API standard names them:
//! `matrix_transpose`, `vecdot` and `tensordot`. Each is views plus one `matmul`, so it runs
//! the same kernels (batched, strided, every dtype) and autograd differentiates it through
//! the ops it calls.

use crate::error::{ErrorKind, IndexFacts, Result};
use crate::tensor::Tensor;

/// `axis` of a rank-`rank` tensor as a position, or an `Index` error (NumPy's `AxisError`).
fn position(axis: isize, rank: usize) -> Result<usize> {
    let r = rank as isize;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(ErrorKind::Index(IndexFacts::Axis { axis, rank }).into())
    }
}

/// `t` with dim `from` moved to position `to` (the others keep their order): a view.
fn move_axis(t: &Tensor, from: usize, to: usize) -> Result<Tensor> {
    let mut order: Vec<isize> = (0..t.rank() as isize)
        .filter(|&d| d != from as isize)
        .collect();
    order.insert(to, from as isize);
    t.permute(&order)
}

impl Tensor {
    /// The transpose of each matrix in the last two dims (the standard's `matrix_transpose`,
    /// `x.mT`): a view. `InvalidShape` below rank 2.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[1i64, 2, 3, 4, 5, 6], &[1, 2, 3]).unwrap();
    /// let m = t.matrix_transpose().unwrap();
    /// assert_eq!(m.shape(), &[1, 3, 2]);
    /// assert_eq!(m.to_vec::<i64>().unwrap(), vec![1, 4, 2, 5, 3, 6]);
    /// ```
    pub fn matrix_transpose(&self) -> Result<Tensor> {
        if self.rank() < 2 {
            return Err(ErrorKind::InvalidShape(format!(
                "matrix_transpose needs rank 2 or more, got shape {:?}",
                self.shape()
            ))
            .into());
        }
        self.transpose(-1, -2)
    }

    /// The dot product of vectors along `axis` (the standard's `vecdot`):
    /// `sum(conj(self) * other, axis)` with the other dims broadcast, computed as a batched
    /// `[.., 1, k] @ [.., k, 1]` product. `axis` counts in the broadcast shape (negative from
    /// the end); both operands must have the same size there (`ShapeMismatch` otherwise).
    ///
    /// ```
    /// use tessera::Tensor;
    /// let a = Tensor::from_slice(&[1f64, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
    /// let b = Tensor::from_slice(&[1f64, 0., -1.], &[3]).unwrap();
    /// assert_eq!(a.vecdot(&b, -1).unwrap().to_vec::<f64>().unwrap(), vec![-2., -2.]);
    /// ```
    pub fn vecdot(&self, other: &Tensor, axis: isize) -> Result<Tensor> {
        let rank = self.rank().max(other.rank());
        let a = position(axis, rank)? as isize - rank as isize;
        let (ia, ib) = (position(a, self.rank())?, position(a, other.rank())?);
        if self.shape()[ia] != other.shape()[ib] {
            return Err(ErrorKind::ShapeMismatch(
                format!(
                    "vecdot: sizes {} and {} along axis {axis} of {:?} and {:?}",
                    self.shape()[ia],
                    other.shape()[ib],
                    self.shape(),
                    other.shape()
                )
                .into(),
            )
            .into());
        }
        // The standard's vecdot conjugates the first operand (a no-op for real dtypes).
        let conj = match self.dtype().is_complex() {
            true => self.conj()?,
            false => self.clone(),
        };
        let x = move_axis(&conj, ia, self.rank() - 1)?.unsqueeze(-2)?;
        let y = move_axis(other, ib, other.rank() - 1)?.unsqueeze(-1)?;
        x.matmul(&y)?.squeeze(Some(&[-1, -2]))
    }

    /// NumPy `tensordot`: sums the products over the dims `a_axes` of `self` and `b_axes` of
    /// `other` (paired in order, equal sizes); the result has `self`'s other dims, then
    /// `other`'s. Computed as one `matmul` of the operands permuted and reshaped to matrices
    /// (a copy only where the permuted operand is not contiguous). NumPy's integer form
    /// `axes=n` is `a_axes = [-n..-1]`, `b_axes = [0..n-1]`.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let a = Tensor::from_vec((0..24).map(f64::from).collect(), &[2, 3, 4]).unwrap();
    /// let b = Tensor::from_vec((0..12).map(f64::from).collect(), &[4, 3]).unwrap();
    /// let c = a.tensordot(&b, &[1, 2], &[1, 0]).unwrap();
    /// assert_eq!(c.shape(), &[2]);
    /// assert_eq!(c.to_vec::<f64>().unwrap(), vec![440., 1232.]); // np.tensordot(a, b, ([1, 2], [1, 0]))
    /// ```
    pub fn tensordot(&self, other: &Tensor, a_axes: &[isize], b_axes: &[isize]) -> Result<Tensor> {
        if a_axes.len() != b_axes.len() {
            return Err(ErrorKind::InvalidArgument(format!(
                "tensordot: {} axes of the lhs paired with {} of the rhs",
                a_axes.len(),
                b_axes.len()
            ))
            .into());
        }
        let resolve = |t: &Tensor, axes: &[isize]| -> Result<Vec<usize>> {
            let v: Vec<usize> = axes
                .iter()
                .map(|&a| position(a, t.rank()))
                .collect::<Result<_>>()?;
            let mut seen = v.clone();
            seen.sort_unstable();
            seen.dedup();
            if seen.len() != v.len() {
                return Err(ErrorKind::InvalidArgument(format!(
                    "tensordot: repeated axis in {axes:?}"
                ))
                .into());
            }
            Ok(v)
        };
        let (ca, cb) = (resolve(self, a_axes)?, resolve(other, b_axes)?);
        for (&x, &y) in ca.iter().zip(&cb) {
            if self.shape()[x] != other.shape()[y] {
                return Err(ErrorKind::ShapeMismatch(
                    format!(
                        "tensordot: axis {x} of {:?} and axis {y} of {:?} differ",
                        self.shape(),
                        other.shape()
                    )
                    .into(),
                )
                .into());
            }
        }
        let free = |t: &Tensor, c: &[usize]| -> Vec<usize> {
            (0..t.rank()).filter(|d| !c.contains(d)).collect()
        };
        let (fa, fb) = (free(self, &ca), free(other, &cb));
        let dims =
            |t: &Tensor, ds: &[usize]| -> Vec<usize> { ds.iter().map(|&d| t.shape()[d]).collect() };
        let size = |d: &[usize]| d.iter().product::<usize>() as isize;
        let order = |a: &[usize], b: &[usize]| -> Vec<isize> {
            a.iter().chain(b).map(|&d| d as isize).collect()
        };
        let (da, db, dk) = (dims(self, &fa), dims(other, &fb), dims(self, &ca));
        let lhs = self
            .permute(&order(&fa, &ca))?
            .reshape(&[size(&da), size(&dk)])?;
        let rhs = other
            .permute(&order(&cb, &fb))?
            .reshape(&[size(&dk), size(&db)])?;
        let out: Vec<isize> = da.iter().chain(&db).map(|&d| d as isize).collect();
        lhs.matmul(&rhs)?.reshape(&out)
    }
}
