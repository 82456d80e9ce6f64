//! Checkpoints in the safetensors format: an 8-byte little-endian header length, a JSON
//! header (`{"name": {"dtype", "shape", "data_offsets"}, "__metadata__": {...}}`, padded with
//! spaces to a multiple of 8 bytes), then every tensor's bytes, row-major, little-endian,
//! back to back.
//!
//! The header is read and validated with the `safetensors` crate's [`Metadata`] (offsets
//! contiguous from 0, sizes equal to shape × dtype size, no overflow), then checked against
//! the file's length before any tensor is allocated: a header cannot make the reader allocate
//! more than the file holds. Tensors are then read one by one straight into fresh storage.
//!
//! Writing builds the header with the crate's [`TensorInfo`] and [`Dtype`] and streams each
//! tensor's logical elements; the header is built in a fixed order (a `serde_json` map, the
//! metadata from a `BTreeMap`), so equal inputs give equal bytes (the crate's own writer
//! orders metadata by a randomly seeded hash). Tensors are laid out
//! by decreasing item size (as the crate's writer does), so every tensor's data starts at a
//! multiple of its item size and readers that map the file can use it in place.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::Dtype;
use serde_json::Value;

use super::checkpoint::Checkpoint;
use super::convention::{assemble, flatten, Flat};
use super::elements::{byte_len, check_rank_to_save, read_dense, write_dense, MAX_RANK};
use super::file::{open, read_all, write_atomically};
use super::origin::Origin;
use crate::dtype::DType;
use crate::error::{ErrorKind, Result, TesseraError};
use crate::storage::{try_vec, try_with_capacity};
use crate::tensor::Tensor;

/// The largest header the `safetensors` crate reads (100 MB).
const MAX_HEADER: u64 = 100_000_000;

const FORMAT: &str = "safetensors";

/// The safetensors dtype of a Tessera dtype: every one but the complex dtypes, which the
/// format lacks ([`ErrorKind::DType`]; save the real and imaginary parts instead).
fn to_file_dtype(d: DType) -> Result<Dtype> {
    Ok(match d {
        DType::Bool => Dtype::BOOL,
        DType::U8 => Dtype::U8,
        DType::I8 => Dtype::I8,
        DType::U16 => Dtype::U16,
        DType::I16 => Dtype::I16,
        DType::U32 => Dtype::U32,
        DType::U64 => Dtype::U64,
        DType::I32 => Dtype::I32,
        DType::I64 => Dtype::I64,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        DType::C64 | DType::C128 => {
            return Err(ErrorKind::DType(crate::error::DTypeFacts::Unsupported {
                op: "safetensors save".into(),
                dtype: d,
                hint: " (the safetensors format has no complex dtype: save the real and \
                       imaginary parts, or use io::save_npy)",
            })
            .into())
        }
    })
}

/// The Tessera dtype of a safetensors dtype, if Tessera has it.
fn from_file_dtype(d: Dtype) -> Option<DType> {
    Some(match d {
        Dtype::BOOL => DType::Bool,
        Dtype::U8 => DType::U8,
        Dtype::I8 => DType::I8,
        Dtype::U16 => DType::U16,
        Dtype::I16 => DType::I16,
        Dtype::U32 => DType::U32,
        Dtype::U64 => DType::U64,
        Dtype::I32 => DType::I32,
        Dtype::I64 => DType::I64,
        Dtype::F16 => DType::F16,
        Dtype::BF16 => DType::BF16,
        Dtype::F32 => DType::F32,
        Dtype::F64 => DType::F64,
        _ => return None,
    })
}

/// A header ready to write: its bytes (length prefix included) and the tensors in file order.
struct Prepared {
    header: Vec<u8>,
    tensors: Vec<Tensor>,
    data_len: usize,
}

/// Lays out `tensors` and `metadata` (see [`flatten`]) and builds the header.
fn prepare(tensors: &[(&str, &Tensor)], metadata: &BTreeMap<String, String>) -> Result<Prepared> {
    let Flat {
        entries: mut flat,
        metadata,
    } = flatten(tensors, metadata)?;
    // Stable: equal item sizes keep the caller's order.
    flat.sort_by_key(|(_, t)| std::cmp::Reverse(t.dtype().itemsize()));
    let mut header = serde_json::Map::new();
    let mut offset = 0usize;
    for (name, t) in &flat {
        check_rank_to_save(t, &format!("tensor {name:?}"))?;
        let bytes = byte_len(t.numel(), t.dtype())?;
        let end = offset.checked_add(bytes).ok_or_else(|| {
            ErrorKind::ShapeOverflow("the tensors' bytes add up past usize".into())
        })?;
        let info = TensorInfo {
            dtype: to_file_dtype(t.dtype())?,
            shape: t.shape().to_vec(),
            data_offsets: (offset, end),
        };
        let info = serde_json::to_value(info).map_err(|e| {
            TesseraError::from(ErrorKind::InvalidArgument(format!("tensor {name:?}: {e}")))
        })?;
        header.insert(name.clone(), info);
        offset = end;
    }
    let meta = metadata.into_iter().map(|(k, v)| (k, Value::String(v)));
    header.insert("__metadata__".into(), Value::Object(meta.collect()));
    let mut text = Value::Object(header).to_string().into_bytes();
    text.resize(text.len().next_multiple_of(8), b' ');
    if text.len() as u64 > MAX_HEADER {
        return Err(ErrorKind::InvalidArgument(format!(
            "the safetensors header would be {} bytes, past the format's limit of {MAX_HEADER}",
            text.len()
        ))
        .into());
    }
    let mut out = try_with_capacity::<u8>(8 + text.len())?;
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(&text);
    Ok(Prepared {
        header: out,
        tensors: flat.into_iter().map(|(_, t)| t).collect(),
        data_len: offset,
    })
}

/// Writes a prepared checkpoint to `w`.
fn write_prepared(w: &mut impl Write, origin: &Origin<'_>, p: &Prepared) -> Result<()> {
    origin.write_all(w, &p.header)?;
    for t in &p.tensors {
        write_dense(w, origin, t)?;
    }
    Ok(())
}

/// Saves named tensors and a metadata map to `path` in the safetensors format.
///
/// Every dtype is kept (bool, u8, i8, i32, i64, f16, bf16, f32, f64). A view (transposed,
/// flipped, expanded, sliced) saves its logical elements, row-major. A sparse tensor is
/// saved as its parts (`NAME.indptr`, `NAME.indices`, `NAME.data` for CSR; `NAME.indices`,
/// `NAME.data` for row-sparse) and the metadata key `tessera` records the order and the
/// sparse layout, so [`load`] gives the same tensors back and any safetensors reader sees
/// ordinary dense tensors. The file is replaced atomically (a temporary file renamed over
/// it).
///
/// Errors: `InvalidArgument` for a name used twice, the name `__metadata__`, the metadata
/// key `tessera` or a tensor of more than 64 dims; `Sparse(Modified)` for sparse parts written after construction;
/// `Allocation` when a view cannot be copied; `Io` when the OS refuses the file.
///
/// ```
/// use std::collections::BTreeMap;
/// use tessera::{io, DType, Tensor};
/// let path = std::env::temp_dir().join(format!("tessera-doc-save-{}.safetensors", std::process::id()));
/// let w = Tensor::arange(0, 6, 1, DType::F32).unwrap().view(&[2, 3]).unwrap();
/// let meta = BTreeMap::from([("step".to_string(), "100".to_string())]);
/// io::save(&path, &[("w.T", &w.t().unwrap())], &meta).unwrap();
/// let ckpt = io::load(&path).unwrap();
/// assert_eq!(ckpt.metadata, meta);
/// let back = ckpt.get("w.T").unwrap();
/// assert_eq!(back.shape(), &[3, 2]);
/// assert_eq!(back.to_vec::<f32>().unwrap(), vec![0., 3., 1., 4., 2., 5.]);
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn save(
    path: impl AsRef<Path>,
    tensors: &[(&str, &Tensor)],
    metadata: &BTreeMap<String, String>,
) -> Result<()> {
    let path = path.as_ref();
    let origin = Origin::file(FORMAT, path);
    let prepared = prepare(tensors, metadata)?;
    write_atomically(&origin, path, |w| write_prepared(w, &origin, &prepared))
}

/// The safetensors bytes [`save`] would write (for pickling, or sending over a network).
///
/// ```
/// use std::collections::BTreeMap;
/// use tessera::{io, DType, Tensor};
/// let t = Tensor::ones(&[2], DType::BF16).unwrap();
/// let bytes = io::serialize(&[("t", &t)], &BTreeMap::new()).unwrap();
/// assert_eq!(&bytes[8..10], b"{\"");
/// assert_eq!(io::deserialize(&bytes).unwrap().get("t").unwrap().dtype(), DType::BF16);
/// ```
pub fn serialize(
    tensors: &[(&str, &Tensor)],
    metadata: &BTreeMap<String, String>,
) -> Result<Vec<u8>> {
    let origin = Origin::memory(FORMAT);
    let prepared = prepare(tensors, metadata)?;
    let total = prepared.header.len().checked_add(prepared.data_len);
    let total = total
        .ok_or_else(|| TesseraError::from(ErrorKind::ShapeOverflow("checkpoint size".into())))?;
    let mut out = try_with_capacity::<u8>(total)?;
    write_prepared(&mut out, &origin, &prepared)?;
    Ok(out)
}

/// Loads a safetensors file: its tensors, in the order they were saved (for a file without
/// Tessera's `tessera` metadata key: in the order of their data), and its metadata. Files
/// written by other programs load too, when every dtype is one Tessera has.
///
/// Everything is validated and a bad file is an error, never a panic or an abort:
/// `Io(IoFacts::Format)` for a truncated file, a header whose sizes or offsets do not match
/// the file, an unknown dtype, more than 64 dims or sparse parts that break their invariants;
/// `Io(IoFacts::Os)` when the OS refuses (missing file, no permission, a directory);
/// `Allocation` when memory runs out. No allocation is sized past the file's length.
///
/// ```
/// use tessera::{io, ErrorKind, IoFacts};
/// let path = std::env::temp_dir().join(format!("tessera-doc-bad-{}.safetensors", std::process::id()));
/// // A header that claims 2^40 bytes of JSON.
/// std::fs::write(&path, (1u64 << 40).to_le_bytes()).unwrap();
/// let e = io::load(&path).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::Io(IoFacts::Format { .. })), "{e}");
/// std::fs::remove_file(&path).unwrap();
/// let e = io::load(&path).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::Io(IoFacts::Os { .. })), "{e}");
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<Checkpoint> {
    let path = path.as_ref();
    let origin = Origin::file(FORMAT, path);
    let mut input = open(&origin, path)?;
    match input.len {
        Some(len) => read_checkpoint(&mut input.reader, len, &origin),
        None => deserialize_from(&read_all(&origin, &mut input.reader)?, &origin),
    }
}

/// Reads safetensors bytes (what [`serialize`] returns, or a file's contents), with the
/// checks of [`load`].
pub fn deserialize(bytes: &[u8]) -> Result<Checkpoint> {
    deserialize_from(bytes, &Origin::memory(FORMAT))
}

fn deserialize_from(bytes: &[u8], origin: &Origin<'_>) -> Result<Checkpoint> {
    read_checkpoint(&mut &bytes[..], bytes.len() as u64, origin)
}

/// Reads a checkpoint of `len` bytes from `r`.
fn read_checkpoint(r: &mut impl Read, len: u64, origin: &Origin<'_>) -> Result<Checkpoint> {
    if len < 8 {
        return Err(origin.bad(format!(
            "{len} bytes is shorter than the 8-byte header length"
        )));
    }
    let mut prefix = [0u8; 8];
    origin.read_exact(r, &mut prefix, "the header length")?;
    let n = u64::from_le_bytes(prefix);
    if n > MAX_HEADER {
        return Err(origin.bad(format!(
            "the header length {n} is past the format's limit of {MAX_HEADER} bytes"
        )));
    }
    if n > len - 8 {
        return Err(origin.bad(format!(
            "the header length {n} runs past the end of the data ({len} bytes)"
        )));
    }
    let mut header = try_vec(0u8, n as usize)?;
    origin.read_exact(r, &mut header, "the header")?;
    let text = std::str::from_utf8(&header)
        .map_err(|e| origin.bad(format!("the header is not UTF-8: {e}")))?;
    let meta: Metadata =
        serde_json::from_str(text).map_err(|e| origin.bad(format!("header: {e}")))?;
    let body = len - 8 - n;
    if meta.data_len() as u64 != body {
        return Err(origin.bad(format!(
            "the header describes {} bytes of tensor data but {body} bytes follow it",
            meta.data_len()
        )));
    }
    let mut names = meta.offset_keys();
    // Equal offsets happen only for empty tensors: order those by name, for a stable order.
    names.sort_by(|a, b| {
        let key = |n: &String| meta.info(n).map(|i| i.data_offsets);
        key(a).cmp(&key(b)).then_with(|| a.cmp(b))
    });
    let mut entries = Vec::with_capacity(names.len());
    for name in names {
        let info = meta
            .info(&name)
            .ok_or_else(|| origin.bad(format!("tensor {name:?} has no entry")))?;
        let dtype = from_file_dtype(info.dtype).ok_or_else(|| {
            origin.bad(format!(
                "tensor {name:?} has dtype {}, which Tessera does not have",
                info.dtype
            ))
        })?;
        if info.shape.len() > MAX_RANK {
            return Err(origin.bad(format!(
                "tensor {name:?} has {} dims, more than {MAX_RANK}",
                info.shape.len()
            )));
        }
        let what = format!("tensor {name:?}");
        let t = read_dense(r, origin, dtype, &info.shape, false, &what)?;
        entries.push((name, t));
    }
    origin.expect_end(r)?;
    let metadata = meta
        .metadata()
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assemble(origin, entries, metadata)
}
