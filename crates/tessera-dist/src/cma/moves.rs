//! The CMA protocol on locked storages (see the parent module): publish where this rank's
//! recv blocks go, learn where its send blocks go, then move them: the own block and the
//! blocks bound for peers' shared memory files in one interleaved sweep with ordinary stores,
//! the rest by `process_vm_writev`.

use std::sync::Arc;

use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator as _, Destination, Source};
use tessera::storage::SharedMapping;
use tessera::{Element, Storage, Tensor};

use super::pieces::{copy_interleaved, transfer_block, BlockCopy, Pieces, DESC};
use super::{base_of, index_of, peer_maps, Blocks, CmaPeers, MSG, TAG_DESC, TAG_DONE};
use crate::error::{DistError, Result};

/// Where one send block goes.
enum Route {
    /// Through this process's `map` of the receiver's shared memory file, at the `to`
    /// pieces (addresses in the mapping).
    Mapped { map: Arc<SharedMapping>, to: Pieces },
    /// By `process_vm_writev` to the receiver's `remote` pieces.
    Cma { remote: Pieces },
}

/// Runs the protocol: returns this rank's first failure and the done flags received from the
/// writers (non-zero: that writer failed).
pub(super) fn move_blocks<T: Element>(
    comm: &SimpleCommunicator,
    peers: &CmaPeers,
    b: &Blocks,
) -> Result<(Option<DistError>, Vec<u8>)> {
    let (me, item) = (b.me, b.item);
    // The `?`s before the exchange below cannot fire after `prepare`: every storage holds
    // `b.dtype` (checked by `check_views`) and every view's storage is in its list.
    let sg = b
        .send_st
        .iter()
        .map(|s| s.read::<T>())
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut rg = b
        .recv_st
        .iter()
        .map(|s| s.write::<T>())
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let sb: Vec<usize> = sg.iter().map(|g| g.as_ptr() as usize).collect();
    let rb: Vec<usize> = rg.iter_mut().map(|g| g.as_mut_ptr() as usize).collect();
    let pieces = |v: &Tensor, st: &[Arc<Storage>], bases: &[usize]| -> Result<Pieces> {
        Ok(Pieces::of(base_of(v, st, bases)?, v, item))
    };
    let descs = b
        .writers
        .iter()
        .map(|&r| {
            let v = &b.recv_into[r];
            let p = pieces(v, &b.recv_st, &rb)?;
            let mut w = [0u64; MSG];
            w[..DESC].copy_from_slice(&p.encode());
            if let Some(f) = v.storage()?.shared_file() {
                // The storage starts at byte 0 of its file.
                let off = p.addr - base_of(v, &b.recv_st, &rb)?;
                w[DESC..].copy_from_slice(&[f.ino, f.fd as u64, off as u64]);
            }
            Ok(w)
        })
        .collect::<Result<Vec<_>>>()?;
    // Per target: the send pieces and the index of their storage.
    let locals = b
        .targets
        .iter()
        .map(|&s| {
            let v = &b.send_from[s];
            Ok((pieces(v, &b.send_st, &sb)?, index_of(v, &b.send_st)?))
        })
        .collect::<Result<Vec<_>>>()?;
    let own = if b.own {
        let (from, to) = (&b.send_from[me], &b.recv_into[me]);
        Some((
            pieces(from, &b.send_st, &sb)?,
            index_of(from, &b.send_st)?,
            pieces(to, &b.recv_st, &rb)?,
            index_of(to, &b.recv_st)?,
        ))
    } else {
        None
    };
    let mut failed: Option<DistError> = None;
    let mut flags = vec![0u8; b.writers.len()];
    mpi::request::scope(|scope| {
        // Post everything this rank waits for before blocking, so no send can wait on a
        // receive that is not posted yet.
        let mut pending = Vec::with_capacity(b.writers.len());
        for (&r, d) in b.writers.iter().zip(&descs) {
            let to = comm.process_at_rank(r as i32);
            pending.push(to.immediate_send_with_tag(scope, &d[..], TAG_DESC));
        }
        let mut done = Vec::with_capacity(b.writers.len());
        for (&r, f) in b.writers.iter().zip(flags.iter_mut()) {
            let from = comm.process_at_rank(r as i32);
            done.push(from.immediate_receive_into_with_tag(scope, f, TAG_DONE));
        }
        // Where each send block goes (every receiver posts its descriptors first thing, so
        // this waits only for a late peer).
        let mut mapped: Vec<Arc<SharedMapping>> = Vec::new();
        let routes: Vec<Result<Route>> = b
            .targets
            .iter()
            .zip(&locals)
            .map(|(&s, (local, _))| {
                let mut dest = [0u64; MSG];
                let peer = comm.process_at_rank(s as i32);
                peer.receive_into_with_tag(&mut dest[..], TAG_DESC);
                route::<T>(peers.pids[s], &dest, local, (me, s), &mut mapped)
            })
            .collect();
        // One sweep over the own block and the mapped blocks.
        let mut copies = Vec::with_capacity(routes.len() + 1);
        if let Some((from, i, to, j)) = &own {
            copies.push(BlockCopy {
                from: from.clone(),
                src: &sg[*i][..],
                to: to.clone(),
                dst: &mut rg[*j][..],
            });
        }
        for ((local, i), route) in locals.iter().zip(&routes) {
            if let Ok(Route::Mapped { map, to }) = route {
                // SAFETY: `map` maps the receiver's shared file, `map.len()` bytes, and stays
                // mapped while `routes` holds it (past the copy below). The receiver published
                // the pieces for this write and keeps its storage write-locked and untouched
                // until our done flag arrives; `route` keeps one route per mapping and nothing
                // else in this process accesses the mapping meanwhile (one writer per block),
                // so this is the only reference to that memory. `T` is a plain numeric type
                // (or bool, written only with bytes of valid bools from the source), and the
                // page-aligned base suits its alignment.
                let dst = unsafe {
                    std::slice::from_raw_parts_mut(map.ptr().as_ptr().cast::<T>(), map.len() / item)
                };
                copies.push(BlockCopy {
                    from: local.clone(),
                    src: &sg[*i][..],
                    to: to.clone(),
                    dst,
                });
            }
        }
        copy_interleaved(copies);
        for ((&s, (local, _)), route) in b.targets.iter().zip(&locals).zip(routes) {
            let moved = route.and_then(|r| match r {
                Route::Mapped { .. } => Ok(()),
                Route::Cma { remote } => transfer_block(peers.pids[s], local, &remote, true),
            });
            let peer = comm.process_at_rank(s as i32);
            peer.send_with_tag(&u8::from(moved.is_err()), TAG_DONE);
            failed = failed.take().or(moved.err());
        }
        for r in pending {
            r.wait();
        }
        for r in done {
            r.wait();
        }
    });
    // The output stays write-locked until every writer is done.
    drop(sg);
    drop(rg);
    Ok((failed, flags))
}

/// The route of the `local` pieces that rank `ranks.0` sends rank `ranks.1` (process `pid`),
/// whose descriptor is `dest`: through a mapping of the receiver's shared memory file when it
/// has one, it maps, the pieces lie inside it, and no earlier route uses that mapping
/// (`mapped`, which this extends); otherwise by CMA. An error when the sizes disagree.
fn route<T: Element>(
    pid: libc::pid_t,
    dest: &[u64; MSG],
    local: &Pieces,
    ranks: (usize, usize),
    mapped: &mut Vec<Arc<SharedMapping>>,
) -> Result<Route> {
    let (bytes, remote) = Pieces::decode(&dest[..DESC])?;
    if bytes != local.bytes() || remote.bytes() != bytes {
        return Err(DistError::Mismatch(format!(
            "all_to_all_views: rank {} sends {} bytes to rank {}, which expects {bytes}",
            ranks.0,
            local.bytes(),
            ranks.1
        )));
    }
    if let [ino, fd, off] = dest[DESC..] {
        if ino != 0 {
            if let Ok((map, to)) = map_block::<T>(pid, (fd, ino, off as usize), &remote) {
                if !mapped.iter().any(|m| Arc::ptr_eq(m, &map)) {
                    mapped.push(map.clone());
                    return Ok(Route::Mapped { map, to });
                }
            }
        }
    }
    Ok(Route::Cma { remote })
}

/// This process's mapping of the shared memory file of process `pid` (descriptor `file.0`,
/// inode `file.1`) and the `remote` pieces, whose address `file.2` is an offset into that
/// file, as addresses in the mapping. Fails when the file cannot be mapped or the pieces do
/// not lie inside it, aligned for `T`.
fn map_block<T: Element>(
    pid: libc::pid_t,
    file: (u64, u64, usize),
    remote: &Pieces,
) -> Result<(Arc<SharedMapping>, Pieces)> {
    let (fd, ino, off) = file;
    let map = peer_maps::get(pid, fd, ino)?;
    let item = std::mem::size_of::<T>();
    let (base, len) = (map.ptr().as_ptr() as usize, map.len());
    let to = Pieces {
        addr: base.checked_add(off).ok_or_else(outside)?,
        ..remote.clone()
    };
    match to.extent() {
        Some((lo, hi)) if lo >= base && hi <= base + len && (lo - base) % item == 0 => {}
        _ => return Err(outside()),
    }
    Ok((map, to))
}

fn outside() -> DistError {
    DistError::Mismatch("all_to_all_views: a recv block outside its shared file".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera::index::IndexSpec;
    use tessera::DType;

    #[test]
    fn writes_a_column_block_into_a_shared_file_and_refuses_blocks_outside_it() {
        // The right half of an [8, 1000] f32 matrix into a shared [8, 500] output, through this
        // process's own mapping of the output's file.
        let src = Tensor::arange(0, 8000, 1, DType::F32)
            .and_then(|t| t.reshape(&[8, 1000]))
            .unwrap();
        let block = src
            .index(&[IndexSpec::All, IndexSpec::interval(500, 1000)])
            .unwrap();
        let out = Tensor::empty_shared(&[8, 500], DType::F32).unwrap();
        let f = out.storage().unwrap().shared_file().unwrap();
        let me = std::process::id() as libc::pid_t;
        let values = src.storage().unwrap().read::<f32>().unwrap();
        let local = Pieces::of(values.as_ptr() as usize, &block, 4);
        let remote = Pieces::of(0, &out, 4);
        let file = |off| (f.fd as u64, f.ino, off);
        let (map, to) = map_block::<f32>(me, file(0), &remote).unwrap();
        // SAFETY: test only: `out` is not accessed while this slice lives.
        let dst = unsafe { std::slice::from_raw_parts_mut(map.ptr().as_ptr().cast::<f32>(), 4000) };
        copy_interleaved(vec![BlockCopy {
            from: local,
            src: &values,
            to,
            dst,
        }]);
        let want: Vec<f32> = (0..4000)
            .map(|k| (k / 500 * 1000 + 500 + k % 500) as f32)
            .collect();
        assert_eq!(out.to_vec::<f32>().unwrap(), want);
        // A block reaching past the end of the file, or misaligned, is refused.
        assert!(map_block::<f32>(me, file(f.len - 4), &remote).is_err());
        assert!(map_block::<f32>(me, file(2), &remote).is_err());
    }

    #[test]
    fn routes_go_through_one_mapping_each_and_check_sizes() {
        let out = Tensor::empty_shared(&[100], DType::I32).unwrap();
        let f = out.storage().unwrap().shared_file().unwrap();
        let me = std::process::id() as libc::pid_t;
        let remote = Pieces::of(0, &out, 4);
        let mut dest = [0u64; MSG];
        dest[..DESC].copy_from_slice(&remote.encode());
        dest[DESC..].copy_from_slice(&[f.ino, f.fd as u64, 0]);
        let local = Pieces {
            addr: 4096,
            inner: 400,
            outer: vec![],
        };
        let mut mapped = Vec::new();
        let first = route::<i32>(me, &dest, &local, (0, 1), &mut mapped).unwrap();
        assert!(matches!(first, Route::Mapped { .. }));
        // A second block into the same mapping goes by CMA: one `&mut` per mapping.
        let second = route::<i32>(me, &dest, &local, (0, 2), &mut mapped).unwrap();
        assert!(matches!(second, Route::Cma { .. }));
        // Without a shared file: CMA.
        let mut plain = dest;
        plain[DESC] = 0;
        let third = route::<i32>(me, &plain, &local, (0, 3), &mut Vec::new()).unwrap();
        assert!(matches!(third, Route::Cma { remote: r } if r == remote));
        // Sizes that disagree are a mismatch.
        let short = Pieces {
            inner: 396,
            ..local
        };
        let e = route::<i32>(me, &dest, &short, (0, 1), &mut Vec::new());
        assert!(matches!(e, Err(DistError::Mismatch(_))), "{:?}", e.err());
    }
}
