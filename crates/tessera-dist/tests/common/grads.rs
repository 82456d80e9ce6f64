//! The gradient gate on global ops (docs/design.md D10): for every op case of the
//! conformance oracle, on random placements (uneven splits, shards empty on some ranks,
//! partial sums spread over the ranks), the gradients of a global loss equal the
//! single-device gradients of the same loss up to float rounding, and central finite
//! differences of the global loss agree with them.

use std::sync::Arc;

use tessera::{BinaryOp, Tensor};
use tessera_dist::{autograd, ops, Comm, DistError, GlobalTensor, Mesh, PartialOp, Result, Sbp};

use super::{fail, op_cases, place, Rng};

/// Placements that gradients flow through (no Partial(max) or Partial(min)).
fn grad_sbp(rng: &mut Rng, rank: usize) -> Sbp {
    match rng.below(rank + 2) {
        0 => Sbp::Broadcast,
        1 => Sbp::Partial(PartialOp::Sum),
        k => Sbp::Split(k - 2),
    }
}

/// Equal up to rounding: |got - want| <= 1e-9 * (1 + |want|) elementwise (NaN equals NaN).
pub fn close(what: &str, got: &Tensor, want: &Tensor) -> Result<()> {
    if got.shape() != want.shape() {
        return Err(fail(format!(
            "{what}: shape {:?}, want {:?}",
            got.shape(),
            want.shape()
        )));
    }
    let (g, w) = (got.to_vec::<f64>()?, want.to_vec::<f64>()?);
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + b.abs());
    let bad = g
        .iter()
        .zip(&w)
        .any(|(&a, &b)| a != b && !(a.is_nan() && b.is_nan()) && !near(a, b));
    if bad {
        return Err(fail(format!("{what}: got {g:?}, want {w:?}")));
    }
    Ok(())
}

/// `sum(out * r)`, the loss of every case, on one device and globally.
fn loss_local(out: &Tensor, r: &Tensor) -> Result<Tensor> {
    Ok(out.mul(r)?.sum(None, false)?)
}

fn loss_global(out: &GlobalTensor, r: &Tensor, mesh: &Arc<Mesh>) -> Result<GlobalTensor> {
    let all_b = vec![Sbp::Broadcast; mesh.shape().len()];
    let r = GlobalTensor::from_logical(r, &all_b, mesh)?;
    ops::reduce(&ops::binary(out, &r, BinaryOp::Mul)?, "sum", None, false)
}

/// The gate on a mesh of `mesh_shape` for the given seeds.
fn gradients(comm: Comm, mesh_shape: &[usize], seeds: std::ops::Range<u64>) -> Result<()> {
    let mesh = Mesh::new(comm, mesh_shape)?;
    let p: usize = mesh_shape.iter().product();
    for seed in seeds {
        let mut rng = Rng::new(seed * 7_000_003 + p as u64);
        let mut cases = op_cases(p, &mut rng);
        // Ops of the signature table the oracle's cases leave out.
        let (a, b) = (p + 1, 2);
        cases.extend([
            ("exp", vec![vec![a, b]], vec![]),
            ("tanh", vec![vec![a, b]], vec![]),
            ("power", vec![vec![a, b], vec![1, b]], vec![]),
            (
                "tile",
                vec![vec![a, b]],
                vec![("reps", "(2, 1)".to_string())],
            ),
        ]);
        for (name, shapes, kv) in cases {
            if name == "greater" {
                continue; // not differentiable
            }
            let kv: Vec<(&str, &str)> = kv.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let fulls: Vec<Tensor> = shapes.iter().map(|s| rng.tensor(s)).collect();
            // One device: the reference gradients.
            let leaves = fulls
                .iter()
                .map(|f| f.copy()?.requires_grad_(true))
                .collect::<tessera::Result<Vec<Tensor>>>()?;
            let out = tessera::ops::invoke(name, &leaves, &kv)?.swap_remove(0);
            let r = rng.tensor(out.shape());
            tessera::autograd::backward(&loss_local(&out, &r)?, None, false)?;
            // Globally, on random placements.
            let mut globals = Vec::new();
            let mut desc = Vec::new();
            for (i, f) in fulls.iter().enumerate() {
                let sbp: Vec<Sbp> = mesh_shape
                    .iter()
                    .map(|_| grad_sbp(&mut rng, f.rank()))
                    .collect();
                desc.push(format!("{:?}{:?}", f.shape(), sbp));
                globals.push(place(f, &sbp, &mesh, seed + i as u64)?.requires_grad_(true)?);
            }
            let what = format!("seed {seed} {name} {kv:?} on {desc:?}");
            let refs: Vec<&GlobalTensor> = globals.iter().collect();
            let out = ops::invoke(name, &refs, &kv).map_err(|e| fail(format!("{what}: {e}")))?;
            let loss = loss_global(&out, &r, &mesh)?;
            autograd::backward(&loss).map_err(|e| fail(format!("{what}: backward: {e}")))?;
            for (i, (g, leaf)) in globals.iter().zip(&leaves).enumerate() {
                let want = match leaf.grad() {
                    Some(w) => w,
                    None => Tensor::zeros(leaf.shape(), leaf.dtype())?,
                };
                let got = match g.grad()? {
                    Some(grad) => {
                        let dual = autograd::dual_nd(g.sbp())?;
                        if grad.sbp() != dual.as_slice() {
                            return Err(fail(format!(
                                "{what}: gradient {i} placed {:?}, want {dual:?}",
                                grad.sbp()
                            )));
                        }
                        grad.to_full()?
                    }
                    None => Tensor::zeros(leaf.shape(), leaf.dtype())?,
                };
                close(&format!("{what}: gradient of input {i}"), &got, &want)?;
            }
            if seed == 0 {
                finite_differences(&what, name, &kv, &globals, &leaves, &r, &mesh)?;
            }
        }
    }
    Ok(())
}

/// Central differences of the global loss in up to three entries of each input against the
/// single-device gradient (already checked equal to the global one). The inputs are
/// integers in [-4, 4] and the ops are smooth there except at ties and 0 (relu, maximum,
/// sqrt), which the step of 1e-6 does not cross except where the gradient is a one-sided
/// choice: such entries are skipped when the two one-sided slopes differ.
fn finite_differences(
    what: &str,
    name: &str,
    kv: &[(&str, &str)],
    globals: &[GlobalTensor],
    leaves: &[Tensor],
    r: &Tensor,
    mesh: &Arc<Mesh>,
) -> Result<()> {
    let h = 1e-6;
    let _plain = tessera::autograd::no_grad();
    let eval = |k: usize, flat: usize, delta: f64| -> Result<f64> {
        let inputs = globals
            .iter()
            .enumerate()
            .map(|(j, g)| {
                let full = leaves[j].detach();
                if j != k {
                    return GlobalTensor::from_logical(&full, g.sbp(), mesh);
                }
                let mut v = full.to_vec::<f64>()?;
                v[flat] += delta;
                GlobalTensor::from_logical(&Tensor::from_vec(v, full.shape())?, g.sbp(), mesh)
            })
            .collect::<Result<Vec<GlobalTensor>>>()?;
        let refs: Vec<&GlobalTensor> = inputs.iter().collect();
        let out = ops::invoke(name, &refs, kv)?;
        Ok(loss_global(&out, r, mesh)?.to_full()?.to_vec::<f64>()?[0])
    };
    for (k, leaf) in leaves.iter().enumerate() {
        let n = leaf.numel();
        let grad = match leaf.grad() {
            Some(g) => g.to_vec::<f64>()?,
            None => vec![0.0; n],
        };
        for flat in [0, n / 2, n.saturating_sub(1)]
            .into_iter()
            .filter(|&f| f < n)
        {
            let (up, mid, down) = (eval(k, flat, h)?, eval(k, flat, 0.0)?, eval(k, flat, -h)?);
            let (right, left) = ((up - mid) / h, (mid - down) / h);
            if (right - left).abs() > 1e-3 * (1.0 + right.abs()) || grad[flat].is_nan() {
                continue; // a kink (tie, relu at 0) or outside the domain (sqrt of < 0)
            }
            let fd = (up - down) / (2.0 * h);
            if (fd - grad[flat]).abs() > 1e-4 * (1.0 + fd.abs()) {
                return Err(fail(format!(
                    "{what}: input {k} entry {flat}: finite difference {fd}, gradient {}",
                    grad[flat]
                )));
            }
        }
    }
    Ok(())
}

pub fn gradients_1d(comm: Comm) -> Result<()> {
    gradients(comm.clone(), &[comm.size()], 0..3)
}

pub fn gradients_2x2(comm: Comm) -> Result<()> {
    if comm.size() != 4 {
        return Ok(());
    }
    gradients(comm, &[2, 2], 0..3)
}

/// Gradients cannot flow back through Partial(max): a leaf placed so is refused by backward
/// on every rank, with an error naming the placement; a loss of more than one element too.
pub fn gradients_refused(comm: Comm) -> Result<()> {
    let mesh = Mesh::line(comm);
    let full = Tensor::from_slice(&[1.0f64, 5.0, 3.0], &[3])?;
    let x = GlobalTensor::from_logical(&full, &[Sbp::Partial(PartialOp::Max)], &mesh)?
        .requires_grad_(true)?;
    let loss = ops::reduce(&ops::unary(&x, tessera::UnaryOp::Exp)?, "sum", None, false)?;
    match autograd::backward(&loss) {
        Err(e) if e.to_string().contains("Partial(Max)") => {}
        other => return Err(fail(format!("backward through Partial(max): {other:?}"))),
    }
    let y = GlobalTensor::from_logical(&full, &[Sbp::Split(0)], &mesh)?.requires_grad_(true)?;
    match autograd::backward(&ops::unary(&y, tessera::UnaryOp::Exp)?) {
        Err(DistError::Placement(m)) if m.contains("one-element") => Ok(()),
        other => Err(fail(format!("backward of a 3-element loss: {other:?}"))),
    }
}
