//! Pure view functions on layouts: expand, permute, transpose, squeeze, unsqueeze, flip,
//! narrow.
//! Each returns a new [`Layout`] over the same elements or a typed error (docs/design.md §1).

use smallvec::SmallVec;

use super::Layout;
use crate::error::{ErrorKind, IndexFacts, Result};
use crate::shape::Shape;

/// Per-dim values of one view, on the stack for ranks up to 8: a view from Python makes
/// several such lists, and heap cells cost more than the view's own work.
pub type DimList<T> = SmallVec<[T; 8]>;

/// Resolves a possibly negative `axis` against `rank` (NumPy: `-rank <= axis < rank`).
pub fn normalize_axis(axis: isize, rank: usize) -> Result<usize> {
    let r = rank as isize;
    if axis < -r || axis >= r {
        return Err(ErrorKind::Index(IndexFacts::Axis { axis, rank }).into());
    }
    Ok(if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    })
}

/// Resolves a list of axes, rejecting out-of-range and repeated ones.
pub fn normalize_axes(axes: &[isize], rank: usize) -> Result<DimList<usize>> {
    let mut seen = AxisSet::new(rank);
    let mut out = DimList::new();
    for &axis in axes {
        out.push(seen.insert_new(axis, axes)?);
    }
    Ok(out)
}

/// The axes of a rank seen so far, for [`normalize_axes`] and `permute`: a bit set up to rank
/// 128 (a list of flags above). A list built per call (`smallvec![false; rank]`) was a tenth
/// of a transpose's time.
enum AxisSet {
    Bits(u128, usize),
    Flags(Vec<bool>),
}

impl AxisSet {
    fn new(rank: usize) -> AxisSet {
        if rank <= 128 {
            AxisSet::Bits(0, rank)
        } else {
            AxisSet::Flags(vec![false; rank])
        }
    }

    /// `axis` resolved against the rank; errors for an axis out of range or already seen
    /// (`axes` is the whole list, for the message).
    #[inline]
    fn insert_new(&mut self, axis: isize, axes: &[isize]) -> Result<usize> {
        let (a, repeated) = match self {
            AxisSet::Bits(bits, rank) => {
                let a = normalize_axis(axis, *rank)?;
                let bit = 1u128 << a;
                let repeated = *bits & bit != 0;
                *bits |= bit;
                (a, repeated)
            }
            AxisSet::Flags(flags) => {
                let a = normalize_axis(axis, flags.len())?;
                (a, std::mem::replace(&mut flags[a], true))
            }
        };
        if repeated {
            return Err(
                ErrorKind::InvalidArgument(format!("axis {a} is repeated in {axes:?}")).into(),
            );
        }
        Ok(a)
    }
}

impl Layout {
    fn rebuild(&self, dims: &[usize], strides: &[isize], offset: usize) -> Result<Layout> {
        Ok(Layout::new(Shape::new(dims, strides)?, offset))
    }

    /// PyTorch `expand` (E1): `sizes.len() >= rank`; new dims only at the front; `-1` keeps a
    /// dim (not allowed for new dims); only size-1 dims may change. Expanded and new dims get
    /// stride 0, so the result is a view.
    ///
    /// ```
    /// use tessera::Layout;
    /// let l = Layout::contiguous(&[3, 1]).unwrap().expand(&[2, -1, 4]).unwrap();
    /// assert_eq!((l.dims(), l.strides()), (&[2, 3, 4][..], &[0, 1, 0][..]));
    /// ```
    pub fn expand(&self, sizes: &[isize]) -> Result<Layout> {
        let rank = self.rank();
        if sizes.len() < rank {
            return Err(ErrorKind::ShapeMismatch(
                format!(
                    "expand: {} sizes given for a tensor of rank {rank} (need at least as many)",
                    sizes.len()
                )
                .into(),
            )
            .into());
        }
        let lead = sizes.len() - rank;
        let mut dims = Vec::with_capacity(sizes.len());
        let mut strides = Vec::with_capacity(sizes.len());
        for (i, &s) in sizes.iter().enumerate() {
            let bad = |why: &str| {
                ErrorKind::ShapeMismatch(
                    format!("expand {:?} to {sizes:?}: {why}", self.dims()).into(),
                )
                .into()
            };
            if i < lead {
                if s < 0 {
                    return Err(bad(&format!("new leading dim {i} must be >= 0, got {s}")));
                }
                dims.push(s as usize);
                strides.push(0);
                continue;
            }
            let (d, st) = (self.dims()[i - lead], self.strides()[i - lead]);
            match s {
                -1 => {
                    dims.push(d);
                    strides.push(st);
                }
                s if s < 0 => {
                    return Err(bad(&format!("size {s} is invalid (only -1 is allowed)")))
                }
                s if s as usize == d => {
                    dims.push(d);
                    strides.push(st);
                }
                s if d == 1 => {
                    dims.push(s as usize);
                    strides.push(0);
                }
                s => {
                    return Err(bad(&format!(
                        "dim {} of size {d} cannot become {s} (only size-1 dims expand)",
                        i - lead
                    )))
                }
            }
        }
        self.rebuild(&dims, &strides, self.offset())
    }

    /// Reorders dims: result dim `i` is input dim `axes[i]` (NumPy `transpose(axes)`).
    pub fn permute(&self, axes: &[isize]) -> Result<Layout> {
        if axes.len() != self.rank() {
            return Err(ErrorKind::InvalidArgument(format!(
                "permute: {} axes given for a tensor of rank {}",
                axes.len(),
                self.rank()
            ))
            .into());
        }
        // Filled in place: collecting the checked axes and then the dims and strides moved
        // each list through `Result`s and iterator adapters, and those moves were most of a
        // transpose's time (120 ns of a 4-d `.T`).
        let (rank, from_dims, from_strides) = (self.rank(), self.dims(), self.strides());
        let (mut dims, mut strides) = (DimList::new(), DimList::new());
        let mut seen = AxisSet::new(rank);
        for &axis in axes {
            let a = seen.insert_new(axis, axes)?;
            dims.push(from_dims[a]);
            strides.push(from_strides[a]);
        }
        self.rebuild(&dims, &strides, self.offset())
    }

    /// Swaps two dims.
    pub fn transpose(&self, a: isize, b: isize) -> Result<Layout> {
        let (a, b) = (
            normalize_axis(a, self.rank())?,
            normalize_axis(b, self.rank())?,
        );
        if a != b && a.min(b) + 2 == self.rank() && a.max(b) + 1 == self.rank() {
            // `.mT`: the memo on a pinned descriptor (Shape::swapped_last).
            return Ok(Layout::new(self.shape().swapped_last()?, self.offset()));
        }
        let mut dims = DimList::from_slice(self.dims());
        let mut strides = DimList::from_slice(self.strides());
        dims.swap(a, b);
        strides.swap(a, b);
        self.rebuild(&dims, &strides, self.offset())
    }

    /// Reverses all dims (NumPy `.T`).
    pub fn t(&self) -> Layout {
        // A permutation of a valid geometry is valid.
        let shape = self.shape().reversed().expect("a permuted shape is valid");
        Layout::new(shape, self.offset())
    }

    /// Removes size-1 dims: all of them (`None`), or the listed ones, each of which must have
    /// size 1 (NumPy; PyTorch silently skips others).
    pub fn squeeze(&self, axes: Option<&[isize]>) -> Result<Layout> {
        let drop: DimList<bool> = match axes {
            None => self.dims().iter().map(|&d| d == 1).collect(),
            Some(axes) => {
                let mut drop: DimList<bool> = smallvec::smallvec![false; self.rank()];
                for a in normalize_axes(axes, self.rank())? {
                    if self.dims()[a] != 1 {
                        return Err(ErrorKind::InvalidArgument(format!(
                            "squeeze: axis {a} has size {} (only size-1 dims can be squeezed)",
                            self.dims()[a]
                        ))
                        .into());
                    }
                    drop[a] = true;
                }
                drop
            }
        };
        let keep = |i: &usize| !drop[*i];
        let dims: DimList<usize> = (0..self.rank())
            .filter(keep)
            .map(|i| self.dims()[i])
            .collect();
        let strides: DimList<isize> = (0..self.rank())
            .filter(keep)
            .map(|i| self.strides()[i])
            .collect();
        self.rebuild(&dims, &strides, self.offset())
    }

    /// Inserts a size-1 dim at `axis` (`-rank-1 <= axis <= rank`).
    pub fn unsqueeze(&self, axis: isize) -> Result<Layout> {
        let at = normalize_axis(axis, self.rank() + 1)?;
        let mut dims = DimList::from_slice(self.dims());
        let mut strides = DimList::from_slice(self.strides());
        // The stride of a size-1 dim is never used; keep the geometry contiguous-looking.
        let stride = strides.get(at).map_or(1, |&s| s * dims[at] as isize);
        dims.insert(at, 1);
        strides.insert(at, stride);
        self.rebuild(&dims, &strides, self.offset())
    }

    /// Reverses the listed dims (all for `None`) with negative strides: zero copy.
    pub fn flip(&self, axes: Option<&[isize]>) -> Result<Layout> {
        let axes = match axes {
            None => (0..self.rank()).collect(),
            Some(a) => normalize_axes(a, self.rank())?,
        };
        let mut strides = DimList::from_slice(self.strides());
        let mut offset = self.offset() as isize;
        for a in axes {
            let d = self.dims()[a];
            if d > 1 {
                offset += (d as isize - 1) * strides[a];
                strides[a] = -strides[a];
            }
        }
        if self.numel() == 0 {
            offset = self.offset() as isize;
        }
        self.rebuild(self.dims(), &strides, offset as usize)
    }

    /// `len` positions from `start` along `axis` (PyTorch `narrow`): the same strides, the
    /// offset moved to position `start`. `axis` may be negative (`-rank <= axis < rank`).
    ///
    /// Errors: [`ErrorKind::Index`] for an axis out of range (a rank-0 layout has none) or
    /// when `start + len` exceeds the dim.
    ///
    /// ```
    /// use tessera::Layout;
    /// let l = Layout::contiguous(&[4, 3]).unwrap().narrow(-1, 1, 2).unwrap();
    /// assert_eq!((l.dims(), l.strides(), l.offset()), (&[4, 2][..], &[3, 1][..], 1));
    /// assert!(Layout::contiguous(&[4, 3]).unwrap().narrow(0, 3, 2).is_err());
    /// ```
    pub fn narrow(&self, axis: isize, start: usize, len: usize) -> Result<Layout> {
        let a = normalize_axis(axis, self.rank())?;
        let dim = self.dims()[a];
        if start.checked_add(len).is_none_or(|end| end > dim) {
            return Err(ErrorKind::Index(
                format!("narrow: start {start} + length {len} exceeds size {dim} of axis {axis}")
                    .into(),
            )
            .into());
        }
        let mut dims = self.dims().to_vec();
        dims[a] = len;
        // Position `start` exists when the view is not empty, so its offset is in the
        // storage; an empty view keeps the offset (it reaches no element).
        let offset = if dims.contains(&0) {
            self.offset()
        } else {
            (self.offset() as isize + start as isize * self.strides()[a]) as usize
        };
        self.rebuild(&dims, self.strides(), offset)
    }
}
