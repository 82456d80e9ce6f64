//! One dense tensor in NumPy's `.npy` format: the magic `\x93NUMPY`, the version, the header
//! length, a dict literal header (see `npy_header.rs`) padded so the data starts at a multiple
//! of 64 bytes, then the elements.
//!
//! Written: version 1.0, C order, little-endian. Read: versions 1.0, 2.0 and 3.0, C or
//! Fortran order (Fortran data comes back as a view with Fortran strides, as NumPy's `np.load`
//! keeps it), little- or big-endian (swapped while reading). Both ways at most 64 dims
//! (NumPy's limit). bfloat16 has no NumPy dtype: saving it is a dtype error, and no `.npy`
//! file can hold it.

use std::io::Read;
use std::path::Path;

use super::elements::{byte_len, check_rank_to_save, read_dense, write_dense, MAX_RANK};
use super::file::{open, read_all, write_atomically};
use super::npy_header::{descr, format, parse};
use super::origin::Origin;
use crate::error::{DTypeFacts, ErrorKind, Result, TesseraError};
use crate::storage::try_vec;
use crate::tensor::Tensor;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Headers longer than this are refused (NumPy refuses 10 000 bytes unless told otherwise).
const MAX_HEADER: usize = 1 << 20;

/// The data starts at a multiple of this many bytes (NumPy's `ARRAY_ALIGN`).
const ALIGN: usize = 64;

const FORMAT: &str = "npy";

/// The bytes before the data of a `.npy` file holding `t`: magic, version, length, header.
fn preamble(t: &Tensor) -> Result<Vec<u8>> {
    if t.stype() != crate::StorageType::Default {
        return Err(ErrorKind::InvalidArgument(format!(
            "save_npy: .npy holds dense arrays, got a {} tensor; use cast_storage(default) \
             first, or io::save, which keeps the storage type",
            t.stype()
        ))
        .into());
    }
    let d = descr(t.dtype()).ok_or_else(|| {
        ErrorKind::DType(DTypeFacts::Unsupported {
            op: "save_npy".into(),
            dtype: t.dtype(),
            hint: " (NumPy has no bfloat16: convert with astype(float32) first, or use \
                   io::save, whose safetensors format has bfloat16)",
        })
    })?;
    check_rank_to_save(t, "save_npy: the tensor")?;
    let dict = format(d, t.shape());
    // The header ends with '\n' and is padded with spaces so that the data is aligned. At
    // most 64 dims keep it far below the 65535 bytes of format 1.0.
    let total = (MAGIC.len() + 2 + 2 + dict.len() + 1).next_multiple_of(ALIGN);
    let header_len = u16::try_from(total - MAGIC.len() - 4).map_err(|_| {
        TesseraError::from(ErrorKind::InvalidArgument(
            "save_npy: header too long".into(),
        ))
    })?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    Ok(out)
}

/// Saves one dense tensor to `path` in NumPy's `.npy` format (C order, little-endian), which
/// `np.load` reads. A view saves its logical elements. The file is replaced atomically.
///
/// Errors: `DType` for bfloat16 (NumPy has no such dtype), `InvalidArgument` for a sparse
/// tensor (`.npy` holds dense arrays) or more than 64 dims, `Io` when the OS refuses the file.
///
/// ```
/// use tessera::{io, DType, Tensor};
/// let path = std::env::temp_dir().join(format!("tessera-doc-{}.npy", std::process::id()));
/// let t = Tensor::arange(0, 6, 1, DType::I32).unwrap().view(&[2, 3]).unwrap();
/// io::save_npy(&path, &t.flip(None).unwrap()).unwrap();
/// let back = io::load_npy(&path).unwrap();
/// assert_eq!(back.shape(), &[2, 3]);
/// assert_eq!(back.to_vec::<i32>().unwrap(), vec![5, 4, 3, 2, 1, 0]);
/// assert!(io::save_npy(&path, &Tensor::ones(&[1], DType::BF16).unwrap()).is_err());
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn save_npy(path: impl AsRef<Path>, t: &Tensor) -> Result<()> {
    let path = path.as_ref();
    let origin = Origin::file(FORMAT, path);
    let head = preamble(t)?;
    write_atomically(&origin, path, |w| {
        origin.write_all(w, &head)?;
        write_dense(w, &origin, t)
    })
}

/// Loads the array of a `.npy` file (NumPy format 1.0, 2.0 or 3.0) as a tensor: bool,
/// uint8, int8, int32, int64, float16, float32 and float64, C or Fortran order, little- or
/// big-endian.
///
/// Errors, never a panic or an abort: `Io(IoFacts::Format)` for a file that is not `.npy`, a
/// header Tessera cannot read (a dtype it lacks, a structured or object dtype, unknown keys,
/// more than 64 dims),
/// or data shorter or longer than the header says; `Io(IoFacts::Os)` when the OS refuses;
/// `Allocation` when memory runs out (never past the file's length).
pub fn load_npy(path: impl AsRef<Path>) -> Result<Tensor> {
    let path = path.as_ref();
    let origin = Origin::file(FORMAT, path);
    let mut input = open(&origin, path)?;
    match input.len {
        Some(len) => read_npy(&mut input.reader, len, &origin),
        None => {
            let bytes = read_all(&origin, &mut input.reader)?;
            read_npy(&mut &bytes[..], bytes.len() as u64, &origin)
        }
    }
}

/// Reads a `.npy` array of `len` bytes from `r`.
fn read_npy(r: &mut impl Read, len: u64, origin: &Origin<'_>) -> Result<Tensor> {
    let mut start = [0u8; 8];
    if len < 8 {
        return Err(origin.bad(format!("{len} bytes is too short for a .npy file")));
    }
    origin.read_exact(r, &mut start, "the magic string")?;
    if &start[..6] != MAGIC {
        return Err(origin.bad("it does not start with \\x93NUMPY"));
    }
    let len_bytes = match (start[6], start[7]) {
        (1, 0) => 2,
        (2 | 3, 0) => 4,
        (major, minor) => {
            return Err(origin.bad(format!(
                "format version {major}.{minor} (Tessera reads 1.0, 2.0 and 3.0)"
            )))
        }
    };
    let mut raw = [0u8; 4];
    origin.read_exact(r, &mut raw[..len_bytes], "the header length")?;
    let header_len = u32::from_le_bytes(raw) as usize;
    let consumed = 8 + len_bytes as u64 + header_len as u64;
    if header_len > MAX_HEADER || consumed > len {
        return Err(origin.bad(format!(
            "the header length {header_len} is past the end of the file or the limit of \
             {MAX_HEADER} bytes"
        )));
    }
    let mut text = try_vec(0u8, header_len)?;
    origin.read_exact(r, &mut text, "the header")?;
    let h = parse(&text).map_err(|e| origin.bad(format!("header: {e}")))?;
    if h.shape.len() > MAX_RANK {
        return Err(origin.bad(format!(
            "the shape has {} dims, more than {MAX_RANK}",
            h.shape.len()
        )));
    }
    let numel = crate::storage::checked_numel(&h.shape)
        .map_err(|_| origin.bad(format!("shape {:?} has too many elements", h.shape)))?;
    let bytes = byte_len(numel, h.dtype)
        .map_err(|_| origin.bad(format!("shape {:?} does not fit in memory", h.shape)))?;
    if bytes as u64 != len - consumed {
        return Err(origin.bad(format!(
            "the header describes {bytes} bytes of data ({} {:?}) but {} bytes follow it",
            h.dtype,
            h.shape,
            len - consumed
        )));
    }
    let t = if h.fortran_order {
        // Fortran order is C order of the reversed shape, seen through reversed axes.
        let reversed: Vec<usize> = h.shape.iter().rev().copied().collect();
        let t = read_dense(r, origin, h.dtype, &reversed, h.big_endian, "the array")?;
        let axes: Vec<isize> = (0..h.shape.len() as isize).rev().collect();
        t.permute(&axes)?
    } else {
        read_dense(r, origin, h.dtype, &h.shape, h.big_endian, "the array")?
    };
    origin.expect_end(r)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    #[test]
    fn preambles_are_aligned_and_versioned() {
        let one = Tensor::zeros(&[1], DType::F32).unwrap();
        for shape in [&[][..], &[3], &[1 << 40, 2]] {
            let t = one.as_strided(shape, &vec![0; shape.len()], 0).unwrap();
            let p = preamble(&t).unwrap();
            assert_eq!(p.len() % ALIGN, 0);
            assert_eq!((p[6], p[7], *p.last().unwrap()), (1, 0, b'\n'));
        }
        // 64 dims at most, both ways.
        let t = Tensor::zeros(&[1], DType::U8).unwrap();
        let mut bytes = preamble(&t.view(&[1; 64]).unwrap()).unwrap();
        bytes.push(7);
        let back = read_npy(&mut &bytes[..], bytes.len() as u64, &Origin::memory("npy")).unwrap();
        assert_eq!((back.rank(), back.to_vec::<u8>().unwrap()), (64, vec![7]));
        let e = preamble(&t.view(&[1; 65]).unwrap()).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidArgument(_)), "{e}");
    }
}
