//! The backward pass (docs/design.md G2): an iterative walk of the recorded graph in
//! dependency order, so a chain of any length runs without recursion. Gradients reaching a
//! node's outputs are summed before the node runs; leaves receive theirs only when the whole
//! pass succeeded, so an error leaves every `.grad` as it was.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use super::accumulate::accumulate;
use super::mode::NoGradGuard;
use crate::error::{ErrorKind, Result, ShapeFacts};
use crate::tensor::grad_meta::{AutogradMeta, Edge, GradNode, LeafKey};
use crate::tensor::Tensor;

/// Identity of a node or leaf: the address of its shared allocation.
fn key_of<T: ?Sized>(a: &Arc<T>) -> usize {
    Arc::as_ptr(a) as *const u8 as usize
}

/// A node waiting for the gradients of its outputs.
struct Pending {
    node: Arc<dyn GradNode>,
    grads: Vec<Option<Tensor>>,
}

/// The gradient of each root: the given one (checked against the root's shape and dtype),
/// or ones for a one-element root.
fn root_grads(roots: &[Tensor], grads: &[Option<Tensor>]) -> Result<Vec<(Edge, Tensor)>> {
    if roots.len() != grads.len() {
        return Err(ErrorKind::InvalidArgument(format!(
            "backward: {} tensors and {} gradients",
            roots.len(),
            grads.len()
        ))
        .into());
    }
    let mut out = Vec::with_capacity(roots.len());
    for (r, g) in roots.iter().zip(grads) {
        let edge = r.grad_edge().ok_or_else(|| {
            ErrorKind::Autograd(
                "backward of a tensor that does not require a gradient (no input of the ops \
                 that made it requires one, or it was computed under no_grad)"
                    .into(),
            )
        })?;
        let g = match g {
            Some(g) => {
                if g.shape() != r.shape() {
                    return Err(ErrorKind::ShapeMismatch(ShapeFacts::Other(format!(
                        "backward: gradient of shape {:?} for a tensor of shape {:?}",
                        g.shape(),
                        r.shape()
                    )))
                    .into());
                }
                if g.dtype() != r.dtype() {
                    return Err(ErrorKind::InvalidArgument(format!(
                        "backward: gradient of dtype {} for a tensor of dtype {} (shape {:?})",
                        g.dtype(),
                        r.dtype(),
                        r.shape()
                    ))
                    .into());
                }
                g.detach()
            }
            None if r.numel() == 1 => Tensor::ones(r.shape(), r.dtype())?,
            None => {
                return Err(ErrorKind::InvalidArgument(format!(
                    "backward of a tensor of shape {:?} needs a gradient of that shape (only a \
                     one-element tensor may omit it)",
                    r.shape()
                ))
                .into())
            }
        };
        out.push((edge, g));
    }
    Ok(out)
}

/// How many edges point at each node reachable from `starts` (iterative depth-first walk),
/// and, with `count_leaves` (a pass with a leaf hook), at each leaf (keyed by its state's
/// address).
fn dependencies(
    starts: &[Arc<dyn GradNode>],
    count_leaves: bool,
) -> (HashMap<usize, usize>, HashMap<usize, usize>) {
    let mut deps: HashMap<usize, usize> = HashMap::new();
    let mut leaf_deps: HashMap<usize, usize> = HashMap::new();
    let mut seen: HashMap<usize, ()> = HashMap::new();
    let mut stack: Vec<Arc<dyn GradNode>> = Vec::new();
    for n in starts {
        if seen.insert(key_of(n), ()).is_none() {
            stack.push(n.clone());
        }
    }
    while let Some(n) = stack.pop() {
        for e in n.edges().into_iter().flatten() {
            match e {
                Edge::Node { node, .. } => {
                    *deps.entry(key_of(&node)).or_default() += 1;
                    if seen.insert(key_of(&node), ()).is_none() {
                        stack.push(node);
                    }
                }
                Edge::Leaf(m) if count_leaves => *leaf_deps.entry(key_of(&m)).or_default() += 1,
                Edge::Leaf(_) => {}
            }
        }
    }
    (deps, leaf_deps)
}

/// Where the gradients of a pass go.
pub(crate) enum Sink<'a> {
    /// Accumulate into the leaves' `.grad` (`backward`).
    Leaves,
    /// Capture the gradients of these tensors and touch no `.grad` (`autograd::grad`).
    Capture(&'a [Tensor]),
}

/// Runs one backward pass from `roots` seeded with `grads`; returns the captured gradients
/// for [`Sink::Capture`] (empty for [`Sink::Leaves`]).
pub(crate) fn run(
    roots: &[Tensor],
    grads: &[Option<Tensor>],
    retain_graph: bool,
    sink: Sink<'_>,
) -> Result<Vec<Option<Tensor>>> {
    run_with_hook(roots, grads, retain_graph, sink, None)
}

/// [`run`], calling `hook` for each leaf once its gradient of the pass is final.
pub(crate) fn run_with_hook(
    roots: &[Tensor],
    grads: &[Option<Tensor>],
    retain_graph: bool,
    sink: Sink<'_>,
    mut hook: Option<super::LeafHook<'_>>,
) -> Result<Vec<Option<Tensor>>> {
    let _no_grad = NoGradGuard::new();
    let seeds = root_grads(roots, grads)?;
    // What to capture: leaf metas and (node, output) slots of the requested tensors.
    let wanted: &[Tensor] = match &sink {
        Sink::Capture(ts) => ts,
        Sink::Leaves => &[],
    };
    let mut want_leaf: HashMap<usize, usize> = HashMap::new();
    let mut want_slot: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for (i, t) in wanted.iter().enumerate() {
        match t.grad_edge() {
            Some(Edge::Leaf(m)) => {
                want_leaf.insert(key_of(&m), i);
            }
            Some(Edge::Node { node, output }) => want_slot
                .entry((key_of(&node), output))
                .or_default()
                .push(i),
            None => {
                return Err(ErrorKind::Autograd(format!(
                    "autograd::grad: input {i} does not require a gradient"
                ))
                .into())
            }
        }
    }
    let mut captured: Vec<Option<Tensor>> = vec![None; wanted.len()];
    let mut leaves: HashMap<usize, (Arc<AutogradMeta>, Tensor)> = HashMap::new();
    let mut pending: HashMap<usize, Pending> = HashMap::new();
    let deliver = |edge: Edge,
                   g: Tensor,
                   pending: &mut HashMap<usize, Pending>,
                   leaves: &mut HashMap<usize, (Arc<AutogradMeta>, Tensor)>|
     -> Result<()> {
        match edge {
            Edge::Leaf(m) => {
                let k = key_of(&m);
                let g = match leaves.remove(&k) {
                    Some((_, prev)) => accumulate(prev, g)?,
                    None => g,
                };
                leaves.insert(k, (m, g));
            }
            Edge::Node { node, output } => {
                let k = key_of(&node);
                let p = pending.entry(k).or_insert_with(|| Pending {
                    grads: vec![None; node.num_outputs()],
                    node,
                });
                let slot = &mut p.grads[output];
                *slot = Some(match slot.take() {
                    Some(prev) => accumulate(prev, g)?,
                    None => g,
                });
            }
        }
        Ok(())
    };
    let mut starts: Vec<Arc<dyn GradNode>> = Vec::new();
    for (edge, g) in seeds {
        if let Edge::Node { node, .. } = &edge {
            starts.push(node.clone());
        }
        deliver(edge, g, &mut pending, &mut leaves)?;
    }
    let (mut deps, mut leaf_deps) = dependencies(&starts, hook.is_some());
    let mut signalled: HashSet<usize> = HashSet::new();
    // Ready nodes run latest-recorded first: the order depends only on the recording order,
    // so ranks of an SPMD program run their collective nodes alike (GradNode::seq).
    let mut ready: BinaryHeap<(u64, usize)> = pending
        .iter()
        .filter(|(k, _)| deps.get(k).copied().unwrap_or(0) == 0)
        .map(|(&k, p)| (p.node.seq(), k))
        .collect();
    while let Some((_, k)) = ready.pop() {
        let Some(Pending { node, grads }) = pending.remove(&k) else {
            continue;
        };
        let mut full = Vec::with_capacity(grads.len());
        for (i, g) in grads.into_iter().enumerate() {
            let g = match g {
                Some(g) => g,
                None => {
                    let (shape, dtype, _) = node.output_meta(i);
                    Tensor::zeros(shape, dtype)?
                }
            };
            if let Some(idx) = want_slot.get(&(k, i)) {
                for &j in idx {
                    captured[j] = Some(g.clone());
                }
            }
            full.push(g);
        }
        let input_grads = node.apply(&full, retain_graph)?;
        drop(full);
        for (edge, g) in node.edges().into_iter().zip(input_grads) {
            let Some(edge) = edge else { continue };
            let (child, leaf) = match &edge {
                Edge::Node { node, .. } => (Some((key_of(node), node.clone())), None),
                Edge::Leaf(m) => (None, Some(key_of(m))),
            };
            if let Some(g) = g {
                deliver(edge, g, &mut pending, &mut leaves)?;
            }
            if let (Some(l), Some(hook)) = (leaf, hook.as_mut()) {
                let d = leaf_deps
                    .get_mut(&l)
                    .expect("every reachable leaf has a count");
                *d -= 1;
                if *d == 0 {
                    if let Some((m, g)) = leaves.get(&l) {
                        signalled.insert(l);
                        hook(LeafKey::of(m), g)?;
                    }
                }
            }
            if let Some((c, child)) = child {
                let d = deps.get_mut(&c).expect("every reachable node has a count");
                *d -= 1;
                if *d == 0 && !pending.contains_key(&c) && child.collective() {
                    // A collective node runs even without a gradient (zeros stand in).
                    pending.insert(
                        c,
                        Pending {
                            grads: vec![None; child.num_outputs()],
                            node: child.clone(),
                        },
                    );
                }
                if *d == 0 && pending.contains_key(&c) {
                    ready.push((child.seq(), c));
                }
            }
        }
    }
    if let Some(hook) = hook.as_mut() {
        // Leaves whose last feeding node never ran (or that were roots), by address: a hook
        // must not depend on the order of these.
        let mut rest: Vec<(&usize, &(Arc<AutogradMeta>, Tensor))> = leaves
            .iter()
            .filter(|(k, _)| !signalled.contains(k))
            .collect();
        rest.sort_by_key(|(k, _)| **k);
        for (_, (m, g)) in rest {
            hook(LeafKey::of(m), g)?;
        }
    }
    match sink {
        Sink::Capture(_) => {
            for (k, (_, g)) in leaves {
                if let Some(&i) = want_leaf.get(&k) {
                    captured[i] = Some(g);
                }
            }
            Ok(captured)
        }
        Sink::Leaves => {
            // Commit only now that the whole pass succeeded.
            let mut sums = Vec::with_capacity(leaves.len());
            for (_, (m, g)) in leaves {
                let total = match m.grad() {
                    Some(prev) => accumulate(prev, g)?,
                    None => g,
                };
                sums.push((m, total.contiguous_owned()?));
            }
            for (m, g) in sums {
                m.set_grad(Some(g));
            }
            Ok(Vec::new())
        }
    }
}
