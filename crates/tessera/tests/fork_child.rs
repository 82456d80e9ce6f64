//! After `fork()` rayon's pool has no threads in the child: kernels there must run
//! sequentially instead of waiting forever (issue 15, item 9). One test per binary: it forks.

use std::time::{Duration, Instant};

use tessera::{DType, Tensor};

const N: usize = 1 << 20;

/// Large ops through every parallel path (elementwise, strided copy, reduction, matmul);
/// `Err(k)` names the first wrong result.
fn compute() -> Result<(), i32> {
    let a = Tensor::from_vec((0..N as i64).collect(), &[N]).map_err(|_| 10)?;
    let s = a.add(&a).and_then(|b| b.sum(None, false)).map_err(|_| 11)?;
    if s.item::<i64>().map_err(|_| 12)? != (N as i64) * (N as i64 - 1) {
        return Err(13);
    }
    let m = a.view(&[1024, 1024]).map_err(|_| 20)?;
    let t = m.t().and_then(|t| t.contiguous()).map_err(|_| 21)?;
    let v = t.to_vec::<i64>().map_err(|_| 22)?;
    if v[1] != 1024 || v[1024] != 1 || v[N - 1] != N as i64 - 1 {
        return Err(23);
    }
    let cols = m.sum(Some(&[0]), false).map_err(|_| 30)?;
    let c = cols.to_vec::<i64>().map_err(|_| 31)?;
    // Column j sums j + 1024 i over i < 1024.
    if c[5] != 5 * 1024 + 1024 * (1024 * 1023 / 2) {
        return Err(32);
    }
    let ones = Tensor::ones(&[256, 256], DType::F64).map_err(|_| 40)?;
    let p = ones.matmul(&ones).map_err(|_| 41)?;
    if p.to_vec::<f64>()
        .map_err(|_| 42)?
        .iter()
        .any(|&x| x != 256.0)
    {
        return Err(43);
    }
    // A factorization large enough for faer's own parallelism (on rayon's pool).
    let a = Tensor::eye(400, 400, 0, DType::F64)
        .and_then(|e| e.mul_scalar(2.0))
        .map_err(|_| 50)?;
    let s = a
        .svdvals()
        .and_then(|s| s.to_vec::<f64>())
        .map_err(|_| 51)?;
    if s.iter().any(|&x| (x - 2.0).abs() > 1e-12) {
        return Err(52);
    }
    let b = Tensor::ones(&[400], DType::F64).map_err(|_| 53)?;
    let x = a
        .solve(&b)
        .and_then(|x| x.to_vec::<f64>())
        .map_err(|_| 54)?;
    if x.iter().any(|&v| (v - 0.5).abs() > 1e-12) {
        return Err(55);
    }
    Ok(())
}

#[test]
fn a_forked_child_computes_large_ops_sequentially() {
    // A pool of several threads, used by the parent before the fork.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build_global();
    assert!(rayon::current_num_threads() > 1);
    compute().expect("parent");
    assert!(tessera::kernels::parallel::enabled());
    // SAFETY: the child runs only this crate's code and then `_exit`s without returning to
    // the test harness (whose other threads do not exist in the child); glibc's malloc is
    // fork-safe, so allocating in the child is fine.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = match std::panic::catch_unwind(compute) {
            Ok(Ok(())) if !tessera::kernels::parallel::enabled() => 0,
            Ok(Ok(())) => 2,
            Ok(Err(k)) => k,
            Err(_) => 3,
        };
        // SAFETY: ends the child at once, without running the harness's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child; `status` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        assert!(r >= 0, "waitpid failed");
        if r == pid {
            break;
        }
        if Instant::now() > deadline {
            // SAFETY: kills and reaps our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("the forked child hung in a parallel kernel");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(libc::WIFEXITED(status), "child died: status {status}");
    assert_eq!(libc::WEXITSTATUS(status), 0, "child computed a wrong value");
    // The parent keeps its pool.
    assert!(tessera::kernels::parallel::enabled());
    compute().expect("parent after fork");
}
