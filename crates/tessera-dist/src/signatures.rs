//! SBP signatures per op (beside the registry, keyed by op name): for each mesh axis, which
//! input SBPs an op accepts and which output SBP it then produces (docs/design.md D3–D5).
//!
//! A rule sees the logical shapes and the op's string parameters and lists candidates for
//! one mesh axis, splits first (least compute), then partial, then broadcast. On a 2-D mesh
//! the candidates are the products of the per-axis lists.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use tessera::index::{decode, IndexSpec};
use tessera::ops::params::ParamValue;
use tessera::{BinaryOp, CompareOp, UnaryOp};

use crate::error::{DistError, Result};
use crate::sbp::{PartialOp, Sbp};

/// Input SBPs and the resulting output SBP along one mesh axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The SBP each input must have.
    pub inputs: Vec<Sbp>,
    /// The SBP of the output.
    pub output: Sbp,
}

/// What a signature rule sees.
pub struct SigCtx<'a> {
    /// Logical input shapes.
    pub inputs: &'a [Vec<usize>],
    /// Logical output shape (from the registry's inference).
    pub output: &'a [usize],
    /// The op's string parameters.
    pub kv: &'a [(&'a str, &'a str)],
    /// The mesh shape.
    pub mesh: &'a [usize],
}

impl SigCtx<'_> {
    /// The parameter `key` parsed as `T`, or `default` when absent.
    pub fn param<T: ParamValue>(&self, key: &str, default: T) -> Result<T> {
        match self.kv.iter().find(|(k, _)| *k == key) {
            None => Ok(default),
            Some((_, v)) => {
                T::parse_value(v).map_err(|e| DistError::Placement(format!("parameter {key}: {e}")))
            }
        }
    }
}

/// A rule listing the candidate signatures for one mesh axis.
pub type Rule = fn(&SigCtx) -> Result<Vec<Signature>>;

/// How the local (per-rank) op is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalCall {
    /// With the same parameters as the global call.
    Same,
    /// With parameter `.0` replaced by the physical output shape of this rank (D4: expand
    /// and reshape take their target from the output's physical shape).
    OutputShape(&'static str),
    /// A reduction: empty shards of a reduced split axis give the identity (D3).
    Reduction,
}

/// An op's entry in the table.
#[derive(Clone, Copy)]
pub struct OpSbp {
    /// Candidate signatures.
    pub rule: Rule,
    /// How to call the local op.
    pub local: LocalCall,
}

fn sig(inputs: &[Sbp], output: Sbp) -> Signature {
    Signature {
        inputs: inputs.to_vec(),
        output,
    }
}

const B: Sbp = Sbp::Broadcast;
const PSUM: Sbp = Sbp::Partial(PartialOp::Sum);

fn unary(c: &SigCtx) -> Result<Vec<Signature>> {
    let mut v: Vec<_> = (0..c.inputs[0].len())
        .map(|i| sig(&[Sbp::Split(i)], Sbp::Split(i)))
        .collect();
    v.push(sig(&[B], B));
    Ok(v)
}

fn negative(c: &SigCtx) -> Result<Vec<Signature>> {
    let mut v = unary(c)?;
    v.insert(v.len() - 1, sig(&[PSUM], PSUM));
    Ok(v)
}

/// Split signatures of a broadcasting binary op: output axis d split, each input split on
/// its aligned axis when that has the full size, broadcast when it has size 1 or is absent.
fn broadcast_splits(c: &SigCtx) -> Vec<Signature> {
    let out = c.output;
    (0..out.len())
        .map(|d| {
            let inputs = c
                .inputs
                .iter()
                .map(|s| {
                    let pad = out.len() - s.len();
                    match d.checked_sub(pad) {
                        Some(i) if s[i] == out[d] => Sbp::Split(i),
                        _ => B,
                    }
                })
                .collect::<Vec<_>>();
            sig(&inputs, Sbp::Split(d))
        })
        .collect()
}

fn binary_with(c: &SigCtx, partial: &[Signature]) -> Result<Vec<Signature>> {
    let mut v = broadcast_splits(c);
    v.extend_from_slice(partial);
    v.push(sig(&[B, B], B));
    Ok(v)
}

fn add_sub(c: &SigCtx) -> Result<Vec<Signature>> {
    binary_with(c, &[sig(&[PSUM, PSUM], PSUM)])
}

fn mul(c: &SigCtx) -> Result<Vec<Signature>> {
    binary_with(c, &[sig(&[PSUM, B], PSUM), sig(&[B, PSUM], PSUM)])
}

fn extreme(c: &SigCtx, op: PartialOp) -> Result<Vec<Signature>> {
    let p = Sbp::Partial(op);
    binary_with(c, &[sig(&[p, p], p), sig(&[p, B], p), sig(&[B, p], p)])
}

fn binary(c: &SigCtx) -> Result<Vec<Signature>> {
    binary_with(c, &[])
}

/// The reduced axes (sorted) and keepdims of a reduction.
pub(crate) fn reduce_axes(c: &SigCtx) -> Result<(Vec<usize>, bool)> {
    let rank = c.inputs[0].len() as isize;
    let keep = c.param("keepdims", false)?;
    let axes = match c.param::<Option<Vec<isize>>>("axis", None)? {
        None => (0..rank as usize).collect(),
        Some(a) => {
            let mut v = a
                .iter()
                .map(|&x| {
                    let x = if x < 0 { x + rank } else { x };
                    usize::try_from(x)
                        .ok()
                        .filter(|&x| (x as isize) < rank)
                        .ok_or_else(|| {
                            DistError::Placement(format!("reduction axis {x} of rank {rank}"))
                        })
                })
                .collect::<Result<Vec<_>>>()?;
            v.sort_unstable();
            v.dedup();
            v
        }
    };
    Ok((axes, keep))
}

/// `mean` is `partial_in == false`: it never reduces a split axis (the sum of the ranks'
/// `x_r / n` is not bit-identical to `sum(x) / n`), and boxes that axis to Broadcast instead.
fn reduction(c: &SigCtx, op: PartialOp, partial_in: bool) -> Result<Vec<Signature>> {
    let (axes, keep) = reduce_axes(c)?;
    let mut v = Vec::new();
    for i in 0..c.inputs[0].len() {
        let out = if axes.contains(&i) {
            if !partial_in {
                continue;
            }
            Sbp::Partial(op)
        } else if keep {
            Sbp::Split(i)
        } else {
            Sbp::Split(i - axes.iter().filter(|&&a| a < i).count())
        };
        v.push(sig(&[Sbp::Split(i)], out));
    }
    if partial_in {
        v.push(sig(&[Sbp::Partial(op)], Sbp::Partial(op)));
    }
    v.push(sig(&[B], B));
    Ok(v)
}

fn expand(c: &SigCtx) -> Result<Vec<Signature>> {
    let (inp, out) = (&c.inputs[0], c.output);
    let lpad = out.len() - inp.len();
    let mut v: Vec<_> = (0..inp.len())
        .filter(|&i| inp[i] == out[i + lpad])
        .map(|i| sig(&[Sbp::Split(i)], Sbp::Split(i + lpad)))
        .collect();
    v.extend([sig(&[PSUM], PSUM), sig(&[B], B)]);
    for op in [PartialOp::Max, PartialOp::Min] {
        v.insert(v.len() - 1, sig(&[Sbp::Partial(op)], Sbp::Partial(op)));
    }
    Ok(v)
}

fn repeat_like(c: &SigCtx, pad_reps: bool) -> Result<Vec<Signature>> {
    let rank = c.inputs[0].len();
    let mut reps: Vec<isize> = c.param("reps", Vec::new())?;
    if pad_reps && reps.len() < rank {
        let mut padded = vec![1; rank - reps.len()];
        padded.extend(reps);
        reps = padded;
    }
    let lpad = reps.len().saturating_sub(rank);
    let mut v: Vec<_> = (0..rank)
        .filter(|&d| reps.get(d + lpad) == Some(&1))
        .map(|d| sig(&[Sbp::Split(d)], Sbp::Split(d + lpad)))
        .collect();
    for op in [PartialOp::Sum, PartialOp::Max, PartialOp::Min] {
        v.push(sig(&[Sbp::Partial(op)], Sbp::Partial(op)));
    }
    v.push(sig(&[B], B));
    Ok(v)
}

/// D3: a split survives a reshape where shard boundaries coincide: the dims before have the
/// same element count, and the split dims have the same size or both divide by the parts.
/// Only on 1-D meshes (nested 2-D splits box first).
fn reshape(c: &SigCtx) -> Result<Vec<Signature>> {
    let (inp, out) = (&c.inputs[0], c.output);
    let mut v = Vec::new();
    if let [p] = c.mesh {
        for i in 0..inp.len() {
            let pre: usize = inp[..i].iter().product();
            for j in 0..out.len() {
                let same = out[..j].iter().product::<usize>() == pre
                    && (inp[i] == out[j] || (inp[i] % p == 0 && out[j] % p == 0));
                if same {
                    v.push(sig(&[Sbp::Split(i)], Sbp::Split(j)));
                    break;
                }
            }
        }
    }
    for op in [PartialOp::Sum, PartialOp::Max, PartialOp::Min] {
        v.push(sig(&[Sbp::Partial(op)], Sbp::Partial(op)));
    }
    v.push(sig(&[B], B));
    Ok(v)
}

fn matmul(_: &SigCtx) -> Result<Vec<Signature>> {
    Ok(vec![
        sig(&[Sbp::Split(0), B], Sbp::Split(0)),
        sig(&[B, Sbp::Split(1)], Sbp::Split(1)),
        sig(&[Sbp::Split(1), Sbp::Split(0)], PSUM),
        sig(&[PSUM, B], PSUM),
        sig(&[B, PSUM], PSUM),
        sig(&[B, B], B),
    ])
}

/// Views keep a split along an axis the index leaves whole (`All`, or a full interval).
fn create_view(c: &SigCtx) -> Result<Vec<Signature>> {
    let code: Vec<isize> = c.param("index", Vec::new())?;
    let specs = decode(&code.iter().map(|&x| x as i64).collect::<Vec<_>>())?;
    let rank = c.inputs[0].len();
    let explicit = specs
        .iter()
        .filter(|s| {
            matches!(
                s,
                IndexSpec::Point(_) | IndexSpec::Interval { .. } | IndexSpec::All
            )
        })
        .count();
    let mut expanded = Vec::new();
    for s in &specs {
        if matches!(s, IndexSpec::Ellipsis) {
            expanded.extend(std::iter::repeat_n(
                IndexSpec::All,
                rank.saturating_sub(explicit),
            ));
        } else {
            expanded.push(*s);
        }
    }
    let (mut i, mut o, mut v) = (0usize, 0usize, Vec::new());
    for s in &expanded {
        match s {
            IndexSpec::NewAxis => o += 1,
            IndexSpec::Point(_) => i += 1,
            IndexSpec::All => {
                v.push(sig(&[Sbp::Split(i)], Sbp::Split(o)));
                (i, o) = (i + 1, o + 1);
            }
            _ => (i, o) = (i + 1, o + 1),
        }
    }
    let (mut i, mut o) = (i, o);
    while i < rank {
        v.push(sig(&[Sbp::Split(i)], Sbp::Split(o)));
        (i, o) = (i + 1, o + 1);
    }
    for op in [PartialOp::Sum, PartialOp::Max, PartialOp::Min] {
        v.push(sig(&[Sbp::Partial(op)], Sbp::Partial(op)));
    }
    v.push(sig(&[B], B));
    Ok(v)
}

/// The table: op name → rule and local call.
pub fn table() -> &'static BTreeMap<&'static str, OpSbp> {
    static TABLE: OnceLock<BTreeMap<&'static str, OpSbp>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let same = |rule: Rule| OpSbp {
            rule,
            local: LocalCall::Same,
        };
        let red = |rule: Rule| OpSbp {
            rule,
            local: LocalCall::Reduction,
        };
        let mut t = BTreeMap::new();
        for op in UnaryOp::ALL {
            t.insert(
                op.name(),
                same(if *op == UnaryOp::Neg { negative } else { unary }),
            );
        }
        t.insert("quadratic", same(unary));
        for op in BinaryOp::ALL {
            let rule: Rule = match op {
                BinaryOp::Add | BinaryOp::Sub => add_sub,
                BinaryOp::Mul => mul,
                BinaryOp::Maximum => |c| extreme(c, PartialOp::Max),
                BinaryOp::Minimum => |c| extreme(c, PartialOp::Min),
                // P(sum) / B is linear in exact arithmetic only: sum(x_r / b) rounds
                // differently from sum(x) / b, so division boxes partials first.
                BinaryOp::Div | BinaryOp::Pow => binary,
            };
            t.insert(op.name(), same(rule));
        }
        for op in CompareOp::ALL {
            t.insert(op.name(), same(binary));
        }
        t.insert("sum", red(|c| reduction(c, PartialOp::Sum, true)));
        t.insert("mean", red(|c| reduction(c, PartialOp::Sum, false)));
        t.insert("max", red(|c| reduction(c, PartialOp::Max, true)));
        t.insert("min", red(|c| reduction(c, PartialOp::Min, true)));
        t.insert(
            "expand",
            OpSbp {
                rule: expand,
                local: LocalCall::OutputShape("sizes"),
            },
        );
        t.insert(
            "reshape",
            OpSbp {
                rule: reshape,
                local: LocalCall::OutputShape("shape"),
            },
        );
        t.insert("repeat", same(|c| repeat_like(c, false)));
        t.insert("tile", same(|c| repeat_like(c, true)));
        t.insert("matmul", same(matmul));
        t.insert("create_view", same(create_view));
        t
    })
}
