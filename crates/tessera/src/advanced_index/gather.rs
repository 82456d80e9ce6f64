//! The gather behind advanced indexing and its two inverses (docs/design.md X1-X5):
//! [`gather`] reads `view[..., idx_0[b], ..., idx_k[b], ...]` into a new contiguous tensor,
//! [`scatter`] writes values there (last write wins for repeated indices) and [`scatter_add`]
//! accumulates (the gradient: repeated indices sum).
//!
//! The output is walked as rows: a row is one (pre-dims position, broadcast index position)
//! pair and holds the `post` dims (the view dims after the indexed ones). A row whose source is
//! contiguous is one slice copy, so gathering rows of a 2-D array is a memcpy per row; rows are
//! split across rayon's pool above [`PARALLEL_BYTES`].

use rayon::prelude::*;

use crate::dtype::Element;
use crate::error::{ErrorKind, IndexFacts, Result};
use crate::kernels::parallel;
use crate::storage::try_with_capacity;
use crate::tensor::Tensor;
use crate::with_dtype;

/// Output size (bytes) above which a gather splits its rows across threads. An estimate, not
/// a measurement yet: below a few hundred KiB the pool's wake-up costs about what the copy
/// does (measuring the cut-over is issue 19's thread item).
pub(crate) const PARALLEL_BYTES: usize = 1 << 18;

/// Where each output row reads: the output shape, the source offset of every row, and the
/// offsets of the elements inside a row (`None` when a row is contiguous in the source).
pub(crate) struct Rows {
    pub out_dims: Vec<usize>,
    row_base: Vec<isize>,
    row_len: usize,
    inner: Option<Vec<isize>>,
}

/// Every offset of a strided walk over `dims` in row-major order.
fn offsets(dims: &[usize], strides: &[isize]) -> Result<Vec<isize>> {
    let n: usize = dims.iter().product();
    let mut out = try_with_capacity::<isize>(n)?;
    let mut coord = vec![0usize; dims.len()];
    let mut off = 0isize;
    for _ in 0..n {
        out.push(off);
        for j in (0..dims.len()).rev() {
            coord[j] += 1;
            off += strides[j];
            if coord[j] < dims[j] {
                break;
            }
            off -= strides[j] * dims[j] as isize;
            coord[j] = 0;
        }
    }
    Ok(out)
}

impl Rows {
    /// Plans the rows of gathering `view` (its dims, strides, offset) at `indices`
    /// (int64 `[axes.len(), *B]`) along `axes` (distinct increasing view dims).
    pub(crate) fn new(
        view: &Tensor,
        axes: &[isize],
        indices: &Tensor,
        front: bool,
    ) -> Result<Rows> {
        let (dims, strides) = (view.shape(), view.strides());
        let axes = check_axes(axes, dims.len(), indices.shape())?;
        let b = &indices.shape()[1..];
        let nb: usize = b.iter().product();
        if !indices.dtype().is_integer() {
            return Err(ErrorKind::InvalidArgument(format!(
                "index_gather: indices must be integers, got {}",
                indices.dtype()
            ))
            .into());
        }
        let idx: Vec<i64> = with_dtype!(indices.dtype(), T => {
            indices.to_vec::<T>()?.into_iter().map(Element::to_i64).collect()
        });
        let (pre, post) = split(dims.len(), &axes, front);
        let pick = |ds: &[usize]| -> (Vec<usize>, Vec<isize>) {
            (
                ds.iter().map(|&d| dims[d]).collect(),
                ds.iter().map(|&d| strides[d]).collect(),
            )
        };
        let (pre_dims, pre_strides) = pick(&pre);
        let (post_dims, post_strides) = pick(&post);
        let mut out_dims = pre_dims.clone();
        out_dims.extend_from_slice(b);
        out_dims.extend_from_slice(&post_dims);
        crate::shape::Shape::contiguous(&out_dims)?;
        let mut at = try_with_capacity::<isize>(nb)?;
        for j in 0..nb {
            let mut off = 0isize;
            for (a, &ax) in axes.iter().enumerate() {
                let i = idx[a * nb + j];
                let n = dims[ax] as i64;
                let w = if i < 0 { i + n } else { i };
                if !(0..n).contains(&w) {
                    return Err(ErrorKind::Index(IndexFacts::Other(format!(
                        "index {i} is out of bounds for axis {ax} with size {n}"
                    )))
                    .into());
                }
                off += w as isize * strides[ax];
            }
            at.push(off);
        }
        let pre_off = offsets(&pre_dims, &pre_strides)?;
        let base = view.layout.offset() as isize;
        let mut row_base = try_with_capacity::<isize>(pre_off.len() * nb)?;
        for &p in &pre_off {
            row_base.extend(at.iter().map(|&a| base + p + a));
        }
        let row_len: usize = post_dims.iter().product();
        let contiguous = crate::shape::Shape::contiguous(&post_dims)?;
        let dense = post_dims
            .iter()
            .zip(&post_strides)
            .zip(contiguous.strides())
            .all(|((&d, &s), &c)| d == 1 || s == c);
        let inner = if dense {
            None
        } else {
            Some(offsets(&post_dims, &post_strides)?)
        };
        Ok(Rows {
            out_dims,
            row_base,
            row_len,
            inner,
        })
    }

    /// Elements of the output.
    pub(crate) fn numel(&self) -> usize {
        self.row_base.len() * self.row_len
    }

    /// Copies row `r` of the source into `dst`.
    #[inline]
    fn read<T: Copy>(&self, r: usize, src: &[T], dst: &mut [T]) {
        let base = self.row_base[r];
        match &self.inner {
            None if dst.len() == 1 => dst[0] = src[base as usize],
            None => dst.copy_from_slice(&src[base as usize..base as usize + dst.len()]),
            Some(inner) => {
                for (d, &o) in dst.iter_mut().zip(inner) {
                    *d = src[(base + o) as usize];
                }
            }
        }
    }

    /// Calls `f(source position, k)` for the `k`-th element of the output, in order.
    fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        let mut k = 0;
        for &base in &self.row_base {
            for j in 0..self.row_len {
                let o = match &self.inner {
                    None => j as isize,
                    Some(inner) => inner[j],
                };
                f((base + o) as usize, k);
                k += 1;
            }
        }
    }
}

/// The view dims before and after the broadcast index dims: with adjacent `axes` the index
/// dims replace them in place, otherwise (or when `front`) they go first (NumPy).
fn split(rank: usize, axes: &[usize], front: bool) -> (Vec<usize>, Vec<usize>) {
    let adjacent = !front && axes.windows(2).all(|w| w[1] == w[0] + 1);
    let first = axes.first().copied().unwrap_or(0);
    let rest = (0..rank).filter(|d| !axes.contains(d));
    if adjacent {
        rest.partition(|&d| d < first)
    } else {
        (vec![], rest.collect())
    }
}

/// The gather's output shape for a view of `dims`, `axes` and indices of `indices` shape.
pub(crate) fn out_dims(
    dims: &[usize],
    axes: &[isize],
    indices: &[usize],
    front: bool,
) -> Result<Vec<usize>> {
    let axes = check_axes(axes, dims.len(), indices)?;
    let (pre, post) = split(dims.len(), &axes, front);
    let mut out: Vec<usize> = pre.iter().map(|&d| dims[d]).collect();
    out.extend_from_slice(&indices[1..]);
    out.extend(post.iter().map(|&d| dims[d]));
    Ok(out)
}

/// The axes as `usize`, checked against the view's rank and the indices' leading dim.
fn check_axes(axes: &[isize], rank: usize, indices: &[usize]) -> Result<Vec<usize>> {
    if indices.is_empty() || indices[0] != axes.len() {
        return Err(ErrorKind::InvalidArgument(format!(
            "index_gather: indices must have shape [{}, ...] (one row per axis), got {:?}",
            axes.len(),
            indices
        ))
        .into());
    }
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let u = usize::try_from(a)
            .ok()
            .filter(|&u| u < rank)
            .ok_or(ErrorKind::Index(IndexFacts::Axis { axis: a, rank }))?;
        if out.last().is_some_and(|&l| l >= u) {
            return Err(ErrorKind::InvalidArgument(format!(
                "index_gather: axes must be increasing, got {axes:?}"
            ))
            .into());
        }
        out.push(u);
    }
    Ok(out)
}

/// A new contiguous tensor: `view` gathered at `indices` along `axes` (see [`Rows::new`]).
pub(crate) fn gather(
    view: &Tensor,
    axes: &[isize],
    indices: &Tensor,
    front: bool,
) -> Result<Tensor> {
    let rows = Rows::new(view, axes, indices, front)?;
    let out = Tensor::for_overwrite(&rows.out_dims, view.dtype())?;
    if rows.numel() == 0 {
        return Ok(out);
    }
    with_dtype!(view.dtype(), T => {
        let src = view.dense_storage()?.read_as::<T>();
        let mut dst = out.dense_storage()?.write_as::<T>();
        fill_rows(&rows, &src, &mut dst);
    });
    Ok(out)
}

fn fill_rows<T: Element>(rows: &Rows, src: &[T], dst: &mut [T]) {
    let len = rows.row_len;
    let bytes = rows.numel() * std::mem::size_of::<T>();
    if bytes >= PARALLEL_BYTES && parallel::enabled() {
        // Chunks of whole rows, about 64 KiB each.
        let per = (1 << 16) / (len * std::mem::size_of::<T>()).max(1) + 1;
        dst.par_chunks_mut(per * len)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (i, row) in chunk.chunks_mut(len).enumerate() {
                    rows.read(c * per + i, src, row);
                }
            });
    } else {
        for (r, row) in dst.chunks_mut(len).enumerate() {
            rows.read(r, src, row);
        }
    }
}

/// Writes `values` (already broadcast to the gather's shape, row-major) into `view` at
/// `indices` along `axes`; repeated positions keep the last value written (NumPy).
pub(crate) fn scatter(
    view: &Tensor,
    axes: &[isize],
    indices: &Tensor,
    front: bool,
    values: &Tensor,
) -> Result<()> {
    let rows = Rows::new(view, axes, indices, front)?;
    let values = values.broadcast_to_dense(&rows.out_dims)?;
    with_dtype!(view.dtype(), T => {
        let v = values.to_vec::<T>()?;
        let mut dst = view.dense_storage()?.write_as::<T>();
        rows.for_each(|p, k| dst[p] = v[k]);
    });
    Ok(())
}

/// Adds `values` (the gather's shape) into `view` at `indices` along `axes`: repeated
/// positions accumulate (the gradient of [`gather`]).
pub(crate) fn scatter_add(
    view: &Tensor,
    axes: &[isize],
    indices: &Tensor,
    front: bool,
    values: &Tensor,
) -> Result<()> {
    let rows = Rows::new(view, axes, indices, front)?;
    let values = values.broadcast_to_dense(&rows.out_dims)?;
    with_dtype!(view.dtype(), T => {
        let v = values.to_vec::<T>()?;
        let mut dst = view.dense_storage()?.write_as::<T>();
        rows.for_each(|p, k| dst[p] = T::from_f64(dst[p].to_f64() + v[k].to_f64()));
    });
    Ok(())
}
