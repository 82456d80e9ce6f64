//! From index specs to a view's geometry (V1–V3): [`resolve`] computes dims, strides and offset
//! without touching the shape cache; [`apply`] interns the result as a [`Layout`].

use super::IndexSpec;
use crate::error::{ErrorKind, Result, TesseraError};
use crate::layout::Layout;
use crate::shape::{hash_key, DimVec, Shape, DIM_INLINE};

/// The geometry of a view before it is interned: dims, strides (in elements) and the element
/// offset of its first element. Produced by [`resolve`]; [`apply`] turns it into a [`Layout`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewGeometry {
    dims: DimVec<usize>,
    strides: DimVec<isize>,
    offset: usize,
}

impl ViewGeometry {
    /// Size of each dimension.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Stride of each dimension, in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Element offset of the first element in the storage.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The interned layout (a shape-cache lookup).
    pub fn to_layout(&self) -> Result<Layout> {
        Ok(Layout::new(
            Shape::new(&self.dims, &self.strides)?,
            self.offset,
        ))
    }
}

/// Bounds of one interval after NumPy clamping: (first position, length).
fn resolve_interval(
    d: usize,
    start: Option<isize>,
    end: Option<isize>,
    step: isize,
    inclusive: bool,
) -> Result<(isize, usize)> {
    if step == 0 {
        return Err(ErrorKind::InvalidArgument("interval step must not be zero".into()).into());
    }
    let d = d as isize;
    // Python's slice.indices, with DL4J's inclusive end applied after normalising negatives
    // and before clamping (so an inclusive end never wraps around or revives a bound that
    // lies outside the dim).
    let wrap = |x: isize| if x < 0 { x.saturating_add(d) } else { x };
    let (first, len) = if step > 0 {
        let s = start.map_or(0, |s| wrap(s).clamp(0, d));
        let e = end.map_or(d, |e| {
            wrap(e).saturating_add(inclusive as isize).clamp(0, d)
        });
        // A unit step (most slices) needs no division, whose latency is on the view's path.
        let len = match (e > s, step) {
            (false, _) => 0,
            (true, 1) => (e - s) as usize,
            (true, _) => ((e - s - 1) / step + 1) as usize,
        };
        (s, len)
    } else {
        let s = start.map_or(d - 1, |s| wrap(s).clamp(-1, d - 1));
        let e = end.map_or(-1, |e| {
            wrap(e).saturating_sub(inclusive as isize).clamp(-1, d - 1)
        });
        (
            s,
            if s > e {
                // `unsigned_abs`: `-step` overflows for `isize::MIN` (`t[::-(2**63)]`).
                (s - e - 1) as usize / step.unsigned_abs() + 1
            } else {
                0
            },
        )
    };
    Ok((first, len))
}

/// Applies index specs to a geometry (`dims`, `strides`, `offset`; V1–V3) without interning:
/// the view's geometry, or a typed error for an out-of-range point, a zero step, two ellipses
/// or too many indices. The input must be a valid geometry (one a [`Layout`] holds); every
/// view of it then is too.
///
/// ```
/// use tessera::idx;
/// use tessera::index::{resolve, Ellipsis, NewAxis};
/// let v = resolve(&[4, 5, 6], &[30, 6, 1], 0, &idx![1, Ellipsis, NewAxis, ..; -2]).unwrap();
/// assert_eq!(v.dims(), &[5, 1, 3]);
/// assert_eq!(v.strides(), &[6, 0, -2]);
/// assert_eq!(v.offset(), 30 + 5);
/// ```
pub fn resolve(
    dims: &[usize],
    strides: &[isize],
    offset: usize,
    specs: &[IndexSpec],
) -> Result<ViewGeometry> {
    let Counts {
        out_rank,
        ellipsis_len,
    } = count(dims.len(), specs)?;
    // Sized up front and written in place by position: no growth checks in the loop, no heap
    // for views of rank up to `DIM_INLINE`, and no copy of the arrays after they are written.
    let mut view = ViewGeometry {
        dims: zeroed(out_rank),
        strides: zeroed(out_rank),
        offset: 0,
    };
    view.offset = walk_specs(
        dims,
        strides,
        offset,
        specs,
        ellipsis_len,
        &mut view.dims,
        &mut view.strides,
    )?;
    Ok(view)
}

/// What the specs make of a tensor's rank.
struct Counts {
    /// Rank of the view.
    out_rank: usize,
    /// Number of dims an ellipsis (if any) stands for.
    ellipsis_len: usize,
}

/// The error for `n` dim-consuming indices on a tensor of `rank` < `n`.
fn too_many(rank: usize, n: usize) -> TesseraError {
    ErrorKind::Index(format!("too many indices: tensor of rank {rank} indexed with {n}").into())
        .into()
}

/// Checks the spec list against the rank: at most one ellipsis, no more dim-consuming specs
/// than dims.
#[inline]
fn count(rank: usize, specs: &[IndexSpec]) -> Result<Counts> {
    let (mut consumed, mut points, mut new_axes, mut ellipses) = (0, 0, 0, 0);
    for spec in specs {
        match spec {
            IndexSpec::Point(_) => {
                consumed += 1;
                points += 1;
            }
            IndexSpec::Interval { .. } | IndexSpec::All => consumed += 1,
            IndexSpec::NewAxis => new_axes += 1,
            IndexSpec::Ellipsis => ellipses += 1,
        }
    }
    if ellipses > 1 {
        return Err(ErrorKind::Index("an index can only have a single ellipsis".into()).into());
    }
    if consumed > rank {
        return Err(too_many(rank, consumed));
    }
    Ok(Counts {
        out_rank: rank - points + new_axes,
        ellipsis_len: rank - consumed,
    })
}

/// `len` zeros, inline when they fit.
#[inline(always)]
fn zeroed<T: Copy + Default>(len: usize) -> DimVec<T> {
    if len <= DIM_INLINE {
        DimVec::from_buf_and_len([T::default(); DIM_INLINE], len)
    } else {
        DimVec::from_elem(T::default(), len)
    }
}

/// The position of index `i` (negative: from the end) on `axis` of size `d`, or the
/// out-of-bounds error.
fn point(i: isize, axis: usize, d: usize) -> Result<isize> {
    let d = d as isize;
    let p = if i < 0 { i + d } else { i };
    if !(0..d).contains(&p) {
        return Err(ErrorKind::Index(
            format!("index {i} is out of bounds for axis {axis} with size {d}").into(),
        )
        .into());
    }
    Ok(p)
}

/// Writes the view's dims and strides (slices of the output rank) and returns its offset.
/// `ellipsis_len` is the number of dims the ellipsis (if any) stands for.
fn walk_specs(
    dims: &[usize],
    strides: &[isize],
    offset: usize,
    specs: &[IndexSpec],
    ellipsis_len: usize,
    out_dims: &mut [usize],
    out_strides: &mut [isize],
) -> Result<usize> {
    let mut offset = offset as isize;
    let (mut axis, mut j) = (0, 0);
    for spec in specs {
        match *spec {
            IndexSpec::Point(i) => {
                offset += point(i, axis, dims[axis])? * strides[axis];
                axis += 1;
            }
            IndexSpec::Interval {
                start,
                end,
                step,
                inclusive,
            } => {
                let s = strides[axis];
                let (first, len) = resolve_interval(dims[axis], start, end, step, inclusive)?;
                if len > 0 {
                    offset += first * s;
                }
                out_dims[j] = len;
                // With at most one element the stride is never used; avoid overflow there.
                out_strides[j] = if len > 1 { s * step } else { s };
                axis += 1;
                j += 1;
            }
            IndexSpec::All => {
                out_dims[j] = dims[axis];
                out_strides[j] = strides[axis];
                axis += 1;
                j += 1;
            }
            IndexSpec::NewAxis => {
                out_dims[j] = 1;
                out_strides[j] = 0;
                j += 1;
            }
            IndexSpec::Ellipsis => {
                for _ in 0..ellipsis_len {
                    out_dims[j] = dims[axis];
                    out_strides[j] = strides[axis];
                    axis += 1;
                    j += 1;
                }
            }
        }
    }
    // Dims not named by any spec are kept whole. (Element loops, not `copy_from_slice`: these
    // are a few elements, where a `memcpy` call costs more than the copy.)
    for (k, a) in (axis..dims.len()).enumerate() {
        out_dims[j + k] = dims[a];
        out_strides[j + k] = strides[a];
    }
    Ok(offset as usize)
}

/// Applies index specs to a layout (V1–V3): [`resolve`], then the interned layout. The last
/// successful (geometry, specs) of each thread is remembered by value, so repeating it skips
/// the walk and goes straight to the shape cache.
///
/// ```
/// use tessera::{idx, Layout};
/// use tessera::index::{apply, Ellipsis, NewAxis};
/// let l = Layout::contiguous(&[4, 5, 6]).unwrap();
/// let v = apply(&l, &idx![1, Ellipsis, NewAxis, ..; -2]).unwrap();
/// assert_eq!(v.dims(), &[5, 1, 3]);
/// assert_eq!(v.strides()[2], -2);
/// assert_eq!(v.offset(), 30 + 5);
/// ```
#[inline]
pub fn apply(layout: &Layout, specs: &[IndexSpec]) -> Result<Layout> {
    if let Some(view) = leading_points(layout, specs)? {
        return Ok(view);
    }
    let (dims, strides, base) = (layout.dims(), layout.strides(), layout.offset());
    // No memo of the last key: the walk below costs less than checking one (measured: a
    // per-thread memo of the last (geometry, specs) made hits and misses both slower).
    let Counts {
        out_rank,
        ellipsis_len,
    } = count(dims.len(), specs)?;
    let (mut d, mut s) = (zeroed(out_rank), zeroed(out_rank));
    let offset = walk_specs(dims, strides, base, specs, ellipsis_len, &mut d, &mut s)?;
    // Interned straight from the buffers the walk wrote: no intermediate geometry to copy.
    let shape = Shape::new_hashed(hash_key(&d, &s), &d, &s)?;
    Ok(Layout::new(shape, offset))
}

/// `t[i]`, `t[i, j]`, ...: points on leading dims, then nothing but `:` and at most one
/// `...` (`t[1, 2, ...]`, `t[i, :]`), which select whole dims. The view's shape is the base's
/// without the pointed dims, which each descriptor keeps ([`Shape::tail`]), so only the
/// offset is computed: no walk, no hash, no cache lookup. `None` for any other key (and for
/// a key with too many indices, whose error the general path gives).
fn leading_points(layout: &Layout, specs: &[IndexSpec]) -> Result<Option<Layout>> {
    let points = specs
        .iter()
        .take_while(|s| matches!(s, IndexSpec::Point(_)))
        .count();
    if points == 0 {
        return Ok(None);
    }
    let rest = &specs[points..];
    let ellipses = rest
        .iter()
        .filter(|s| matches!(s, IndexSpec::Ellipsis))
        .count();
    let whole = |s: &IndexSpec| matches!(s, IndexSpec::All | IndexSpec::Ellipsis);
    if ellipses > 1 || !rest.iter().all(whole) {
        return Ok(None);
    }
    if points + rest.len() - ellipses > layout.rank() {
        return Ok(None);
    }
    let leading = specs[..points].iter().filter_map(|s| match *s {
        IndexSpec::Point(i) => Some(i),
        _ => None,
    });
    select_leading(layout, leading).map(Some)
}

/// `t[i0, i1, ...]`: the view at `points` on the leading dims (negative counting from the
/// end), with the base's shape without those dims (each descriptor keeps its tail,
/// [`Shape::tail`]), so only the offset is computed. Errors: `Index` for a point out of range
/// or more points than dims.
///
/// ```
/// use tessera::index::points;
/// use tessera::Layout;
/// let l = Layout::contiguous(&[3, 4, 5]).unwrap();
/// let v = points(&l, &[2, -1]).unwrap();
/// assert_eq!((v.dims(), v.offset()), (&[5][..], 2 * 20 + 3 * 5));
/// assert!(points(&l, &[3]).is_err());
/// assert!(points(&l, &[0, 0, 0, 0]).is_err());
/// ```
#[inline]
pub fn points(layout: &Layout, points: &[isize]) -> Result<Layout> {
    if points.len() > layout.rank() {
        return Err(too_many(layout.rank(), points.len()));
    }
    select_leading(layout, points.iter().copied())
}

/// [`points`] for at most `layout.rank()` points (the callers check: `dims[axis]` is read
/// before the tail).
#[inline(always)]
fn select_leading(layout: &Layout, points: impl Iterator<Item = isize>) -> Result<Layout> {
    let (dims, strides) = (layout.dims(), layout.strides());
    let mut offset = layout.offset() as isize;
    let mut shape = layout.shape();
    for (axis, i) in points.enumerate() {
        offset += point(i, axis, dims[axis])? * strides[axis];
        shape = shape
            .tail()?
            .ok_or_else(|| too_many(dims.len(), axis + 1))?;
    }
    Ok(Layout::new(shape.clone(), offset as usize))
}
