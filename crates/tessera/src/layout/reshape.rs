//! Reshape as a view where the chunk rule allows it (docs/design.md V5).

use super::Layout;
use crate::error::{ErrorKind, Result};
use crate::shape::Shape;

/// Resolves a requested shape with at most one `-1` against `numel` elements.
///
/// Errors: more than one `-1`, a size below `-1`, a `-1` that cannot be inferred (the other
/// dims multiply to 0 or do not divide `numel`), or a product different from `numel`.
pub fn infer_shape(requested: &[isize], numel: usize) -> Result<Vec<usize>> {
    let mut infer = None;
    let mut known: usize = 1;
    for (i, &s) in requested.iter().enumerate() {
        match s {
            -1 if infer.is_some() => {
                return Err(ErrorKind::InvalidArgument(format!(
                    "reshape {requested:?}: only one dim can be -1"
                ))
                .into());
            }
            -1 => infer = Some(i),
            s if s < 0 => {
                return Err(ErrorKind::InvalidArgument(format!(
                    "reshape {requested:?}: invalid size {s}"
                ))
                .into());
            }
            s => {
                known = known.checked_mul(s as usize).ok_or_else(|| {
                    ErrorKind::ShapeOverflow(format!(
                        "reshape {requested:?}: element count overflows"
                    ))
                })?;
            }
        }
    }
    let mismatch = || {
        ErrorKind::ShapeMismatch(
            format!("cannot reshape {numel} elements into shape {requested:?}").into(),
        )
        .into()
    };
    let mut dims: Vec<usize> = requested.iter().map(|&s| s.max(0) as usize).collect();
    match infer {
        Some(i) => {
            if known == 0 || !numel.is_multiple_of(known) {
                return Err(mismatch());
            }
            dims[i] = numel / known;
        }
        None if known != numel => return Err(mismatch()),
        None => {}
    }
    Ok(dims)
}

impl Layout {
    /// The layout of `dims` over the same elements in row-major order, if it can be expressed
    /// without copying: NumPy's rule, which ignores size-1 dims and splits or merges only
    /// chunks of dims that are contiguous with each other. `Ok(None)` means a copy is needed.
    /// `dims` must have the same element count (see [`infer_shape`]).
    pub fn reshape_view(&self, dims: &[usize]) -> Result<Option<Layout>> {
        let numel: usize = dims.iter().product();
        if numel != self.numel() {
            return Err(ErrorKind::ShapeMismatch(
                format!(
                    "cannot reshape {:?} ({} elements) into {dims:?}",
                    self.dims(),
                    self.numel()
                )
                .into(),
            )
            .into());
        }
        if numel == 0 || self.is_contiguous() {
            // Row-major order of a contiguous (or empty) layout is its memory order.
            let shape = Shape::contiguous(dims)?;
            return Ok(Some(Layout::new(shape, self.offset())));
        }
        let (old_d, old_s): (Vec<usize>, Vec<isize>) = self
            .dims()
            .iter()
            .zip(self.strides())
            .filter(|(&d, _)| d != 1)
            .map(|(&d, &s)| (d, s))
            .unzip();
        let mut strides = vec![0isize; dims.len()];
        let (mut oi, mut oj, mut ni, mut nj) = (0, 1, 0, 1);
        while ni < dims.len() && oi < old_d.len() {
            let (mut np, mut op) = (dims[ni], old_d[oi]);
            while np != op {
                if np < op {
                    np *= dims[nj];
                    nj += 1;
                } else {
                    op *= old_d[oj];
                    oj += 1;
                }
            }
            // The old chunk [oi, oj) must be contiguous with itself.
            for k in oi..oj - 1 {
                if old_s[k] != old_d[k + 1] as isize * old_s[k + 1] {
                    return Ok(None);
                }
            }
            strides[nj - 1] = old_s[oj - 1];
            for k in (ni + 1..nj).rev() {
                strides[k - 1] = strides[k] * dims[k] as isize;
            }
            ni = nj;
            nj += 1;
            oi = oj;
            oj += 1;
        }
        // Remaining new dims are size 1; their stride is never used.
        for s in strides.iter_mut().skip(ni) {
            *s = 1;
        }
        Ok(Some(Layout::new(
            Shape::new(dims, &strides)?,
            self.offset(),
        )))
    }
}
