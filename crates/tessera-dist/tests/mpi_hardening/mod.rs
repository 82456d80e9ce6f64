//! D7 under MPI: SPMD mistakes that one rank makes alone must be an error on every rank, never
//! a hang or an MPI abort (issue 15, items 2 and 5). Each case returns this rank's result; the
//! caller checks that no rank got `Ok`. `TESSERA_DIST_HARDENING_CASE=<name>` runs one case.

use tessera::{DType, Tensor};
use tessera_dist::{Comm, DistError, PartialOp};

/// A case: its name and its body, run on every rank of a world of at least 2.
pub type Case = (&'static str, fn(&Comm) -> tessera_dist::Result<()>);

/// Every case of this module.
pub fn cases() -> Vec<Case> {
    vec![
        (
            "path_divergence_all_gather_axis",
            path_divergence_all_gather_axis,
        ),
        (
            "path_divergence_all_to_all_axis",
            path_divergence_all_to_all_axis,
        ),
        ("local_refusal_all_gather_v", local_refusal_all_gather_v),
        (
            "local_refusal_reduce_scatter_v",
            local_refusal_reduce_scatter_v,
        ),
        (
            "local_refusal_all_to_all_views",
            local_refusal_all_to_all_views,
        ),
        (
            "local_refusal_all_gather_axis",
            local_refusal_all_gather_axis,
        ),
        (
            "pair_count_mismatch_all_to_all_v",
            pair_count_mismatch_all_to_all_v,
        ),
        ("dtype_mismatch_all_gather_v", dtype_mismatch_all_gather_v),
        (
            "dtype_mismatch_all_to_all_views",
            dtype_mismatch_all_to_all_views,
        ),
        (
            "dtype_mismatch_all_gather_axis_large",
            dtype_mismatch_all_gather_axis_large,
        ),
        ("dtype_mismatch_all_reduce", dtype_mismatch_all_reduce),
        ("window_then_refusal", window_then_refusal),
        ("window_failure_on_one_rank", window_failure_on_one_rank),
    ]
}

fn zeros(shape: &[usize], dtype: DType) -> tessera_dist::Result<Tensor> {
    Ok(Tensor::zeros(shape, dtype)?)
}

/// Rank 0's shards are 64 columns wide, the others' 1: rank 0's output crosses the
/// single-host threshold (256 KiB), the others' does not, so they would take different paths.
fn path_divergence_all_gather_axis(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let cols = if comm.rank() == 0 { 64 } else { 1 };
    let send = zeros(&[1024, cols], DType::F32)?;
    comm.all_gather_axis(&send, 0, &vec![1024; p]).map(drop)
}

/// As above for an all-to-all (S(0) -> S(1)): rank 0 splits its rows 256 per rank, the others
/// 1 per rank, so only rank 0's outputs are large (each rank's own check passes).
fn path_divergence_all_to_all_axis(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let per = if comm.rank() == 0 { 256 } else { 1 };
    let send = zeros(&[per * p, 256], DType::F32)?;
    comm.all_to_all_axis(&send, 0, &vec![per; p], 1, &vec![256; p])
        .map(drop)
}

/// Rank 0 passes one count too few: its local check fails before the MPI call.
fn local_refusal_all_gather_v(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let n = if comm.rank() == 0 { p - 1 } else { p };
    let send = zeros(&[3], DType::F32)?;
    comm.all_gather_v(&send, &vec![3; n]).map(drop)
}

/// Rank 0's buffer is one element short of `sum(counts)`.
fn local_refusal_reduce_scatter_v(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let len = 4 * p - usize::from(comm.rank() == 0);
    let send = zeros(&[len], DType::F32)?;
    comm.reduce_scatter_v(&send, &vec![4; p], PartialOp::Sum)
        .map(drop)
}

/// Rank 0 passes one recv view too few (`check_views` fails there alone).
fn local_refusal_all_to_all_views(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let send: Vec<Tensor> = (0..p)
        .map(|_| zeros(&[2, 3], DType::F32))
        .collect::<Result<_, _>>()?;
    let n = if comm.rank() == 0 { p - 1 } else { p };
    let recv: Vec<Tensor> = (0..n)
        .map(|_| zeros(&[2, 3], DType::F32))
        .collect::<Result<_, _>>()?;
    comm.all_to_all_views(&send, &recv)
}

/// Rank 0 passes an axis its shard does not have (a small collective: the MPI path).
fn local_refusal_all_gather_axis(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let axis = if comm.rank() == 0 { 2 } else { 0 };
    let send = zeros(&[2, 3], DType::F32)?;
    comm.all_gather_axis(&send, axis, &vec![2; p]).map(drop)
}

/// Rank 0 sends rank 1 one element more than rank 1 expects (MPI would truncate and abort).
fn pair_count_mismatch_all_to_all_v(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let mut sc = vec![2; p];
    if comm.rank() == 0 {
        sc[1] = 3;
    }
    let send = zeros(&[sc.iter().sum()], DType::F32)?;
    comm.all_to_all_v(&send, &sc, &vec![2; p]).map(drop)
}

/// Rank 0 gathers `u8`, the others `bool`: bytes 2 would land in bool outputs.
fn dtype_mismatch_all_gather_v(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let send = if comm.rank() == 0 {
        Tensor::from_slice(&[2u8, 7], &[2])?
    } else {
        zeros(&[2], DType::Bool)?
    };
    check_dtype_error(comm.all_gather_v(&send, &vec![2; p]).map(drop))
}

/// Rank 0 exchanges `u8` views, the others `bool` views (raw bytes on the wire).
fn dtype_mismatch_all_to_all_views(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let dtype = if comm.rank() == 0 {
        DType::U8
    } else {
        DType::Bool
    };
    let send = Tensor::full(&[p, 4], tessera::Scalar::Int(2), DType::U8)?.astype(dtype)?;
    let out = zeros(&[p, 4], dtype)?;
    let sv: Vec<Tensor> = (0..p)
        .map(|r| send.narrow(0, r, 1))
        .collect::<Result<_, _>>()?;
    let rv: Vec<Tensor> = (0..p)
        .map(|r| out.narrow(0, r, 1))
        .collect::<Result<_, _>>()?;
    check_dtype_error(comm.all_to_all_views(&sv, &rv))
}

/// Rank 0 gathers `u8`, the others `bool`, on a large output (the single-host path).
fn dtype_mismatch_all_gather_axis_large(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let dtype = if comm.rank() == 0 {
        DType::U8
    } else {
        DType::Bool
    };
    let send = zeros(&[512, 1024], dtype)?;
    check_dtype_error(comm.all_gather_axis(&send, 0, &vec![512; p]).map(drop))
}

/// Rank 0 reduces `i32`, the others `f32` (same byte count: MPI would not notice).
fn dtype_mismatch_all_reduce(comm: &Comm) -> tessera_dist::Result<()> {
    let dtype = if comm.rank() == 0 {
        DType::I32
    } else {
        DType::F32
    };
    let send = zeros(&[16], dtype)?;
    check_dtype_error(comm.all_reduce(&send, PartialOp::Sum).map(drop))
}

/// `got`, unless it is an error that does not name the dtypes (then a test failure, as `Ok`).
fn check_dtype_error(got: tessera_dist::Result<()>) -> tessera_dist::Result<()> {
    match got {
        Err(DistError::Mismatch(m)) if m.contains("dtype") => Err(DistError::Mismatch(m)),
        Err(e) => {
            eprintln!("expected a dtype mismatch, got: {e}");
            Ok(())
        }
        ok => ok,
    }
}

/// A large all-gather (on the single-host path it creates a window, freed at exit), then a
/// local refusal on rank 0. With `TESSERA_DIST_TEST_DETACH_FAIL=0` rank 0 then fails to detach
/// the window's tensors at exit: every rank must still finish (issue 15, the window free).
fn window_then_refusal(comm: &Comm) -> tessera_dist::Result<()> {
    let p = comm.size();
    let send = Tensor::ones(&[256, 512], DType::F32)?;
    let kept = comm.all_gather_axis(&send, 0, &vec![256; p])?;
    // A tensor still on the window at exit, to be detached then.
    std::mem::forget(kept);
    local_refusal_all_gather_v(comm)
}

/// Rank 0 fails in the local steps after `MPI_Win_allocate_shared` (test hook
/// `fail_next_window`) while a large all-gather opens a new window: every rank must get an
/// error (before the fix the peers went on into the next round's all-gather and waited
/// forever), and the next all-gather must work and be right. Where no window is allocated
/// (the path off, or capped below the size) the case passes without testing anything.
fn window_failure_on_one_rank(comm: &Comm) -> tessera_dist::Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    // A 96 MiB output: larger than any window the other cases leave.
    let rows = 24576usize.div_ceil(p);
    let send = Tensor::full(&[rows, 1024], me as f64, DType::F32)?;
    if me == 0 {
        tessera_dist::mpi_backend::fail_next_window(true);
    }
    let got = comm.all_gather_axis(&send, 0, &vec![rows; p]);
    let unused = tessera_dist::mpi_backend::fail_next_window(false);
    // Whether rank 0's hook fired (a window was allocated), agreed.
    let fired = Tensor::from_slice(&[u8::from(me == 0 && !unused)], &[1])?;
    let fired = comm
        .all_reduce(&fired, PartialOp::Max)?
        .astype(DType::I64)?;
    if fired.item::<i64>()? == 0 {
        if me == 0 {
            println!("window_failure_on_one_rank: no window allocated, nothing tested");
        }
        return Err(DistError::Comm(
            "no window allocated: nothing tested".into(),
        ));
    }
    if let Ok(t) = got {
        eprintln!(
            "rank {me}: the all-gather gave Ok{:?} after rank 0 failed",
            t.shape()
        );
        return Ok(());
    }
    let again = comm.all_gather_axis(&send, 0, &vec![rows; p])?;
    for r in 0..p {
        let part = again.narrow(0, r * rows, rows)?.to_vec::<f32>()?;
        if part.iter().any(|&v| v != r as f32) {
            eprintln!("rank {me}: the all-gather after the failure is wrong at shard {r}");
            return Ok(());
        }
    }
    got.map(drop)
}
