//! Blocks as lists of contiguous pieces, and moving them: `process_vm_writev` /
//! `process_vm_readv` between processes, slice copies within one.

use tessera::kernels::stream::{should_stream, StreamCopy};
use tessera::{Element, Tensor};

use crate::error::{DistError, Result};
use crate::mpi_views::runs;

/// Outer dims a block descriptor carries; recv blocks with more are staged through a copy.
const MAX_DIMS: usize = 6;
/// Recv blocks whose contiguous pieces are shorter than this many bytes (with more than one
/// piece) are received into a contiguous stand-in and copied after: the kernel pins the
/// remote pages once per remote piece, which costs about as much as copying 4 KiB.
const MIN_REMOTE_PIECE: usize = 4096;
/// Send blocks whose pieces are shorter than this are packed first.
const MIN_LOCAL_PIECE: usize = 256;
/// iovecs per `process_vm_readv` call (Linux's `IOV_MAX`).
const IOV_MAX: usize = 1024;
/// u64 words of one descriptor: bytes, address, inner piece length, dims, then
/// (count, byte stride) per outer dim.
pub(super) const DESC: usize = 4 + 2 * MAX_DIMS;

/// A view's bytes as contiguous pieces: `inner` bytes at `addr`, repeated over the `outer`
/// dims, each (count, byte stride), innermost first.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pieces {
    pub addr: usize,
    pub inner: usize,
    pub outer: Vec<(usize, isize)>,
}

impl Pieces {
    /// The pieces of `t`, whose storage starts at address `base`.
    pub fn of(base: usize, t: &Tensor, itemsize: usize) -> Pieces {
        let runs = runs(t.shape(), t.strides());
        let (inner, outer) = match runs.first() {
            Some(&(n, 1)) => (n * itemsize, &runs[1..]),
            _ => (itemsize, &runs[..]),
        };
        Pieces {
            addr: base + t.layout().offset() * itemsize,
            inner,
            outer: outer
                .iter()
                .map(|&(n, s)| (n, s * itemsize as isize))
                .collect(),
        }
    }

    /// The lowest address of the pieces and one past the highest (`None` on overflow).
    pub fn extent(&self) -> Option<(usize, usize)> {
        let (mut lo, mut hi) = (self.addr, self.addr.checked_add(self.inner)?);
        for &(n, stride) in &self.outer {
            let reach = stride.checked_mul(n.checked_sub(1)? as isize)?;
            if reach < 0 {
                lo = lo.checked_sub(reach.unsigned_abs())?;
            } else {
                hi = hi.checked_add(reach as usize)?;
            }
        }
        Some((lo, hi))
    }

    /// Number of pieces.
    pub fn count(&self) -> usize {
        self.outer.iter().map(|d| d.0).product()
    }

    /// Total bytes.
    pub fn bytes(&self) -> usize {
        self.inner * self.count()
    }

    /// Whether a recv block can be written piece by piece (otherwise it is staged).
    pub fn remote_ok(&self) -> bool {
        self.outer.len() <= MAX_DIMS && (self.inner >= MIN_REMOTE_PIECE || self.count() <= 1)
    }

    /// Whether a send block can be read piece by piece (otherwise it is packed).
    pub fn local_ok(&self) -> bool {
        self.inner >= MIN_LOCAL_PIECE || self.count() <= 1
    }

    /// The pieces as (address, length), in order.
    fn list(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::with_capacity(self.count());
        self.for_each(|a, n| v.push((a, n)));
        v
    }

    /// Calls `f(address, length)` for every piece, in row-major order of the view.
    pub fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        if self.bytes() == 0 {
            return;
        }
        let mut idx = vec![0usize; self.outer.len()];
        let mut addr = self.addr as isize;
        loop {
            f(addr as usize, self.inner);
            let mut d = 0;
            loop {
                let Some(&(n, stride)) = self.outer.get(d) else {
                    return;
                };
                idx[d] += 1;
                addr += stride;
                if idx[d] < n {
                    break;
                }
                addr -= stride * n as isize;
                idx[d] = 0;
                d += 1;
            }
        }
    }

    /// The descriptor words (a direct block has at most [`MAX_DIMS`] outer dims).
    pub fn encode(&self) -> [u64; DESC] {
        let mut w = [0u64; DESC];
        w[..4].copy_from_slice(&[
            self.bytes() as u64,
            self.addr as u64,
            self.inner as u64,
            self.outer.len() as u64,
        ]);
        for (i, &(n, s)) in self.outer.iter().enumerate() {
            w[4 + 2 * i] = n as u64;
            w[5 + 2 * i] = s as i64 as u64;
        }
        w
    }

    /// The pieces a descriptor describes, and its byte count.
    pub fn decode(w: &[u64]) -> Result<(usize, Pieces)> {
        let k = w[3] as usize;
        if k > MAX_DIMS {
            return Err(DistError::Comm(format!("CMA descriptor with {k} dims")));
        }
        let p = Pieces {
            addr: w[1] as usize,
            inner: w[2] as usize,
            outer: (0..k)
                .map(|i| (w[4 + 2 * i] as usize, w[5 + 2 * i] as i64 as isize))
                .collect(),
        };
        Ok((w[0] as usize, p))
    }
}

/// One `process_vm_writev` (`write`) of the `local` pieces (address, length) of this process
/// into the `remote` pieces of process `pid`, or one `process_vm_readv` the other way. Both
/// lists hold at most [`IOV_MAX`] pieces of equal total length.
pub(super) fn transfer(
    pid: libc::pid_t,
    local: &[(usize, usize)],
    remote: &[(usize, usize)],
    write: bool,
) -> Result<()> {
    let iov = |v: &[(usize, usize)]| -> Vec<libc::iovec> {
        v.iter()
            .map(|&(a, n)| libc::iovec {
                iov_base: a as *mut libc::c_void,
                iov_len: n,
            })
            .collect()
    };
    let (l, r) = (iov(local), iov(remote));
    let want: usize = local.iter().map(|p| p.1).sum();
    let (nl, nr) = (l.len() as libc::c_ulong, r.len() as libc::c_ulong);
    // SAFETY: `l` and `r` are arrays of `nl` and `nr` valid iovec structs. Reading
    // (`process_vm_readv`), the kernel writes only into the `local` pieces, which the caller
    // guarantees are memory of this process that nothing else accesses during the call.
    // Writing, it reads the `local` pieces (the caller holds them read-locked) and writes the
    // `remote` pieces of process `pid`, which that process published for this purpose and
    // keeps write-locked and untouched until our done flag arrives (as with a pending
    // `MPI_Irecv`, whose buffer MPI writes while the program holds it borrowed). The kernel
    // checks the remote addresses and reports a bad one as an error.
    let got = unsafe {
        if write {
            libc::process_vm_writev(pid, l.as_ptr(), nl, r.as_ptr(), nr, 0)
        } else {
            libc::process_vm_readv(pid, l.as_ptr(), nl, r.as_ptr(), nr, 0)
        }
    };
    let what = if write {
        "process_vm_writev to"
    } else {
        "process_vm_readv from"
    };
    if got < 0 {
        let e = std::io::Error::last_os_error();
        return Err(DistError::Comm(format!("{what} pid {pid}: {e}")));
    }
    if got as usize != want {
        return Err(DistError::Comm(format!(
            "{what} pid {pid} moved {got} of {want} bytes"
        )));
    }
    Ok(())
}

/// A position in a list of pieces.
struct Cursor {
    pieces: Vec<(usize, usize)>,
    at: usize,
    off: usize,
}

impl Cursor {
    fn new(p: &Pieces) -> Cursor {
        Cursor {
            pieces: p.list(),
            at: 0,
            off: 0,
        }
    }

    fn done(&self) -> bool {
        self.at == self.pieces.len()
    }

    /// Bytes in the next `k` pieces (the current one from the current offset).
    fn ahead(&self, k: usize) -> usize {
        let n: usize = self.pieces[self.at..].iter().take(k).map(|p| p.1).sum();
        n - self.off
    }

    /// Moves `n` bytes ahead, appending the pieces passed over to `out`.
    fn take(&mut self, mut n: usize, out: &mut Vec<(usize, usize)>) {
        while n > 0 {
            let (a, len) = self.pieces[self.at];
            let m = (len - self.off).min(n);
            out.push((a + self.off, m));
            n -= m;
            self.off += m;
            if self.off == len {
                (self.at, self.off) = (self.at + 1, 0);
            }
        }
    }
}

/// Moves the bytes of the `local` pieces into the `remote` pieces of process `pid` (or the
/// other way when reading; equal byte counts), as few system calls as [`IOV_MAX`] allows.
pub(super) fn transfer_block(
    pid: libc::pid_t,
    local: &Pieces,
    remote: &Pieces,
    write: bool,
) -> Result<()> {
    let (mut l, mut r) = (Cursor::new(local), Cursor::new(remote));
    let (mut li, mut ri) = (Vec::new(), Vec::new());
    while !l.done() && !r.done() {
        let n = l.ahead(IOV_MAX).min(r.ahead(IOV_MAX));
        li.clear();
        ri.clear();
        l.take(n, &mut li);
        r.take(n, &mut ri);
        transfer(pid, &li, &ri, write)?;
    }
    Ok(())
}

/// Copies the `from` pieces (addresses inside `src`) into the `to` pieces (inside `dst`),
/// pairing them up like [`transfer_block`], with the core's run copier (which streams
/// blocks larger than the cache).
pub(super) fn copy_pieces<T: Element>(from: &Pieces, src: &[T], to: &Pieces, dst: &mut [T]) {
    let item = std::mem::size_of::<T>();
    let (src_at, dst_at) = (src.as_ptr() as usize, dst.as_ptr() as usize);
    let stream = should_stream(from.bytes(), from.inner.min(to.inner));
    let mut copy = StreamCopy::new(dst, src, stream);
    let (mut l, mut r) = (Cursor::new(from), Cursor::new(to));
    let (mut a, mut b) = (Vec::with_capacity(1), Vec::with_capacity(1));
    while !l.done() && !r.done() {
        let n = l.ahead(1).min(r.ahead(1));
        a.clear();
        b.clear();
        l.take(n, &mut a);
        r.take(n, &mut b);
        copy.run((b[0].0 - dst_at) / item, (a[0].0 - src_at) / item, n / item);
    }
    copy.finish();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera::index::IndexSpec;
    use tessera::DType;

    fn collect(p: &Pieces) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        p.for_each(|a, n| v.push((a, n)));
        v
    }

    #[test]
    fn pieces_of_a_column_block_are_its_row_segments() {
        let t = Tensor::zeros(&[3, 8], DType::F32).unwrap();
        let block = t
            .index(&[IndexSpec::All, IndexSpec::interval(2, 6)])
            .unwrap();
        let p = Pieces::of(1000, &block, 4);
        assert_eq!(p.inner, 16);
        assert_eq!(collect(&p), vec![(1008, 16), (1040, 16), (1072, 16)]);
        assert_eq!(p.bytes(), 48);
        assert!(!p.remote_ok() && !p.local_ok(), "16-byte pieces are staged");
        let rows = t.index(&[IndexSpec::interval(1, 3)]).unwrap();
        let q = Pieces::of(0, &rows, 4);
        assert_eq!(collect(&q), vec![(32, 64)]);
        assert!(q.remote_ok() && q.local_ok());
        let (bytes, back) = Pieces::decode(&p.encode()).unwrap();
        assert_eq!((bytes, back), (48, p));
    }

    #[test]
    fn pieces_follow_negative_and_element_strides() {
        let t = Tensor::zeros(&[2, 3], DType::F64).unwrap();
        let flipped = t.flip(Some(&[0])).unwrap();
        assert_eq!(
            collect(&Pieces::of(0, &flipped, 8)),
            vec![(24, 24), (0, 24)]
        );
        let col = t.index(&[IndexSpec::All, IndexSpec::Point(1)]).unwrap();
        assert_eq!(collect(&Pieces::of(0, &col, 8)), vec![(8, 8), (32, 8)]);
        let empty = t.index(&[IndexSpec::interval(0, 0)]).unwrap();
        assert_eq!(Pieces::of(0, &empty, 8).bytes(), 0);
        assert!(collect(&Pieces::of(0, &empty, 8)).is_empty());
    }

    #[test]
    fn transfers_pair_pieces_of_different_shapes() {
        // Within this very process: 3 pieces of 4 bytes into 2 of 6, both ways.
        let src: Vec<u8> = (0..12).collect();
        let mut dst = [0u8; 12];
        let from = Pieces {
            addr: src.as_ptr() as usize,
            inner: 4,
            outer: vec![(3, 4)],
        };
        let to = Pieces {
            addr: dst.as_mut_ptr() as usize,
            inner: 6,
            outer: vec![(2, 6)],
        };
        let me = std::process::id() as libc::pid_t;
        match transfer_block(me, &to, &from, false) {
            Err(e) if e.to_string().contains("not permitted") => {
                eprintln!("cross-memory attach is not permitted here: {e}");
                return;
            }
            r => r.unwrap(),
        }
        assert_eq!(dst.to_vec(), src);
        let mut back = [0u8; 12];
        let into = Pieces {
            addr: back.as_mut_ptr() as usize,
            inner: 2,
            outer: vec![(2, 6), (3, 2)],
        };
        // `into` lists bytes 0,1, 6,7, 2,3, 8,9, 4,5, 10,11: a column-major walk.
        transfer_block(me, &from, &into, true).unwrap();
        assert_eq!(back.to_vec(), vec![0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11]);
        let bad = Pieces {
            addr: 8,
            inner: 12,
            outer: vec![],
        };
        assert!(transfer_block(me, &to, &bad, false).is_err());
    }

    #[test]
    fn own_copies_of_large_blocks_stream_and_match() {
        // The middle half of the columns of a [2048, 2048] f32 (8 MiB in 4 KiB pieces, so
        // the core's run copier streams it) into a contiguous [2048, 1024], and a 256 KiB
        // block of it (plain copies), against element loops.
        let n = 2048usize;
        let src = Tensor::arange(0, (n * n) as i64, 1, DType::F32)
            .and_then(|t| t.reshape(&[n as isize, n as isize]))
            .unwrap();
        let values = src.to_vec::<f32>().unwrap();
        for rows in [n, 64] {
            let block = src
                .index(&[
                    IndexSpec::interval(0, rows as isize),
                    IndexSpec::interval(512, 1536),
                ])
                .unwrap();
            let out = Tensor::zeros(&[rows, 1024], DType::F32).unwrap();
            let (s, o) = (src.storage().unwrap(), out.storage().unwrap());
            let (sg, mut og) = (s.read::<f32>().unwrap(), o.write::<f32>().unwrap());
            let from = Pieces::of(sg.as_ptr() as usize, &block, 4);
            let to = Pieces::of(og.as_ptr() as usize, &out, 4);
            assert_eq!(should_stream(from.bytes(), from.inner), rows == n);
            copy_pieces(&from, &sg, &to, &mut og);
            let want: Vec<f32> = (0..rows * 1024)
                .map(|k| values[k / 1024 * n + 512 + k % 1024])
                .collect();
            assert!(og[..] == want[..], "{rows} rows");
        }
    }

    #[test]
    fn cursors_batch_by_the_shorter_side() {
        let many = Pieces {
            addr: 0,
            inner: 10,
            outer: vec![(2500, 20)],
        };
        let mut c = Cursor::new(&many);
        assert_eq!(c.ahead(IOV_MAX), 10 * IOV_MAX);
        let mut out = Vec::new();
        c.take(15, &mut out);
        assert_eq!(out, vec![(0, 10), (20, 5)]);
        assert_eq!(c.ahead(2), 15);
        assert!(!c.done());
    }
}
