//! The boxing planner (docs/design.md D6): a pure function from a source and destination nd-SBP to a
//! list of collective steps with their byte costs. No communication happens here, and the
//! plan depends only on its arguments, so every rank computes the same plan.

use crate::error::{DistError, Result};
use crate::sbp::{check_sbp, physical_shape, PartialOp, Sbp};

/// What one boxing step does along one mesh axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// S(a) → B: all-gather with uneven counts.
    AllGather {
        /// The split tensor axis.
        axis: usize,
    },
    /// P → B: all-reduce.
    AllReduce(PartialOp),
    /// P → S(a): reduce-scatter with uneven counts.
    ReduceScatter(PartialOp, usize),
    /// S(from) → S(to): all-to-all with uneven counts.
    AllToAll {
        /// The source split axis.
        from: usize,
        /// The destination split axis.
        to: usize,
    },
    /// B → S(a): each rank keeps its slice, no communication.
    Slice(usize),
    /// B → P: rank 0 of the axis keeps the value, the others hold the identity.
    KeepFirst(PartialOp),
    /// S(a) → P: each rank places its shard in a tensor of the identity, no communication.
    Scatter(PartialOp, usize),
}

/// One step: a conversion along one mesh axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The mesh axis whose SBP changes.
    pub mesh_axis: usize,
    /// The nd-SBP before the step.
    pub from: Vec<Sbp>,
    /// The nd-SBP after the step.
    pub to: Vec<Sbp>,
    /// The collective.
    pub kind: StepKind,
    /// Bytes each rank receives (D6 cost model).
    pub bytes: f64,
}

/// An ordered list of steps taking `src` to `dst`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Plan {
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// Total bytes per rank a plan moves (D6).
pub fn cost(plan: &Plan) -> f64 {
    plan.steps.iter().map(|s| s.bytes).sum()
}

/// The step kind converting `from` to `to` along one axis (`None` when equal); two steps
/// for P(op) → P(other).
fn kinds(from: Sbp, to: Sbp) -> Vec<StepKind> {
    use Sbp::*;
    match (from, to) {
        _ if from == to => vec![],
        (Split(a), Broadcast) => vec![StepKind::AllGather { axis: a }],
        (Split(a), Split(b)) => vec![StepKind::AllToAll { from: a, to: b }],
        (Split(a), Partial(op)) => vec![StepKind::Scatter(op, a)],
        (Broadcast, Split(a)) => vec![StepKind::Slice(a)],
        (Broadcast, Partial(op)) => vec![StepKind::KeepFirst(op)],
        (Partial(op), Broadcast) => vec![StepKind::AllReduce(op)],
        (Partial(op), Split(a)) => vec![StepKind::ReduceScatter(op, a)],
        (Partial(op), Partial(other)) => {
            vec![StepKind::AllReduce(op), StepKind::KeepFirst(other)]
        }
        (Broadcast, Broadcast) => vec![],
    }
}

/// D6 bytes per rank of one step on `p` ranks where `n` is the size in bytes of the tensor
/// the group holds collectively (its logical size along this mesh axis).
pub fn step_bytes(kind: StepKind, n: f64, p: usize) -> f64 {
    let p = p as f64;
    match kind {
        StepKind::AllGather { .. } | StepKind::ReduceScatter(..) => (p - 1.0) / p * n,
        StepKind::AllReduce(_) => 2.0 * (p - 1.0) / p * n,
        StepKind::AllToAll { .. } => (p - 1.0) / (p * p) * n,
        StepKind::Slice(_) | StepKind::KeepFirst(_) | StepKind::Scatter(..) => 0.0,
    }
}

/// Whether a conversion along the outer mesh axis can run independently of the inner
/// axis's current SBP `inner` (the two must commute).
fn commutes(inner: Sbp, outer_from: Sbp, outer_to: Sbp) -> bool {
    match inner {
        Sbp::Broadcast => true,
        Sbp::Split(b) => ![outer_from, outer_to].contains(&Sbp::Split(b)),
        Sbp::Partial(op) => [outer_from, outer_to]
            .iter()
            .all(|s| !matches!(s, Sbp::Partial(o) if *o != op)),
    }
}

/// Plans the conversion of a tensor of `logical` shape and `itemsize`-byte elements on
/// `mesh` from `src` to `dst`.
///
/// One mesh axis at a time, outer first. On a 2-D mesh, when the inner axis's SBP does not
/// commute with the outer conversion (nested splits of one tensor axis, different partial
/// ops), the inner axis goes to Broadcast first and to its destination last.
pub fn plan(
    logical: &[usize],
    itemsize: usize,
    mesh: &[usize],
    src: &[Sbp],
    dst: &[Sbp],
) -> Result<Plan> {
    check_sbp(src, logical.len(), mesh)?;
    check_sbp(dst, logical.len(), mesh)?;
    if mesh.len() > 2 {
        return Err(DistError::Placement(format!(
            "mesh {mesh:?} has more than 2 axes"
        )));
    }
    let mut cur = src.to_vec();
    let mut steps = Vec::new();
    let mut convert = |axis: usize, to: Sbp, cur: &mut Vec<Sbp>| -> Result<()> {
        for kind in kinds(cur[axis], to) {
            let mut next = cur.clone();
            next[axis] = match kind {
                StepKind::AllGather { .. } | StepKind::AllReduce(_) => Sbp::Broadcast,
                _ => to,
            };
            // The tensor the group of this axis holds: this axis as Broadcast, taking the
            // largest shard of the other axes (rank 0's, by D2).
            let mut group = cur.clone();
            group[axis] = Sbp::Broadcast;
            let shape = physical_shape(logical, &group, mesh, &vec![0; mesh.len()])?;
            let n = (shape.iter().product::<usize>() * itemsize) as f64;
            steps.push(Step {
                mesh_axis: axis,
                from: cur.clone(),
                to: next.clone(),
                kind,
                bytes: step_bytes(kind, n, mesh[axis]),
            });
            *cur = next;
        }
        Ok(())
    };
    if mesh.len() == 2 && cur[0] != dst[0] && !commutes(cur[1], cur[0], dst[0]) {
        convert(1, Sbp::Broadcast, &mut cur)?;
    }
    convert(0, dst[0], &mut cur)?;
    if mesh.len() == 2 {
        convert(1, dst[1], &mut cur)?;
    }
    Ok(Plan { steps })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Sbp::*;

    const SUM: Sbp = Partial(PartialOp::Sum);

    #[test]
    fn d6_byte_costs_match_the_formulas() {
        // 1 MiB of f32 on 4 ranks.
        let (shape, p, n) = ([512usize, 512], 4usize, 1024.0 * 1024.0);
        let c = |s, d| cost(&plan(&shape, 4, &[p], &[s], &[d]).unwrap());
        assert_eq!(c(Split(0), Broadcast), 0.75 * n);
        assert_eq!(c(SUM, Broadcast), 1.5 * n);
        assert_eq!(c(SUM, Split(1)), 0.75 * n);
        assert_eq!(c(Split(0), Split(1)), 3.0 / 16.0 * n);
        assert_eq!(c(Broadcast, Split(0)), 0.0);
        assert_eq!(c(Broadcast, SUM), 0.0);
        assert_eq!(c(Split(1), Split(1)), 0.0);
    }

    #[test]
    fn d6_one_step_kinds() {
        let k = |s, d| {
            let p = plan(&[8, 8], 8, &[2], &[s], &[d]).unwrap();
            p.steps.iter().map(|s| s.kind).collect::<Vec<_>>()
        };
        assert_eq!(
            k(Split(0), Broadcast),
            vec![StepKind::AllGather { axis: 0 }]
        );
        assert_eq!(k(SUM, Broadcast), vec![StepKind::AllReduce(PartialOp::Sum)]);
        assert_eq!(
            k(SUM, Split(1)),
            vec![StepKind::ReduceScatter(PartialOp::Sum, 1)]
        );
        assert_eq!(
            k(Split(0), Split(1)),
            vec![StepKind::AllToAll { from: 0, to: 1 }]
        );
        assert_eq!(k(Broadcast, Split(1)), vec![StepKind::Slice(1)]);
        assert_eq!(k(Broadcast, SUM), vec![StepKind::KeepFirst(PartialOp::Sum)]);
        assert_eq!(k(Broadcast, Broadcast), vec![]);
        assert_eq!(
            k(SUM, Partial(PartialOp::Max)),
            vec![
                StepKind::AllReduce(PartialOp::Sum),
                StepKind::KeepFirst(PartialOp::Max)
            ]
        );
    }

    #[test]
    fn d6_two_d_nested_splits_go_through_broadcast() {
        let p = plan(
            &[8, 8],
            4,
            &[2, 2],
            &[Split(0), Split(0)],
            &[Broadcast, Broadcast],
        )
        .unwrap();
        let axes: Vec<usize> = p.steps.iter().map(|s| s.mesh_axis).collect();
        assert_eq!(axes, vec![1, 0]);
        // Inner gather: group holds 4x8 f32 = 128 B, receives half; outer: 256 B, half.
        assert_eq!(cost(&p), 64.0 + 128.0);
        let p = plan(
            &[8, 8],
            4,
            &[2, 2],
            &[Split(0), Split(1)],
            &[Split(1), Split(0)],
        )
        .unwrap();
        assert_eq!(p.steps.len(), 3);
        assert!(plan(
            &[8],
            4,
            &[2, 2],
            &[Split(1), Broadcast],
            &[Broadcast, Broadcast]
        )
        .is_err());
    }

    #[test]
    fn plans_are_deterministic() {
        let a = plan(&[5, 7], 8, &[2, 2], &[SUM, Split(1)], &[Split(1), Split(0)]).unwrap();
        let b = plan(&[5, 7], 8, &[2, 2], &[SUM, Split(1)], &[Split(1), Split(0)]).unwrap();
        assert_eq!(a, b);
    }
}
