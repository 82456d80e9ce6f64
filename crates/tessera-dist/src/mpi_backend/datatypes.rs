//! Tensor views as MPI derived datatypes (docs/design.md D9): the MPI backend's
//! [`crate::Communicator::all_to_all_views`] describes each strided block (a column block of
//! a row-major shard, a row range of the output) as a datatype for `MPI_Alltoallw`, so MPI
//! reads and writes the tensors in place and no staging copy is made.
//!
//! A view's datatype counts bytes from the start of its storage: a contiguous run of
//! `itemsize` bytes per element, nested byte-strided vectors for the other dims, placed at the
//! view's byte offset. Data is moved as bytes, so every dtype (f16, bf16, bool included) moves
//! as is.

use std::sync::Arc;

use mpi::datatype::{Equivalence, UserDatatype};
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator as _;
use mpi::Address;
use tessera::{Storage, Tensor};

use super::wire::{count, runs};
use crate::comm::shaped;
use crate::error::{DistError, Result};

/// The datatype of the elements of `t` (of `itemsize` bytes each), in row-major order,
/// addressed in bytes from the start of its storage. `t` must have at least one element.
pub(crate) fn view_datatype(t: &Tensor, itemsize: usize) -> Result<UserDatatype> {
    let elem = UserDatatype::contiguous(count(itemsize)?, &u8::equivalent_datatype());
    let dims = runs(t.shape(), t.strides());
    let (mut ty, outer) = match dims.first() {
        Some(&(n, 1)) => (UserDatatype::contiguous(count(n)?, &elem), &dims[1..]),
        _ => (elem, &dims[..]),
    };
    for &(n, stride) in outer {
        let bytes = stride as Address * itemsize as Address;
        ty = UserDatatype::heterogeneous_vector(count(n)?, 1, bytes, &ty);
    }
    let at = (t.layout().offset() * itemsize) as Address;
    Ok(UserDatatype::structured(&[1], &[at], &[ty]))
}

/// The views of one side of an exchange, all in one storage (or none, when every view is
/// empty): the caller's views, or stand-ins in one new contiguous buffer.
pub(crate) struct OneStorage {
    /// Views to hand to MPI, one per rank.
    pub views: Vec<Tensor>,
    /// Their common storage (`None` when all are empty).
    pub storage: Option<Arc<Storage>>,
    /// Whether `views` are stand-ins (to be copied back into the caller's recv views).
    pub staged: bool,
}

impl OneStorage {
    /// `views` if every non-empty one lives in one storage; otherwise stand-ins packed into a
    /// new buffer, holding copies of the views when `copy_in` (the send side).
    pub fn new(views: &[Tensor], copy_in: bool) -> Result<OneStorage> {
        let mut live = views.iter().filter(|v| v.numel() > 0);
        let Some(first) = live.next() else {
            return Ok(OneStorage {
                views: views.to_vec(),
                storage: None,
                staged: false,
            });
        };
        if live.all(|v| v.shares_storage(first)) {
            return Ok(OneStorage {
                views: views.to_vec(),
                storage: Some(first.storage()?.clone()),
                staged: false,
            });
        }
        let total = views.iter().map(Tensor::numel).sum();
        let buf = Tensor::empty(&[total], first.dtype())?;
        let mut stand_ins = Vec::with_capacity(views.len());
        let mut at = 0;
        for v in views {
            let s = shaped(&buf.narrow(0, at, v.numel())?, v.shape())?;
            if copy_in {
                s.assign(v)?;
            }
            at += v.numel();
            stand_ins.push(s);
        }
        Ok(OneStorage {
            views: stand_ins,
            storage: Some(buf.storage()?.clone()),
            staged: true,
        })
    }
}

/// Per-rank counts (0 or 1) and datatypes for the views, with the self block `me` left out
/// (the caller copies it locally). Keep the returned datatypes alive during the call.
pub(crate) fn counts_types(
    views: &[Tensor],
    me: usize,
    itemsize: usize,
) -> Result<(Vec<i32>, Vec<UserDatatype>)> {
    let mut counts = Vec::with_capacity(views.len());
    let mut types = Vec::with_capacity(views.len());
    for (r, v) in views.iter().enumerate() {
        if r == me || v.numel() == 0 {
            counts.push(0);
            types.push(UserDatatype::contiguous(1, &u8::equivalent_datatype()));
        } else {
            counts.push(1);
            types.push(view_datatype(v, itemsize)?);
        }
    }
    Ok((counts, types))
}

/// The raw handles of `types`, for the FFI call.
fn raw(types: &[UserDatatype]) -> Vec<mpi::ffi::MPI_Datatype> {
    types.iter().map(|t| t.as_raw()).collect()
}

/// An `MPI_Alltoallw` of views, prepared: the views in one storage per side, counts and
/// datatypes. Everything that can fail locally happens in [`Exchange::prepare`], before the
/// ranks agree (module `agree`); [`Exchange::run`] only calls MPI and copies back.
pub(crate) struct Exchange {
    dtype: tessera::DType,
    src: OneStorage,
    dst: OneStorage,
    sc: Vec<i32>,
    rc: Vec<i32>,
    /// The datatypes behind the raw handles (kept alive for the call).
    _types: (Vec<UserDatatype>, Vec<UserDatatype>),
    st: Vec<mpi::ffi::MPI_Datatype>,
    rt: Vec<mpi::ffi::MPI_Datatype>,
}

impl Exchange {
    /// Prepares the exchange of the views between different ranks (`send[me]` / `recv[me]`
    /// are left alone; empty views move nothing). Views spread over several storages are
    /// staged through one buffer per side (a local decision, invisible to peers). `None`:
    /// there are no views.
    pub fn prepare(me: usize, send: &[Tensor], recv: &[Tensor]) -> Result<Option<Exchange>> {
        let Some(dtype) = send.first().map(Tensor::dtype) else {
            return Ok(None);
        };
        let src = OneStorage::new(send, true)?;
        let dst = OneStorage::new(recv, false)?;
        let item = dtype.itemsize();
        let (sc, st) = counts_types(&src.views, me, item)?;
        let (rc, rt) = counts_types(&dst.views, me, item)?;
        let (st_raw, rt_raw) = (raw(&st), raw(&rt));
        Ok(Some(Exchange {
            dtype,
            src,
            dst,
            sc,
            rc,
            _types: (st, rt),
            st: st_raw,
            rt: rt_raw,
        }))
    }

    /// The `MPI_Alltoallw` (collective over `comm`), then the copy of staged views back into
    /// `recv` (this rank's `me` excluded).
    pub fn run(&self, comm: &SimpleCommunicator, me: usize, recv: &[Tensor]) -> Result<()> {
        let p = comm.size() as usize;
        let (src, dst) = (&self.src, &self.dst);
        let (sc, rc, st, rt) = (&self.sc, &self.rc, &self.st, &self.rt);
        let displs = vec![0i32; p];
        tessera::with_dtype!(self.dtype, T => {
            let s = src.storage.as_ref().map(|s| s.read::<T>()).transpose()?;
            let mut d = dst.storage.as_ref().map(|s| s.write::<T>()).transpose()?;
            // A real address for a side without storage: a dangling pointer can equal
            // `MPI_IN_PLACE` (address 1 in Open MPI).
            let mut spare = [0u64; 2];
            let none: *mut T = spare.as_mut_ptr().cast();
            let sp = s.as_ref().map_or(none.cast_const(), |s| s.as_ptr());
            let dp = d.as_mut().map_or(none.wrapping_byte_add(8), |d| d.as_mut_ptr());
            // SAFETY: every count-1 datatype addresses bytes of the element range of one view
            // of the guarded storage (views are bounds-checked against their storage when
            // made), relative to that storage's start `sp` / `dp`; count-0 entries touch no
            // memory, so `spare` (no storage: every view empty) is never accessed. The read
            // guard on the send storage and the write guard on the (distinct, checked) recv
            // storage are held for the whole call; the count, displacement and datatype
            // arrays hold one entry per rank and outlive the call, as do the datatypes behind
            // the raw handles (`_types`). Every rank agreed on the dtype and the per-pair
            // sizes before this call (module `agree`), so every written byte is a valid
            // element of the receiving dtype.
            let code = unsafe {
                mpi::ffi::MPI_Alltoallw(
                    sp.cast(),
                    sc.as_ptr(),
                    displs.as_ptr(),
                    st.as_ptr(),
                    dp.cast(),
                    rc.as_ptr(),
                    displs.as_ptr(),
                    rt.as_ptr(),
                    comm.as_raw(),
                )
            };
            if code != 0 {
                return Err(DistError::Comm(format!("MPI_Alltoallw returned {code}")));
            }
        });
        if dst.staged {
            for (r, (out, got)) in recv.iter().zip(&dst.views).enumerate() {
                if r != me && out.numel() > 0 {
                    out.assign(got)?;
                }
            }
        }
        Ok(())
    }
}
