//! Dense tensors to and from byte streams: the logical elements in row-major (C) order, each
//! in little-endian byte order (both formats' order; `.npy` files may also be big-endian).
//!
//! Reading allocates the tensor first (fallibly: [`ErrorKind::Allocation`], never an
//! abort) and then fills it chunk by chunk from the stream, so the file's bytes are never held
//! twice. Callers check the declared size against the bytes the file holds before calling
//! [`read_dense`], so a header that lies cannot make it allocate more than the file's length.
//! A `bool` byte other than 0 and 1 reads as `true` (NumPy's rule), since only 0 and 1 are
//! valid `bool` storage (docs/design.md H7).

use std::io::{Read, Write};

use half::{bf16, f16};

use super::origin::Origin;
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result, TesseraError};
use crate::storage::try_vec;
use crate::tensor::Tensor;
use crate::with_dtype;

/// Bytes moved per read or write call (a multiple of every item size).
const CHUNK: usize = 1 << 20;

/// The largest rank a file may declare (NumPy's `NPY_MAXDIMS`). Files are read only up to it,
/// and tensors of a larger rank are not written, so every file written can be read back: a
/// file declaring thousands of dims would otherwise intern a shape descriptor whose trie path
/// is that deep (the shape cache removes paths recursively).
pub(crate) const MAX_RANK: usize = 64;

/// `InvalidArgument` for a tensor whose rank is past [`MAX_RANK`] (`what` names it).
pub(crate) fn check_rank_to_save(t: &Tensor, what: &str) -> Result<()> {
    match t.rank() <= MAX_RANK {
        true => Ok(()),
        false => Err(ErrorKind::InvalidArgument(format!(
            "{what} has rank {}; files hold at most {MAX_RANK} dims (NumPy's limit)",
            t.rank()
        ))
        .into()),
    }
}

/// An element type with a fixed byte encoding.
pub(crate) trait FileElement: Element {
    /// Bytes per element.
    const SIZE: usize;
    /// The element encoded in `b` (`SIZE` bytes), little- or big-endian.
    fn decode(b: &[u8], big_endian: bool) -> Self;
    /// Appends the little-endian encoding.
    fn encode_le(self, out: &mut Vec<u8>);
}

macro_rules! file_element {
    ($($t:ty),*) => {$(
        impl FileElement for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn decode(b: &[u8], big_endian: bool) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                if big_endian { <$t>::from_be_bytes(a) } else { <$t>::from_le_bytes(a) }
            }
            #[inline]
            fn encode_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
file_element!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, f16, bf16);

macro_rules! complex_file_element {
    ($($t:ident($f:ty)),*) => {$(
        /// The real part, then the imaginary part (NumPy's layout).
        impl FileElement for crate::complex::$t {
            const SIZE: usize = 2 * std::mem::size_of::<$f>();
            #[inline]
            fn decode(b: &[u8], big_endian: bool) -> Self {
                let (re, im) = b.split_at(Self::SIZE / 2);
                Self::new(<$f>::decode(re, big_endian), <$f>::decode(im, big_endian))
            }
            #[inline]
            fn encode_le(self, out: &mut Vec<u8>) {
                self.re().encode_le(out);
                self.im().encode_le(out);
            }
        }
    )*};
}
complex_file_element!(C64(f32), C128(f64));

impl FileElement for bool {
    const SIZE: usize = 1;
    #[inline]
    fn decode(b: &[u8], _: bool) -> Self {
        b[0] != 0
    }
    #[inline]
    fn encode_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
}

/// The byte count of `numel` elements of `dtype`, or [`ErrorKind::ShapeOverflow`].
pub(crate) fn byte_len(numel: usize, dtype: DType) -> Result<usize> {
    numel
        .checked_mul(dtype.itemsize())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            ErrorKind::ShapeOverflow(format!("{numel} elements of {dtype} do not fit in memory"))
                .into()
        })
}

/// A new contiguous tensor of `shape` and `dtype` read from the next bytes of `r`; `what`
/// names the tensor in errors (a short stream is a format error).
pub(crate) fn read_dense(
    r: &mut impl Read,
    origin: &Origin<'_>,
    dtype: DType,
    shape: &[usize],
    big_endian: bool,
    what: &str,
) -> Result<Tensor> {
    // Every element is overwritten below (bool storage comes zeroed either way).
    let t = Tensor::empty(shape, dtype)?;
    with_dtype!(dtype, T => fill::<T>(r, origin, &t, big_endian, what))?;
    Ok(t)
}

fn fill<T: FileElement>(
    r: &mut impl Read,
    origin: &Origin<'_>,
    t: &Tensor,
    big_endian: bool,
    what: &str,
) -> Result<()> {
    // A fresh storage: no other handle, so no other guard on it.
    let storage = t.storage()?;
    let mut dst = storage.write::<T>()?;
    let mut buf = try_vec(0u8, CHUNK.min(dst.len() * T::SIZE))?;
    for out in dst.chunks_mut(CHUNK / T::SIZE) {
        let bytes = &mut buf[..out.len() * T::SIZE];
        origin.read_exact(r, bytes, what)?;
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *o = T::decode(b, big_endian);
        }
    }
    Ok(())
}

/// Writes the logical elements of dense `t` (any layout: transposed, flipped, expanded) to
/// `w`, row-major, little-endian: [`byte_len`]`(t.numel(), t.dtype())` bytes. A
/// non-contiguous tensor is copied first (fallibly); a contiguous one is read in place under
/// one read guard of its storage.
pub(crate) fn write_dense(w: &mut impl Write, origin: &Origin<'_>, t: &Tensor) -> Result<()> {
    let c = t.contiguous()?;
    with_dtype!(c.dtype(), T => put::<T>(w, origin, &c))
}

fn put<T: FileElement>(w: &mut impl Write, origin: &Origin<'_>, c: &Tensor) -> Result<()> {
    let (off, n) = (c.layout().offset(), c.numel());
    if n == 0 {
        // An empty view may have any offset, even past its storage's end.
        return Ok(());
    }
    let guard = c.storage()?.read::<T>()?;
    let elems = guard.get(off..off + n).ok_or_else(|| {
        TesseraError::from(ErrorKind::OutOfBounds(format!(
            "{n} elements at offset {off}"
        )))
    })?;
    let mut buf = crate::storage::try_with_capacity::<u8>(CHUNK.min(n * T::SIZE))?;
    for chunk in elems.chunks(CHUNK / T::SIZE) {
        buf.clear();
        for &x in chunk {
            x.encode_le(&mut buf);
        }
        origin.write_all(w, &buf)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_round_trips_through_bytes_and_big_endian_decodes() {
        let origin = Origin::memory("test");
        for d in DType::ALL {
            let t = Tensor::arange(0, 5, 1, d).unwrap();
            let mut bytes = Vec::new();
            write_dense(&mut bytes, &origin, &t).unwrap();
            assert_eq!(bytes.len(), byte_len(5, d).unwrap());
            let back = read_dense(&mut &bytes[..], &origin, d, &[5], false, "t").unwrap();
            assert_eq!(format!("{back:?}"), format!("{t:?}"));
        }
        assert_eq!(i32::decode(&[0, 0, 1, 2], true), 258);
        assert!(bool::decode(&[7], false));
        let short = [0u8; 3];
        let e = read_dense(&mut &short[..], &origin, DType::I32, &[1], false, "x");
        assert!(e.unwrap_err().to_string().contains("inside x"));
    }
}
