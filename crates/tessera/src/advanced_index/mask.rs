//! Boolean-mask selection `x[mask]` for a mask over the leading dims (docs/design.md X1-X5):
//! a count pass and a compaction pass over blocks of the mask, both parallel, each block
//! writing its own slice of the output. Element masks (the mask covers every dim) compact
//! without branches.

use rayon::prelude::*;

use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result};
use crate::kernels::parallel;
use crate::tensor::Tensor;
use crate::with_dtype;

use super::key::check_mask;

/// Mask entries per block of the count and compaction passes.
const BLOCK: usize = 1 << 16;

/// The output shape of `x[mask]` with `count` true entries.
pub(crate) fn out_shape(x: &[usize], mask: &[usize], count: usize) -> Vec<usize> {
    let mut s = vec![count];
    s.extend_from_slice(&x[mask.len()..]);
    s
}

/// Checks a mask shape against the input's leading dims.
pub(crate) fn check_shape(x: &[usize], mask: &[usize]) -> Result<()> {
    if mask.len() > x.len() {
        return Err(ErrorKind::Index(crate::error::IndexFacts::Other(format!(
            "too many indices for array: array is {}-dimensional, but {} were indexed",
            x.len(),
            mask.len()
        )))
        .into());
    }
    check_mask(mask, x, 0)
}

fn check_bool(mask: &Tensor) -> Result<()> {
    if mask.dtype() != DType::Bool {
        return Err(ErrorKind::InvalidArgument(format!(
            "boolean_mask: the mask must be bool, got {}",
            mask.dtype()
        ))
        .into());
    }
    Ok(())
}

/// The number of true entries of a bool `mask`.
pub(crate) fn count(mask: &Tensor) -> Result<usize> {
    check_bool(mask)?;
    with_flags(mask, |flags| counts(flags).iter().sum())
}

/// Runs `f` on the mask's flags as a slice (a contiguous mask is read in place).
fn with_flags<R>(mask: &Tensor, f: impl FnOnce(&[bool]) -> R) -> Result<R> {
    let m = mask.contiguous()?;
    let off = m.layout.offset();
    let data = m.dense_storage()?.read_as::<bool>();
    Ok(f(&data[off..off + m.numel()]))
}

/// True entries per block.
fn counts(flags: &[bool]) -> Vec<usize> {
    let count = |b: &[bool]| b.iter().map(|&f| f as usize).sum::<usize>();
    if flags.len() > BLOCK && parallel::enabled() {
        flags.par_chunks(BLOCK).map(count).collect()
    } else {
        flags.chunks(BLOCK).map(count).collect()
    }
}

/// Copies the rows (`row` elements each) of `src` whose flag is set into `dst`, which holds
/// exactly that many rows.
fn compact<T: Copy>(flags: &[bool], src: &[T], dst: &mut [T], row: usize) {
    if row == 1 {
        // Branch-free up to the last set flag: every write before it lands inside `dst`
        // (fewer set flags precede it than `dst` holds), and a later write overwrites it.
        let Some(last) = flags.iter().rposition(|&f| f) else {
            return;
        };
        let mut w = 0;
        for (&f, &v) in flags[..=last].iter().zip(src) {
            dst[w] = v;
            w += f as usize;
        }
    } else {
        let mut w = 0;
        for (i, &f) in flags.iter().enumerate() {
            if f {
                dst[w..w + row].copy_from_slice(&src[i * row..(i + 1) * row]);
                w += row;
            }
        }
    }
}

/// `x[mask]`: the rows of `x` (over the mask's dims) where `mask` is true, as a new
/// contiguous tensor of shape `[count, *x.shape[mask.rank..]]`.
/// `count` must be the mask's number of true entries (an `InvalidArgument` error otherwise).
pub(crate) fn select(x: &Tensor, mask: &Tensor, count: usize) -> Result<Tensor> {
    check_bool(mask)?;
    check_shape(x.shape(), mask.shape())?;
    let xc = x.contiguous()?;
    let row: usize = x.shape()[mask.rank()..].iter().product();
    with_flags(mask, |flags| {
        let counts = counts(flags);
        let total: usize = counts.iter().sum();
        if total != count {
            return Err(ErrorKind::InvalidArgument(format!(
                "boolean_mask: count is {count} but the mask has {total} true entries"
            ))
            .into());
        }
        let out = Tensor::for_overwrite(&out_shape(x.shape(), mask.shape(), total), x.dtype())?;
        if total == 0 || row == 0 {
            return Ok(out);
        }
        with_dtype!(x.dtype(), T => {
            let off = xc.layout.offset();
            let src = xc.dense_storage()?.read_as::<T>();
            let src = &src[off..off + xc.numel()];
            let mut dst = out.dense_storage()?.write_as::<T>();
            run_blocks(flags, &counts, src, &mut dst, row);
        });
        Ok(out)
    })?
}

fn run_blocks<T: Element>(flags: &[bool], counts: &[usize], src: &[T], dst: &mut [T], row: usize) {
    // Each block's output slice, split off in order.
    let mut parts = Vec::with_capacity(counts.len());
    let mut rest = dst;
    for &c in counts {
        let (head, tail) = rest.split_at_mut(c * row);
        parts.push(head);
        rest = tail;
    }
    let job = |(b, part): (usize, &mut &mut [T])| {
        let f = &flags[b * BLOCK..((b + 1) * BLOCK).min(flags.len())];
        compact(f, &src[b * BLOCK * row..], part, row);
    };
    if counts.len() > 1 && parallel::enabled() {
        parts.par_iter_mut().enumerate().for_each(job);
    } else {
        parts.iter_mut().enumerate().for_each(job);
    }
}

/// Writes the rows of `values` (shape `[count, ...]`, already the output's shape) back where
/// `mask` is true in `x` (contiguous, a fresh tensor): the gradient of [`select`].
pub(crate) fn unselect(x: &Tensor, mask: &Tensor, values: &Tensor) -> Result<()> {
    let row: usize = x.shape()[mask.rank()..].iter().product();
    let flags = mask.to_vec::<bool>()?;
    with_dtype!(x.dtype(), T => {
        let v = values.to_vec::<T>()?;
        let mut dst = x.dense_storage()?.write_as::<T>();
        let mut r = 0;
        for (i, &f) in flags.iter().enumerate() {
            if f {
                dst[i * row..(i + 1) * row].copy_from_slice(&v[r * row..(r + 1) * row]);
                r += 1;
            }
        }
    });
    Ok(())
}
