//! Test bodies shared by the thread-backend tests and the MPI test binary: each runs on
//! every rank of a communicator and returns an error describing the first failure.
#![allow(dead_code)]

pub mod grads;
pub mod training;

use std::sync::Arc;

use tessera::index::IndexSpec;
use tessera::{BinaryOp, DType, Tensor};
use tessera_dist::comm::all_to_all_views_packed;
use tessera_dist::{
    balanced_counts, balanced_range, ops, physical_shape, Comm, DistError, GlobalTensor, Mesh,
    PartialOp, Result, Sbp,
};

/// A shared test case: a name and a body run on every rank.
pub type Case = (&'static str, fn(Comm) -> Result<()>);

/// Every shared case.
pub fn cases() -> Vec<Case> {
    vec![
        ("conformance_1d", conformance_1d),
        ("conformance_2x2", conformance_2x2),
        ("d4_seed_expand_split_last_axis", d4_seed_example),
        ("d4_expand_size1_shards", d4_five_by_one),
        ("d6_every_boxing_pair_1d", boxing_pairs_1d),
        ("d6_every_boxing_pair_2x2", boxing_pairs_2x2),
        ("collectives_uneven_counts", collectives),
        ("d6_all_to_all_layouts_and_dtypes", all_to_all_layouts),
        ("d6_axis_collectives_against_slices", axis_collectives),
        ("d10_gradients_1d", grads::gradients_1d),
        ("d10_gradients_2x2", grads::gradients_2x2),
        ("d10_gradients_refused", grads::gradients_refused),
        (
            "d11_mlp_matches_single_process",
            training::mlp_matches_single_process,
        ),
        (
            "d11_logreg_matches_single_process",
            training::logreg_matches_single_process,
        ),
        ("d11_training_refusals", training::training_refusals),
    ]
}

fn fail(msg: String) -> DistError {
    DistError::Placement(format!("check failed: {msg}"))
}

/// splitmix64: the same sequence on every rank for the same seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// Integer-valued f64s in [-4, 4], so sums are exact in any order.
    pub fn tensor(&mut self, shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        let v: Vec<f64> = (0..n).map(|_| self.below(9) as f64 - 4.0).collect();
        Tensor::from_vec(v, shape).unwrap()
    }
    pub fn sbp(&mut self, rank: usize) -> Sbp {
        match self.below(rank + 4) {
            0 => Sbp::Broadcast,
            1 => Sbp::Partial(PartialOp::Sum),
            2 => Sbp::Partial(PartialOp::Max),
            3 => Sbp::Partial(PartialOp::Min),
            k => Sbp::Split(k - 4),
        }
    }
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    Ok(t.astype(DType::F64)?.to_vec::<f64>()?)
}

/// Equal shapes, dtypes and values (NaN equals NaN).
pub fn same(what: &str, got: &Tensor, want: &Tensor) -> Result<()> {
    if got.shape() != want.shape() || got.dtype() != want.dtype() {
        return Err(fail(format!(
            "{what}: got {:?} {}, want {:?} {}",
            got.shape(),
            got.dtype(),
            want.shape(),
            want.dtype()
        )));
    }
    let (g, w) = (values(got)?, values(want)?);
    if g.iter()
        .zip(&w)
        .any(|(a, b)| a != b && !(a.is_nan() && b.is_nan()))
    {
        return Err(fail(format!("{what}: got {g:?}, want {w:?}")));
    }
    Ok(())
}

/// Places `full` with `sbp`; a 1-D Partial(sum) also gets a zero-sum perturbation so the
/// ranks' values really are partial.
fn place(full: &Tensor, sbp: &[Sbp], mesh: &Arc<Mesh>, rng_seed: u64) -> Result<GlobalTensor> {
    let g = GlobalTensor::from_logical(full, sbp, mesh)?;
    if sbp != [Sbp::Partial(PartialOp::Sum)] {
        return Ok(g);
    }
    let p = mesh.shape()[0];
    let noise = |r: usize| Rng::new(rng_seed ^ ((r as u64 + 1) * 7919)).tensor(full.shape());
    let me = mesh.coords()[0];
    let local = if me == 0 {
        let mut acc = full.copy()?;
        for r in 1..p {
            acc = acc.sub(&noise(r))?;
        }
        acc
    } else {
        noise(me)
    };
    GlobalTensor::from_local(local, full.shape(), sbp, mesh, true)
}

/// One op case: op name, input shapes, parameters.
type OpCase = (&'static str, Vec<Vec<usize>>, Vec<(&'static str, String)>);

fn op_cases(p: usize, rng: &mut Rng) -> Vec<OpCase> {
    let dims = [1, p.saturating_sub(1).max(1), p + 1, 2 * p, 5];
    let mut d = || dims[rng.below(dims.len())];
    let (a, b, k) = (d(), d(), d());
    let s = |v: &str| v.to_string();
    vec![
        ("sqrt", vec![vec![a, b]], vec![]),
        ("negative", vec![vec![a, b]], vec![]),
        ("relu", vec![vec![a, b]], vec![]),
        (
            "quadratic",
            vec![vec![a, b]],
            vec![("a", s("1")), ("b", s("-2")), ("c", s("3"))],
        ),
        ("add", vec![vec![a, b], vec![a, b]], vec![]),
        ("subtract", vec![vec![a, b], vec![1, b]], vec![]),
        ("multiply", vec![vec![a, b], vec![b]], vec![]),
        ("divide", vec![vec![a, b], vec![a, 1]], vec![]),
        ("maximum", vec![vec![a, b], vec![a, b]], vec![]),
        ("minimum", vec![vec![a, b], vec![1, b]], vec![]),
        ("greater", vec![vec![a, b], vec![a, b]], vec![]),
        ("sum", vec![vec![a, b]], vec![("axis", s("(0,)"))]),
        (
            "sum",
            vec![vec![a, b, k]],
            vec![("axis", s("(1, 2)")), ("keepdims", s("true"))],
        ),
        ("mean", vec![vec![a, b]], vec![("axis", s("None"))]),
        ("mean", vec![vec![a, b]], vec![("axis", s("(1,)"))]),
        ("max", vec![vec![a, b]], vec![("axis", s("(0,)"))]),
        (
            "min",
            vec![vec![a, b]],
            vec![("axis", s("(-1,)")), ("keepdims", s("true"))],
        ),
        (
            "expand",
            vec![vec![a, 1]],
            vec![("sizes", s(&format!("(2, {a}, 3)")))],
        ),
        (
            "expand",
            vec![vec![1, b]],
            vec![("sizes", s(&format!("({a}, -1)")))],
        ),
        ("repeat", vec![vec![a, b]], vec![("reps", s("(1, 2)"))]),
        ("repeat", vec![vec![a, b]], vec![("reps", s("(2, 1, 3)"))]),
        ("reshape", vec![vec![a, b]], vec![("shape", s("(-1,)"))]),
        (
            "reshape",
            vec![vec![2 * p, 3]],
            vec![("shape", s(&format!("({p}, 6)")))],
        ),
        (
            "reshape",
            vec![vec![a, b, 2]],
            vec![("shape", s(&format!("({a}, {})", 2 * b)))],
        ),
        ("matmul", vec![vec![a, k], vec![k, b]], vec![]),
        (
            "create_view",
            vec![vec![a, b]],
            vec![(
                "index",
                index_code(&[IndexSpec::All, IndexSpec::interval(0, 1)]),
            )],
        ),
        (
            "create_view",
            vec![vec![a, b]],
            vec![(
                "index",
                index_code(&[
                    IndexSpec::NewAxis,
                    IndexSpec::Ellipsis,
                    IndexSpec::Point(-1),
                ]),
            )],
        ),
    ]
}

fn index_code(specs: &[IndexSpec]) -> String {
    let v: Vec<String> = tessera::index::encode(specs)
        .iter()
        .map(|x| x.to_string())
        .collect();
    format!("({})", v.join(", "))
}

/// The oracle: random SBPs, the global op boxed back to Broadcast equals the single-device op.
fn conformance(comm: Comm, mesh_shape: &[usize], seeds: std::ops::Range<u64>) -> Result<()> {
    let mesh = Mesh::new(comm, mesh_shape)?;
    let p: usize = mesh_shape.iter().product();
    for seed in seeds {
        let mut rng = Rng::new(seed * 1_000_003 + p as u64);
        for (name, shapes, kv) in op_cases(p, &mut rng) {
            let kv: Vec<(&str, &str)> = kv.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let fulls: Vec<Tensor> = shapes.iter().map(|s| rng.tensor(s)).collect();
            let want = tessera::ops::invoke(name, &fulls, &kv)?.swap_remove(0);
            let mut globals = Vec::new();
            let mut desc = Vec::new();
            for (i, f) in fulls.iter().enumerate() {
                let sbp: Vec<Sbp> = mesh_shape.iter().map(|_| rng.sbp(f.rank())).collect();
                desc.push(format!("{:?}{:?}", f.shape(), sbp));
                globals.push(place(f, &sbp, &mesh, seed + i as u64)?);
            }
            let refs: Vec<&GlobalTensor> = globals.iter().collect();
            let what = format!("seed {seed} {name} {kv:?} on {desc:?}");
            let out = ops::invoke(name, &refs, &kv).map_err(|e| fail(format!("{what}: {e}")))?;
            let phys = physical_shape(out.logical_shape(), out.sbp(), mesh.shape(), mesh.coords())?;
            if out.local().shape() != phys.as_slice() {
                return Err(fail(format!(
                    "{what}: local shape {:?}, physical {phys:?}",
                    out.local().shape()
                )));
            }
            same(
                &format!("{what} -> {:?}", out.sbp()),
                &out.to_full()?,
                &want,
            )?;
        }
    }
    Ok(())
}

fn conformance_1d(comm: Comm) -> Result<()> {
    conformance(comm.clone(), &[comm.size()], 0..6)
}

fn conformance_2x2(comm: Comm) -> Result<()> {
    if comm.size() != 4 {
        return Ok(());
    }
    conformance(comm, &[2, 2], 0..6)
}

/// D4, the seed's example: `[4, 3, 1, 2]` split on axis 3 over 2 ranks expanded to
/// `[2, 4, 3, 4, 2]`: locals `[4, 3, 1, 1]` -> `[2, 4, 3, 4, 1]`, output S(4).
fn d4_seed_example(comm: Comm) -> Result<()> {
    if comm.size() != 2 {
        return Ok(());
    }
    let mesh = Mesh::line(comm);
    let full = Tensor::arange(0, 24, 1, DType::F32)?.reshape(&[4, 3, 1, 2])?;
    let x = GlobalTensor::from_logical(&full, &[Sbp::Split(3)], &mesh)?;
    if x.local().shape() != [4, 3, 1, 1] {
        return Err(fail(format!("local input {:?}", x.local().shape())));
    }
    let y = ops::expand(&x, &[2, 4, 3, 4, 2])?;
    if y.sbp() != [Sbp::Split(4)] || y.local().shape() != [2, 4, 3, 4, 1] {
        return Err(fail(format!(
            "output {:?} local {:?}",
            y.sbp(),
            y.local().shape()
        )));
    }
    same(
        "seed expand",
        &y.to_full()?,
        &full.expand(&[2, 4, 3, 4, 2])?.contiguous()?,
    )
}

/// D4: logical `[5, 1]` S(0) on 4 ranks expanded to `[5, 3]`: ranks 1-3 hold `[1, 3]`.
fn d4_five_by_one(comm: Comm) -> Result<()> {
    if comm.size() != 4 {
        return Ok(());
    }
    let mesh = Mesh::line(comm.clone());
    let full = Tensor::arange(0, 5, 1, DType::F64)?.reshape(&[5, 1])?;
    let x = GlobalTensor::from_logical(&full, &[Sbp::Split(0)], &mesh)?;
    let y = ops::expand(&x, &[5, 3])?;
    let want_local: &[usize] = if comm.rank() == 0 { &[2, 3] } else { &[1, 3] };
    if y.sbp() != [Sbp::Split(0)] || y.local().shape() != want_local {
        return Err(fail(format!(
            "rank {}: {:?} local {:?}",
            comm.rank(),
            y.sbp(),
            y.local().shape()
        )));
    }
    same(
        "[5,1] expand",
        &y.to_full()?,
        &full.expand(&[5, 3])?.contiguous()?,
    )
}

fn all_sbps(rank: usize) -> Vec<Sbp> {
    let mut v: Vec<Sbp> = (0..rank).map(Sbp::Split).collect();
    v.push(Sbp::Broadcast);
    v.extend([PartialOp::Sum, PartialOp::Max, PartialOp::Min].map(Sbp::Partial));
    v
}

fn check_boxing(mesh: &Arc<Mesh>, full: &Tensor, src: &[Sbp], dst: &[Sbp]) -> Result<()> {
    let x = place(full, src, mesh, 11)?;
    let y = x.to_sbp(dst)?;
    let what = format!("{:?} {src:?} -> {dst:?}", full.shape());
    let phys = physical_shape(full.shape(), dst, mesh.shape(), mesh.coords())?;
    if y.local().shape() != phys.as_slice() || y.sbp() != dst {
        return Err(fail(format!(
            "{what}: local {:?}, want {phys:?}",
            y.local().shape()
        )));
    }
    same(&what, &y.to_full()?, full)
}

fn boxing_pairs_1d(comm: Comm) -> Result<()> {
    let p = comm.size();
    let mesh = Mesh::line(comm);
    let mut rng = Rng::new(5);
    for shape in [
        vec![p + 1, 3],
        vec![p.saturating_sub(1), 2 * p + 1],
        vec![1, 2],
    ] {
        let full = rng.tensor(&shape);
        for src in all_sbps(2) {
            for dst in all_sbps(2) {
                check_boxing(&mesh, &full, &[src], &[dst])?;
            }
        }
    }
    Ok(())
}

fn boxing_pairs_2x2(comm: Comm) -> Result<()> {
    if comm.size() != 4 {
        return Ok(());
    }
    let mesh = Mesh::new(comm, &[2, 2])?;
    let full = Rng::new(9).tensor(&[5, 3]);
    let all = all_sbps(2);
    for s0 in &all {
        for s1 in &all {
            for d0 in &all {
                for d1 in &all {
                    check_boxing(&mesh, &full, &[*s0, *s1], &[*d0, *d1])?;
                }
            }
        }
    }
    Ok(())
}

/// Every collective with uneven counts, against values computed locally.
fn collectives(comm: Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    let t = |v: Vec<f32>| Tensor::from_vec(v.clone(), &[v.len()]).unwrap();
    let mine: Vec<f32> = (0..me + 1).map(|i| (10 * me + i) as f32).collect();
    let counts: Vec<usize> = (0..p).map(|r| r + 1).collect();
    let g = comm.all_gather_v(&t(mine), &counts)?;
    let want: Vec<f32> = (0..p)
        .flat_map(|r| (0..r + 1).map(move |i| (10 * r + i) as f32))
        .collect();
    same("all_gather_v", &g, &t(want))?;
    let x = t((0..5).map(|i| (i * (me + 1)) as f32).collect());
    let tri = (p * (p + 1) / 2) as f32;
    same(
        "all_reduce sum",
        &comm.all_reduce(&x, PartialOp::Sum)?,
        &t((0..5).map(|i| i as f32 * tri).collect()),
    )?;
    same(
        "all_reduce max",
        &comm.all_reduce(&x, PartialOp::Max)?,
        &t((0..5).map(|i| (i * p) as f32).collect()),
    )?;
    let counts: Vec<usize> = (0..p).map(|r| r % 2 + 1).collect();
    let total: usize = counts.iter().sum();
    let x = t((0..total).map(|i| (i + me) as f32).collect());
    let rs = comm.reduce_scatter_v(&x, &counts, PartialOp::Min)?;
    let at: usize = counts[..me].iter().sum();
    same(
        "reduce_scatter_v",
        &rs,
        &t((at..at + counts[me]).map(|i| i as f32).collect()),
    )?;
    // Rank r sends r + s + 1 copies of 100 r + s to rank s.
    let send: Vec<f32> = (0..p)
        .flat_map(|s| std::iter::repeat_n((100 * me + s) as f32, me + s + 1))
        .collect();
    let sc: Vec<usize> = (0..p).map(|s| me + s + 1).collect();
    let rc: Vec<usize> = (0..p).map(|r| r + me + 1).collect();
    let a2a = comm.all_to_all_v(&t(send), &sc, &rc)?;
    let want: Vec<f32> = (0..p)
        .flat_map(|r| std::iter::repeat_n((100 * r + me) as f32, r + me + 1))
        .collect();
    same("all_to_all_v", &a2a, &t(want))?;
    // Dtypes MPI lacks (staged through f32 / u8 there).
    let h = comm.all_reduce(&Tensor::ones(&[3], DType::F16)?, PartialOp::Sum)?;
    same(
        "all_reduce f16",
        &h,
        &Tensor::full(&[3], p as f64, DType::F16)?,
    )?;
    let flags = Tensor::from_slice(&[me == 0, false], &[2])?;
    let any = comm.all_reduce(&flags, PartialOp::Max)?;
    same(
        "all_reduce bool",
        &any,
        &Tensor::from_slice(&[true, false], &[2])?,
    )?;
    let b = comm.broadcast(&t(vec![me as f32; 3]), p - 1)?;
    same("broadcast", &b, &t(vec![(p - 1) as f32; 3]))?;
    let sub = comm.split(me % 2, p - me)?;
    let members: Vec<usize> = (0..p).filter(|r| r % 2 == me % 2).rev().collect();
    if sub.size() != members.len() || members[sub.rank()] != me {
        return Err(fail(format!(
            "split: rank {me} is {} of {}",
            sub.rank(),
            sub.size()
        )));
    }
    comm.barrier()
}

/// `[rows, cols]` values of `dtype` (integers in [-4, 4]; bool where non-zero).
fn values_of(rng: &mut Rng, rows: usize, cols: usize, dtype: DType) -> Result<Tensor> {
    Ok(rng.tensor(&[rows, cols]).astype(dtype)?)
}

fn interval(r: std::ops::Range<usize>) -> IndexSpec {
    IndexSpec::interval(r.start as isize, r.end as isize)
}

/// D6 S(0) <-> S(1) (all-to-all), S -> B (all-gather) and, at large sizes, P -> B and P -> S
/// (boxing runs those as all-to-alls into shared outputs under MPI when they are large) with
/// uneven splits, blocks wide enough
/// to move piece by piece and narrow ones that are staged, strided (transposed) inputs and
/// dtypes without MPI datatypes; plus `all_to_all_views` on views of several storages against
/// the packed path.
fn all_to_all_layouts(comm: Comm) -> Result<()> {
    let p = comm.size();
    let mesh = Mesh::line(comm.clone());
    let mut rng = Rng::new(77);
    let shapes = [(2 * p + 1, 3), (2 * p + 1, 130 * p + 3), (3, 1024 * p + 5)];
    let dtypes = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::Bool,
        DType::I64,
        DType::U8,
    ];
    // Plus blocks of 1 MiB and 4 MiB on 2 ranks (over the MPI backend's threshold for writing
    // blocks directly, into outputs it puts in shared memory files; 4 and 8 MiB outputs of S ->
    // B, so the all-gather goes that way too).
    let cases = dtypes
        .iter()
        .flat_map(|&d| shapes.iter().map(move |&s| (d, s)))
        .chain([(DType::F32, (1024, 1030)), (DType::F32, (2048, 1030))]);
    for (dtype, (rows, cols)) in cases {
        let full = values_of(&mut rng, rows, cols, dtype)?;
        // The same values seen through a transposed (non-contiguous) view.
        let strided = full.t()?.contiguous()?.t()?;
        for src in [&full, &strided] {
            for (a, b) in [
                (Sbp::Split(0), Sbp::Split(1)),
                (Sbp::Split(1), Sbp::Split(0)),
                (Sbp::Split(0), Sbp::Broadcast),
                (Sbp::Split(1), Sbp::Broadcast),
            ] {
                check_boxing(&mesh, src, &[a], &[b])?;
            }
        }
    }
    // P -> B and P -> S at 4 and 8 MiB: under MPI, reduce-scatter and all-reduce into shared
    // outputs (each rank's part of a peer's shard is written into a staging slot there).
    // (f64: the partial placement adds f64 noise.)
    for (rows, cols) in [(512, 1030), (1024, 1030)] {
        let full = values_of(&mut rng, rows, cols, DType::F64)?;
        for (a, b) in [
            (Sbp::Partial(PartialOp::Sum), Sbp::Broadcast),
            (Sbp::Partial(PartialOp::Sum), Sbp::Split(0)),
            (Sbp::Partial(PartialOp::Sum), Sbp::Split(1)),
            (Sbp::Partial(PartialOp::Max), Sbp::Broadcast),
            (Sbp::Partial(PartialOp::Min), Sbp::Split(1)),
        ] {
            check_boxing(&mesh, &full, &[a], &[b])?;
        }
    }
    // Send views from two tensors, recv views into two tensors.
    let (me, rows, cols) = (comm.rank(), 2 * p + 3, 1030);
    let x = rng.tensor(&[rows, cols]);
    let y = rng.tensor(&[rows, cols]).add(&x)?;
    let send: Vec<Tensor> = (0..p)
        .map(|s| {
            let t = if s % 2 == 0 { &x } else { &y };
            t.index(&[
                interval(balanced_range(rows, p, me)),
                interval(balanced_range(cols, p, s)),
            ])
        })
        .collect::<std::result::Result<_, _>>()?;
    let shape_from = |r: usize| {
        [
            balanced_range(rows, p, r).len(),
            balanced_range(cols, p, me).len(),
        ]
    };
    // Strided recv views: rank r's rows of two wider tensors, from column 3.
    let out = || Tensor::zeros(&[rows, cols + 3], DType::F64);
    let outs = [out()?, out()?];
    let recv: Vec<Tensor> = (0..p)
        .map(|r| {
            let w = shape_from(r)[1];
            outs[r % 2].index(&[interval(balanced_range(rows, p, r)), interval(3..3 + w)])
        })
        .collect::<std::result::Result<_, _>>()?;
    comm.all_to_all_views(&send, &recv)?;
    let want: Vec<Tensor> = (0..p)
        .map(|r| Ok(Tensor::zeros(&shape_from(r), DType::F64)?))
        .collect::<Result<_>>()?;
    all_to_all_views_packed(&*comm, &send, &want)?;
    for r in 0..p {
        same(
            &format!("all_to_all_views block from rank {r}"),
            &recv[r],
            &want[r],
        )?;
        // The sender's block, computed locally.
        let src = if me % 2 == 0 { &x } else { &y };
        let block = src.index(&[
            interval(balanced_range(rows, p, r)),
            interval(balanced_range(cols, p, me)),
        ])?;
        same(&format!("block from rank {r}"), &recv[r], &block)?;
    }
    Ok(())
}

/// A view of `t` restricted to `r` along `axis`.
fn along(t: &Tensor, axis: usize, r: std::ops::Range<usize>) -> Result<Tensor> {
    let mut spec = vec![IndexSpec::All; t.rank()];
    spec[axis] = interval(r);
    Ok(t.index(&spec)?)
}

/// The axis collectives (`all_gather_axis`, `reduce_scatter_axis`, `all_reduce`,
/// `all_to_all_axis`) against slices of one full tensor every rank knows: uneven and empty
/// shards, both axes, strided inputs, dtypes without MPI datatypes, and sizes on both sides
/// of the MPI backend's single-host threshold (256 KiB), called repeatedly so outputs reuse
/// window memory freed by earlier ones.
fn axis_collectives(comm: Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    let mut rng = Rng::new(4242);
    let shapes = [(p + 1, 3), (2 * p + 1, 40_000 / p + 7), (700, 400), (3, 2)];
    for dtype in [DType::F32, DType::F64, DType::Bool, DType::F16, DType::I32] {
        for &(rows, cols) in &shapes {
            let full = values_of(&mut rng, rows, cols, dtype)?;
            for axis in 0..2 {
                let n = full.shape()[axis];
                let counts = balanced_counts(n, p);
                let mine = along(&full, axis, balanced_range(n, p, me))?;
                // Transposed storage: the same values through a strided view.
                let mine = mine.t()?.contiguous()?.t()?;
                let what = |c: &str| format!("{c} {dtype} [{rows}, {cols}] axis {axis}");
                let g = comm.all_gather_axis(&mine, axis, &counts)?;
                same(&what("all_gather_axis"), &g, &full)?;
                let other = 1 - axis;
                let m = full.shape()[other];
                let other_counts = balanced_counts(m, p);
                // This rank holds its `axis` shard; it ends with its `other` shard.
                let a2a = comm.all_to_all_axis(&mine, other, &other_counts, axis, &counts)?;
                let want = along(&full, other, balanced_range(m, p, me))?;
                same(&what("all_to_all_axis"), &a2a, &want)?;
                if dtype == DType::Bool {
                    continue;
                }
                // Partial values: rank r holds (r + 1) * full, so the sum is p(p+1)/2 * full.
                let scale = Tensor::full(&[1], (me + 1) as f64, dtype)?;
                let part = full.binary(&scale, BinaryOp::Mul)?;
                let total = Tensor::full(&[1], (p * (p + 1) / 2) as f64, dtype)?;
                let rs = comm.reduce_scatter_axis(&part, axis, &counts, PartialOp::Sum)?;
                let want = along(
                    &full.binary(&total, BinaryOp::Mul)?,
                    axis,
                    balanced_range(n, p, me),
                )?;
                same(&what("reduce_scatter_axis"), &rs, &want)?;
                let flat = part.contiguous()?.reshape(&[-1])?;
                let ar = comm.all_reduce(&flat, PartialOp::Max)?;
                let top = Tensor::full(&[1], p as f64, dtype)?;
                // max over r of (r + 1) * v: p * v, or v itself where v < 0.
                let want = full
                    .binary(&top, BinaryOp::Mul)?
                    .binary(&full, BinaryOp::Maximum)?
                    .reshape(&[-1])?;
                same(&what("all_reduce max"), &ar, &want)?;
            }
        }
    }
    Ok(())
}
