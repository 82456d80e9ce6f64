//! Helpers of the MPI backend's collectives: staging of flat buffers before the ranks agree
//! (module `agree`), and the sizes and digests the agreement is made of.

use tessera::{DType, Element, Tensor};

use super::agree::{Kind, Terms};
use super::wire::{count, wire};
use crate::error::Result;

/// A flat collective's buffers, prepared before the ranks agree: `send`'s elements staged to
/// its wire dtype and contiguous, and a new output of the wire dtype.
pub(crate) struct Staged {
    send: Tensor,
    out: Tensor,
    orig: DType,
}

impl Staged {
    /// Stages `send` and allocates an output of `out_len` elements (both counted in MPI's
    /// `i32`).
    pub fn new(send: &Tensor, out_len: usize) -> Result<Staged> {
        count(send.numel())?;
        count(out_len)?;
        let orig = send.dtype();
        let w = wire(orig);
        // Read flat below: row-major whatever the input's order (`astype` keeps a permuted
        // input's order, docs/design.md P6; `contiguous` is free on a row-major result).
        let send = if w == orig {
            send.clone()
        } else {
            send.astype(w)?
        };
        let send = send.contiguous()?;
        let out = Tensor::empty(&[out_len], w)?;
        Ok(Staged { send, out, orig })
    }

    /// Runs `f` on the staged send buffer and the output, and returns the output in the
    /// original dtype.
    pub fn run(self, f: &dyn Fn(&Tensor, &Tensor) -> Result<()>) -> Result<Tensor> {
        f(&self.send, &self.out)?;
        Ok(if self.out.dtype() == self.orig {
            self.out
        } else {
            self.out.astype(self.orig)?
        })
    }
}

/// `Ok(())` when `r` is `Ok`, its error otherwise (for the agreement's local result).
pub(crate) fn status<T>(r: &Result<T>) -> Result<()> {
    r.as_ref().map(drop).map_err(Clone::clone)
}

/// The terms of a collective that takes the MPI path (no single-host choice).
pub(crate) fn terms(kind: Kind, dtype: DType, digest: u64, pairs: u64) -> Terms {
    Terms {
        kind,
        dtype: Some(dtype),
        digest,
        pairs,
        wants_shm: false,
    }
}

/// `shape` with `axes` set to 0: the dims that every rank of an axis collective shares.
pub(crate) fn common_dims(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    let mut s = shape.to_vec();
    for &a in axes {
        if let Some(d) = s.get_mut(a) {
            *d = 0;
        }
    }
    s
}

/// The product of the dims of `shape` other than `axis` (saturating: only compared with a
/// threshold).
pub(crate) fn others(shape: &[usize], axis: usize) -> usize {
    let dims = shape.iter().enumerate().filter(|&(i, _)| i != axis);
    dims.fold(1usize, |a, (_, &d)| a.saturating_mul(d))
}

/// The bytes of `elems` elements of `dtype`.
pub(crate) fn nbytes(elems: usize, dtype: DType) -> usize {
    elems.saturating_mul(dtype.itemsize())
}

/// The elements of a contiguous 1-D tensor.
pub(crate) fn slice_of<T: Element>(
    t: &Tensor,
) -> Result<(
    impl std::ops::Deref<Target = [T]> + '_,
    std::ops::Range<usize>,
)> {
    let off = t.layout().offset();
    Ok((t.storage()?.read::<T>()?, off..off + t.numel()))
}
