//! Tessera's convention inside a safetensors file: sparse tensors as ordinary parts, and one
//! metadata key, `tessera`, that records the order of the tensors and which parts form which
//! sparse tensor. A plain safetensors reader sees only ordinary dense tensors and a string.
//!
//! - A dense tensor `w` is the file tensor `w`.
//! - A CSR tensor `m` is three file tensors: `m.indptr` and `m.indices` (1-D, its index dtype,
//!   int32 or int64) and `m.data` (1-D, the element dtype), SciPy's and MXNet's parts.
//! - A row-sparse tensor `e` is two: `e.indices` (1-D int64 row ids) and `e.data` (the block
//!   of stored rows).
//! - The metadata key `tessera` holds JSON:
//!   `{"format":1,"order":["w","m","e"],"sparse":{"m":{"stype":"csr","shape":[3,4],
//!   "canonical":true},"e":{"stype":"row_sparse","shape":[100,8]}}}`.
//!
//! Loading a file with the key checks it all: every name in `order` once, every sparse tensor
//! in `order`, every part present, no file tensor left over, and the parts through the checked
//! constructors (docs/design.md O4). A file without the key (written by another program) loads
//! as dense tensors in the order of their data. The key is reserved: user metadata may not
//! use it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::checkpoint::Checkpoint;
use super::elements::MAX_RANK;
use super::origin::Origin;
use crate::dtype::Element;
use crate::error::{ErrorKind, Result, TesseraError};
use crate::sparse::{CsrMatrix, RowSparseArray, SparseError, SparseParts};
use crate::storage::try_with_capacity;
use crate::stype::StorageType;
use crate::tensor::Tensor;
use crate::with_dtype;

/// The reserved metadata key.
pub const KEY: &str = "tessera";

/// The version of the convention written in `format`.
const FORMAT: u64 = 1;

/// The file tensors (dense tensors and sparse parts) of a list of named tensors, and the
/// metadata to write (the user's and the `tessera` key).
pub(crate) struct Flat {
    /// Name and dense tensor, in the caller's order (sparse parts in place of their tensor).
    pub entries: Vec<(String, Tensor)>,
    /// The metadata to write.
    pub metadata: BTreeMap<String, String>,
}

/// The suffixes of the parts of a sparse storage type.
fn part_names(stype: StorageType) -> &'static [&'static str] {
    match stype {
        StorageType::Csr => &["indptr", "indices", "data"],
        StorageType::RowSparse => &["indices", "data"],
        StorageType::Default => &[],
    }
}

/// Lays out `tensors` and `metadata` as file tensors and metadata (see the module doc).
///
/// Errors (`InvalidArgument`): a name given twice or clashing with a sparse part, the name
/// `__metadata__`, the metadata key `tessera`. Sparse parts are re-checked
/// (`SparseError::Modified` for parts written after construction), so no file is written
/// that could not be read back.
pub(crate) fn flatten(
    tensors: &[(&str, &Tensor)],
    metadata: &BTreeMap<String, String>,
) -> Result<Flat> {
    if metadata.contains_key(KEY) {
        return Err(ErrorKind::InvalidArgument(format!(
            "the metadata key {KEY:?} is reserved for Tessera's description of the tensors"
        ))
        .into());
    }
    let mut entries = Vec::with_capacity(tensors.len());
    let (mut order, mut sparse) = (Vec::with_capacity(tensors.len()), serde_json::Map::new());
    for &(name, t) in tensors {
        order.push(Value::from(name));
        // The parts in `part_names` order, and what the key records.
        let (info, parts) = match t.sparse_parts() {
            None => {
                entries.push((name.to_string(), t.clone()));
                continue;
            }
            Some(SparseParts::Csr(m)) => {
                m.validate()?;
                let info = json!({"stype": "csr", "shape": m.shape(),
                    "canonical": m.has_canonical_format()});
                (info, vec![m.indptr(), m.indices(), m.data()])
            }
            Some(SparseParts::RowSparse(r)) => {
                r.validate()?;
                let info = json!({"stype": "row_sparse", "shape": r.shape()});
                (info, vec![r.indices(), r.data()])
            }
        };
        sparse.insert(name.to_string(), info);
        for (suffix, part) in part_names(t.stype()).iter().zip(parts) {
            entries.push((format!("{name}.{suffix}"), part.clone()));
        }
    }
    let mut seen = BTreeSet::new();
    for (name, _) in &entries {
        if name == "__metadata__" || !seen.insert(name.as_str()) {
            return Err(ErrorKind::InvalidArgument(format!(
                "tensor name {name:?} is {} (sparse tensors also use NAME.data, \
                 NAME.indices and NAME.indptr)",
                if name == "__metadata__" {
                    "reserved by safetensors"
                } else {
                    "used twice"
                }
            ))
            .into());
        }
    }
    let mut metadata = metadata.clone();
    let layout = json!({"format": FORMAT, "order": order, "sparse": sparse});
    metadata.insert(KEY.to_string(), layout.to_string());
    Ok(Flat { entries, metadata })
}

/// What the `tessera` key says about one sparse tensor.
struct SparseInfo {
    stype: StorageType,
    shape: Vec<usize>,
    canonical: bool,
}

/// The parsed `tessera` key.
struct Described {
    order: Vec<String>,
    sparse: BTreeMap<String, SparseInfo>,
}

/// Parses the `tessera` key's JSON.
fn parse(origin: &Origin<'_>, text: &str) -> Result<Described> {
    let bad = |what: &str| origin.bad(format!("metadata key {KEY:?}: {what}"));
    let v: Value = serde_json::from_str(text).map_err(|e| bad(&format!("invalid JSON: {e}")))?;
    match v.get("format").and_then(Value::as_u64) {
        Some(FORMAT) => {}
        Some(n) => {
            return Err(bad(&format!(
                "format {n} is newer than this Tessera's ({FORMAT})"
            )))
        }
        None => return Err(bad("no \"format\" number")),
    }
    let order = v
        .get("order")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"order\" list"))?
        .iter()
        .map(|n| n.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("\"order\" holds a non-string"))?;
    let mut sparse = BTreeMap::new();
    let empty = serde_json::Map::new();
    let listed = match v.get("sparse") {
        None => &empty,
        Some(s) => s
            .as_object()
            .ok_or_else(|| bad("\"sparse\" is not an object"))?,
    };
    for (name, info) in listed {
        let what = |w: &str| bad(&format!("sparse tensor {name:?}: {w}"));
        let stype = match info.get("stype").and_then(Value::as_str) {
            Some("csr") => StorageType::Csr,
            Some("row_sparse") => StorageType::RowSparse,
            other => return Err(what(&format!("unknown storage type {other:?}"))),
        };
        let shape = info
            .get("shape")
            .and_then(Value::as_array)
            .and_then(|dims| {
                dims.iter()
                    .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
                    .collect::<Option<Vec<_>>>()
            })
            .filter(|dims| dims.len() <= MAX_RANK)
            .ok_or_else(|| what("\"shape\" is not a list of at most 64 sizes"))?;
        let canonical = match info.get("canonical") {
            None => true,
            Some(c) => c
                .as_bool()
                .ok_or_else(|| what("\"canonical\" is not a bool"))?,
        };
        sparse.insert(
            name.clone(),
            SparseInfo {
                stype,
                shape,
                canonical,
            },
        );
    }
    Ok(Described { order, sparse })
}

/// Rebuilds the named tensors from the file tensors (`entries`, in file order) and the file's
/// `metadata`, checking the convention when the `tessera` key is present.
pub(crate) fn assemble(
    origin: &Origin<'_>,
    entries: Vec<(String, Tensor)>,
    mut metadata: BTreeMap<String, String>,
) -> Result<Checkpoint> {
    let Some(text) = metadata.remove(KEY) else {
        return Ok(Checkpoint {
            tensors: entries,
            metadata,
        });
    };
    let described = parse(origin, &text)?;
    let mut pool: BTreeMap<String, Tensor> = entries.into_iter().collect();
    let mut take = |name: &str| {
        pool.remove(name).ok_or_else(|| {
            origin.bad(format!(
                "tensor {name:?} is listed in the metadata but missing"
            ))
        })
    };
    let mut tensors = Vec::with_capacity(described.order.len());
    let mut seen = BTreeSet::new();
    for name in &described.order {
        if !seen.insert(name.as_str()) {
            return Err(origin.bad(format!("tensor {name:?} is listed twice")));
        }
        let t = match described.sparse.get(name) {
            None => take(name)?,
            Some(info) => {
                let mut parts = Vec::new();
                for suffix in part_names(info.stype) {
                    parts.push(take(&format!("{name}.{suffix}"))?);
                }
                build_sparse(info, parts).map_err(|e| part_error(origin, name, e))?
            }
        };
        tensors.push((name.clone(), t));
    }
    if let Some(name) = described.sparse.keys().find(|n| !seen.contains(n.as_str())) {
        return Err(origin.bad(format!("sparse tensor {name:?} is not in the order list")));
    }
    if let Some(name) = pool.keys().next() {
        return Err(origin.bad(format!(
            "file tensor {name:?} is not described by the metadata"
        )));
    }
    Ok(Checkpoint { tensors, metadata })
}

/// A sparse tensor from its parts (in [`part_names`] order), through the checked
/// constructors.
fn build_sparse(info: &SparseInfo, parts: Vec<Tensor>) -> Result<Tensor> {
    let count = || SparseError::Part(format!("wrong number of parts for {}", info.stype));
    let parts = match info.stype {
        StorageType::Csr => {
            let [indptr, indices, data]: [Tensor; 3] = parts.try_into().map_err(|_| count())?;
            let shape = <[usize; 2]>::try_from(info.shape.as_slice()).map_err(|_| {
                SparseError::Part(format!("csr shape must be 2-D, got {:?}", info.shape))
            })?;
            SparseParts::Csr(match info.canonical {
                true => CsrMatrix::try_from_tensors(shape, indptr, indices, data)?,
                false => CsrMatrix::try_new_noncanonical(
                    shape,
                    index_values("indptr", &indptr)?,
                    index_values("indices", &indices)?,
                    data,
                )?,
            })
        }
        StorageType::RowSparse => {
            let [indices, data]: [Tensor; 2] = parts.try_into().map_err(|_| count())?;
            let rows = index_values("indices", &indices)?;
            SparseParts::RowSparse(RowSparseArray::try_new(&info.shape, rows, data)?)
        }
        StorageType::Default => return Err(count().into()),
    };
    Tensor::from_sparse_parts(parts)
}

/// The values of a 1-D integer part, widened to `i64`.
fn index_values(part: &str, t: &Tensor) -> Result<Vec<i64>> {
    if !t.dtype().is_integer() || t.rank() != 1 {
        return Err(SparseError::Part(format!(
            "{part} must be a 1-D integer tensor, got {} of shape {:?}",
            t.dtype(),
            t.shape()
        ))
        .into());
    }
    with_dtype!(t.dtype(), T => {
        let v = t.to_vec::<T>()?;
        let mut out = try_with_capacity::<i64>(v.len())?;
        out.extend(v.into_iter().map(Element::to_i64));
        Ok(out)
    })
}

/// A failure to rebuild sparse tensor `name`: a format error naming it (the constructor's
/// message says which invariant), except that a refused allocation stays an allocation error.
fn part_error(origin: &Origin<'_>, name: &str, e: TesseraError) -> TesseraError {
    match e.kind() {
        ErrorKind::Allocation(_) => e,
        _ => origin.bad(format!("sparse tensor {name:?}: {e}")),
    }
}
