//! Advanced indexing keys (docs/design.md X1-X5): a key mixing index specs with integer
//! arrays and boolean masks, planned the way NumPy combines them.
//!
//! A key is planned into a basic part and a gather: every advanced item (an integer array, a
//! boolean mask's `nonzero` arrays, and, once the key holds any array, every integer point)
//! keeps its dim in a basic view (`All`; a 0-d boolean adds a `NewAxis` indexed by `[0]` or
//! `[]`), and the index arrays, broadcast together to one shape `B`, then select along those
//! dims of the view. `B` replaces the indexed dims in place when they are adjacent in the key,
//! and goes first otherwise (NumPy's rule).

use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, IndexFacts, Result, TesseraError};
use crate::layout::broadcast_shapes;
use crate::tensor::Tensor;
use crate::with_dtype;

use crate::index::IndexSpec;

/// One item of an advanced-indexing key.
#[derive(Clone, Debug)]
pub enum IndexItem {
    /// A basic index: point, interval, all, new axis or ellipsis.
    Spec(IndexSpec),
    /// An integer array (any integer dtype; negative entries count from the end) or a boolean
    /// mask (its shape must match the dims it covers; a 0-d mask adds a dim of size 1 or 0).
    Array(Tensor),
}

impl From<IndexSpec> for IndexItem {
    fn from(s: IndexSpec) -> IndexItem {
        IndexItem::Spec(s)
    }
}

impl From<Tensor> for IndexItem {
    fn from(t: Tensor) -> IndexItem {
        IndexItem::Array(t)
    }
}

/// A key with arrays as a basic view plus a gather: `specs` select the view, `axes` are the
/// view dims the index arrays select along, `indices` (int64, shape `[axes.len(), *B]`) holds
/// the broadcast, wrapped (non-negative, in range) index arrays.
#[derive(Clone, Debug)]
pub(crate) struct Gather {
    pub specs: Vec<IndexSpec>,
    pub axes: Vec<isize>,
    pub indices: Tensor,
    /// The index dims go first although `axes` are adjacent (an empty ellipsis separates the
    /// advanced items in the key).
    pub front: bool,
}

/// How a key is carried out.
#[derive(Clone, Debug)]
pub(crate) enum Plan {
    /// No arrays: a zero-copy view.
    Basic(Vec<IndexSpec>),
    /// The key is one boolean mask over the leading dims: a compaction.
    Mask(Tensor),
    /// Anything else with arrays.
    Gather(Gather),
}

fn index_err(msg: String) -> TesseraError {
    ErrorKind::Index(IndexFacts::Other(msg)).into()
}

/// Dims an item consumes of the indexed tensor (`None` for an ellipsis).
fn consumed(item: &IndexItem) -> Result<Option<usize>> {
    Ok(match item {
        IndexItem::Spec(IndexSpec::Ellipsis) => None,
        IndexItem::Spec(IndexSpec::NewAxis) => Some(0),
        IndexItem::Spec(_) => Some(1),
        IndexItem::Array(a) => match a.dtype() {
            DType::Bool => Some(a.rank()),
            d if d.is_integer() => Some(1),
            d => {
                return Err(index_err(format!(
                    "arrays used as indices must be of integer (or boolean) type, got {d}"
                )))
            }
        },
    })
}

/// The values of an integer array as `i64`, wrapped into `0..size` (an entry outside
/// `-size..size` is an IndexError naming `axis` and `size`).
pub(crate) fn wrapped(a: &Tensor, axis: usize, size: usize) -> Result<Vec<i64>> {
    let mut v: Vec<i64> = with_dtype!(a.dtype(), T => {
        a.to_vec::<T>()?.into_iter().map(Element::to_i64).collect()
    });
    let n = size as i64;
    for x in &mut v {
        let w = if *x < 0 { *x + n } else { *x };
        if !(0..n).contains(&w) {
            return Err(index_err(format!(
                "index {x} is out of bounds for axis {axis} with size {size}"
            )));
        }
        *x = w;
    }
    Ok(v)
}

/// Checks a mask's shape against the dims `shape[axis..]` it covers.
pub(crate) fn check_mask(mask: &[usize], shape: &[usize], axis: usize) -> Result<()> {
    for (j, (&m, &d)) in mask.iter().zip(&shape[axis..]).enumerate() {
        if m != d {
            return Err(index_err(format!(
                "boolean index did not match indexed array along axis {}; size of axis is {d} \
                 but size of corresponding boolean axis is {m}",
                axis + j
            )));
        }
    }
    Ok(())
}

/// The `nonzero` coordinates of a boolean mask: one vector per dim, row-major order.
fn nonzero(mask: &Tensor) -> Result<Vec<Vec<i64>>> {
    let flags = mask.to_vec::<bool>()?;
    let count = flags.iter().filter(|&&b| b).count();
    let dims = mask.shape();
    let mut out = Vec::with_capacity(dims.len());
    for _ in dims {
        out.push(crate::storage::try_with_capacity::<i64>(count)?);
    }
    let mut coord = vec![0usize; dims.len()];
    for &f in &flags {
        if f {
            for (o, &c) in out.iter_mut().zip(&coord) {
                o.push(c as i64);
            }
        }
        for j in (0..dims.len()).rev() {
            coord[j] += 1;
            if coord[j] < dims[j] {
                break;
            }
            coord[j] = 0;
        }
    }
    Ok(out)
}

/// One index array of the gather: its view dim, values and shape.
struct Entry {
    pos: usize,
    /// The key item it comes from.
    item: usize,
    values: Vec<i64>,
    shape: Vec<usize>,
}

/// Plans `key` on a tensor of `shape` (NumPy's rules; errors as NumPy's IndexError).
pub(crate) fn plan(shape: &[usize], key: &[IndexItem]) -> Result<Plan> {
    let rank = shape.len();
    let mut used = 0usize;
    let mut ellipses = 0usize;
    let mut arrays = false;
    for item in key {
        match consumed(item)? {
            Some(n) => used += n,
            None => ellipses += 1,
        }
        arrays |= matches!(item, IndexItem::Array(_));
    }
    if ellipses > 1 {
        return Err(index_err(
            "an index can only have a single ellipsis ('...')".into(),
        ));
    }
    if used > rank {
        return Err(index_err(format!(
            "too many indices for array: array is {rank}-dimensional, but {used} were indexed"
        )));
    }
    if !arrays {
        let specs = key
            .iter()
            .map(|i| match i {
                IndexItem::Spec(s) => *s,
                IndexItem::Array(_) => unreachable!("no arrays in this key"),
            })
            .collect();
        return Ok(Plan::Basic(specs));
    }
    if let [IndexItem::Array(m)] = key {
        if m.dtype() == DType::Bool && m.rank() > 0 {
            check_mask(m.shape(), shape, 0)?;
            return Ok(Plan::Mask(m.clone()));
        }
    }
    let mut specs = Vec::with_capacity(key.len());
    let mut entries: Vec<Entry> = Vec::new();
    let (mut axis, mut pos) = (0usize, 0usize);
    for (at, item) in key.iter().enumerate() {
        match item {
            IndexItem::Spec(IndexSpec::Point(p)) => {
                let n = shape[axis] as isize;
                let w = if *p < 0 { p.saturating_add(n) } else { *p };
                if !(0..n).contains(&w) {
                    return Err(index_err(format!(
                        "index {p} is out of bounds for axis {axis} with size {n}"
                    )));
                }
                specs.push(IndexSpec::All);
                entries.push(Entry {
                    pos,
                    item: at,
                    values: vec![w as i64],
                    shape: vec![],
                });
                axis += 1;
                pos += 1;
            }
            IndexItem::Spec(IndexSpec::Ellipsis) => {
                specs.push(IndexSpec::Ellipsis);
                axis += rank - used;
                pos += rank - used;
            }
            IndexItem::Spec(s @ IndexSpec::NewAxis) => {
                specs.push(*s);
                pos += 1;
            }
            IndexItem::Spec(s) => {
                specs.push(*s);
                axis += 1;
                pos += 1;
            }
            IndexItem::Array(a) if a.dtype() == DType::Bool && a.rank() == 0 => {
                // NumPy: a 0-d mask is a new axis indexed by `[0]` (true) or `[]` (false).
                let on = a.to_vec::<bool>()?[0];
                specs.push(IndexSpec::NewAxis);
                entries.push(Entry {
                    pos,
                    item: at,
                    values: if on { vec![0] } else { vec![] },
                    shape: vec![on as usize],
                });
                pos += 1;
            }
            IndexItem::Array(a) if a.dtype() == DType::Bool => {
                check_mask(a.shape(), shape, axis)?;
                for values in nonzero(a)? {
                    specs.push(IndexSpec::All);
                    let shape = vec![values.len()];
                    entries.push(Entry {
                        pos,
                        item: at,
                        values,
                        shape,
                    });
                    axis += 1;
                    pos += 1;
                }
            }
            IndexItem::Array(a) => {
                specs.push(IndexSpec::All);
                entries.push(Entry {
                    pos,
                    item: at,
                    values: wrapped(a, axis, shape[axis])?,
                    shape: a.shape().to_vec(),
                });
                axis += 1;
                pos += 1;
            }
        }
    }
    Ok(Plan::Gather(stack(specs, entries)?))
}

/// Broadcasts the index arrays together and stacks them as `[k, *B]`.
fn stack(specs: Vec<IndexSpec>, entries: Vec<Entry>) -> Result<Gather> {
    // NumPy decides adjacency on the key's items: an ellipsis separates even when empty.
    let front = !entries.windows(2).all(|w| w[1].item <= w[0].item + 1);
    let mut b: Vec<usize> = Vec::new();
    for e in &entries {
        b = broadcast_shapes(&b, &e.shape).map_err(|_| {
            let shapes: Vec<String> = entries.iter().map(|e| format!("{:?}", e.shape)).collect();
            index_err(format!(
                "shape mismatch: indexing arrays could not be broadcast together with shapes {}",
                shapes.join(" ")
            ))
        })?;
    }
    let n: usize = b.iter().product();
    let mut all = crate::storage::try_with_capacity::<i64>(entries.len() * n)?;
    let mut axes = Vec::with_capacity(entries.len());
    for e in entries {
        axes.push(e.pos as isize);
        if e.shape == b {
            all.extend_from_slice(&e.values);
        } else {
            let t = Tensor::from_vec(e.values, &e.shape)?;
            all.extend(t.broadcast_to_dense(&b)?.to_vec::<i64>()?);
        }
    }
    let mut shape = vec![axes.len()];
    shape.extend_from_slice(&b);
    Ok(Gather {
        specs,
        axes,
        indices: Tensor::from_vec(all, &shape)?,
        front,
    })
}
