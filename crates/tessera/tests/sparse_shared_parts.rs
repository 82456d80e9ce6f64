//! Sparse kernels on parts that share one storage, under a concurrent writer (issue 15 item 4).
//!
//! `CsrMatrix::try_from_tensors` keeps the caller's index tensors, which may be views of one
//! buffer; the data, the dense operand and the rhs may be views of it too. A kernel that took
//! two read guards of that storage on one thread deadlocked with a writer queued between them
//! (parking_lot readers wait behind a queued writer): the reader waits for the writer, the
//! writer for the reader's first guard. Here a writer thread fills a region of the shared
//! buffer (not one the matrix uses) in a loop while every kernel that reads the parts runs
//! many times; all of it must finish within a deadline, with the right values.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use tessera::ops::{self, StorageType};
use tessera::{CsrMatrix, SparseParts, Tensor};

const ROWS: usize = 48;
const COLS: usize = 40;
const ITERATIONS: usize = 400;
const DEADLINE: Duration = Duration::from_secs(60);

/// The pattern: row `r` stores columns `r % COLS`, `(r + 5) % COLS`, `(r + 17) % COLS`, sorted.
fn pattern() -> (Vec<i32>, Vec<i32>) {
    let (mut ptr, mut idx) = (vec![0i32], Vec::new());
    for r in 0..ROWS {
        let mut cols: Vec<i32> = [0, 5, 17].iter().map(|d| ((r + d) % COLS) as i32).collect();
        cols.sort_unstable();
        cols.dedup();
        idx.extend(cols);
        ptr.push(idx.len() as i32);
    }
    (ptr, idx)
}

/// The views of one `int32` buffer: indptr, indices, data, a rhs vector, a dense operand of
/// the matrix's shape, and a scratch region the writer fills.
struct Shared {
    indptr: Tensor,
    indices: Tensor,
    data: Tensor,
    x: Tensor,
    dense: Tensor,
    scratch: Tensor,
}

fn shared() -> Shared {
    let (ptr, idx) = pattern();
    let nnz = idx.len();
    let data: Vec<i32> = (0..nnz).map(|k| (k % 5) as i32 + 1).collect();
    let x: Vec<i32> = (0..COLS).map(|c| (c % 3) as i32 - 1).collect();
    let dense: Vec<i32> = (0..ROWS * COLS).map(|k| (k % 7) as i32 - 3).collect();
    let mut all = Vec::new();
    let mut offsets = Vec::new();
    for part in [&ptr, &idx, &data, &x, &dense, &vec![0i32; 4096]] {
        offsets.push((all.len(), part.len()));
        all.extend_from_slice(part);
    }
    let n = all.len();
    let buf = Tensor::from_vec(all, &[n]).unwrap();
    let view = |k: usize| {
        let (off, len) = offsets[k];
        buf.as_strided(&[len], &[1], off).unwrap()
    };
    Shared {
        indptr: view(0),
        indices: view(1),
        data: view(2),
        x: view(3),
        dense: view(4).reshape(&[ROWS as isize, COLS as isize]).unwrap(),
        scratch: view(5),
    }
}

fn to_i64(t: &Tensor) -> Vec<i64> {
    try_to_i64(t).unwrap()
}

/// The elements as `i64`; densifying can fail when the output shares index parts that are
/// being written (`multiply` keeps its input's pattern).
fn try_to_i64(t: &Tensor) -> Result<Vec<i64>, tessera::TesseraError> {
    let d = t.cast_storage(StorageType::Default)?;
    d.astype(tessera::DType::I64)?.to_vec::<i64>()
}

/// Every kernel that reads the parts, once; returns the results to compare.
fn run_kernels(s: &Shared, csr: &Tensor) -> Vec<Vec<i64>> {
    let m = csr.as_csr().unwrap();
    m.validate().unwrap();
    let one = |op: &str, inputs: &[Tensor], kv: &[(&str, &str)]| {
        to_i64(&ops::invoke(op, inputs, kv).unwrap().remove(0))
    };
    vec![
        to_i64(&m.to_dense().unwrap()),
        one("dot", &[csr.clone(), s.x.clone()], &[]),
        one("dot", &[csr.clone(), s.x.clone()], &[("parallel", "false")]),
        one(
            "dot",
            &[
                csr.clone(),
                s.x.clone().reshape(&[COLS as isize, 1]).unwrap(),
            ],
            &[],
        ),
        one(
            "dot",
            &[csr.clone(), s.dense.narrow(0, 0, ROWS).unwrap()],
            &[("transpose_a", "true")],
        ),
        one("dot", &[s.x.clone(), s.x.clone()], &[]),
        one("multiply", &[csr.clone(), s.dense.clone()], &[]),
        one("add", &[csr.clone(), csr.clone()], &[]),
        one("sum", std::slice::from_ref(csr), &[("axis", "0")]),
        one("sum", std::slice::from_ref(csr), &[("axis", "1")]),
        to_i64(&csr.csr_rows(3, 30).unwrap()),
        to_i64(&csr.eliminate_zeros().unwrap()),
    ]
}

#[test]
fn kernels_on_parts_of_one_storage_finish_under_a_concurrent_writer() {
    let s = shared();
    let m = CsrMatrix::try_from_tensors(
        [ROWS, COLS],
        s.indptr.clone(),
        s.indices.clone(),
        s.data.clone(),
    )
    .unwrap();
    // The parts are kept: all of them are views of the one buffer.
    assert!(m.indptr().shares_storage(&s.indices) && m.data().shares_storage(&s.x));
    let csr = Tensor::from_sparse_parts(SparseParts::Csr(m)).unwrap();
    let want = run_kernels(&s, &csr);

    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, scratch) = (stop.clone(), s.scratch.clone());
        thread::spawn(move || {
            let mut k = 0i64;
            while !stop.load(Ordering::Relaxed) {
                scratch.fill_(k % 100).unwrap();
                k += 1;
            }
        })
    };
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        for _ in 0..ITERATIONS {
            assert_eq!(run_kernels(&s, &csr), want);
        }
        done.send(()).unwrap();
    });
    let outcome = finished.recv_timeout(DEADLINE);
    stop.store(true, Ordering::Relaxed);
    match outcome {
        Ok(()) => writer.join().unwrap(),
        // The threads are stuck; the test process ends with them.
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!(
                "deadlock: sparse kernels under a concurrent writer did not finish in {DEADLINE:?}"
            )
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the kernel thread failed"),
    }
}

/// The kernels of [`run_kernels`] that read the index parts, each giving its values or an
/// error (parts caught while written to invalid values).
fn try_kernels(s: &Shared, csr: &Tensor) -> Vec<Result<Vec<i64>, tessera::TesseraError>> {
    let m = csr.as_csr().unwrap();
    let one = |op: &str, inputs: &[Tensor], kv: &[(&str, &str)]| {
        ops::invoke(op, inputs, kv).and_then(|mut v| try_to_i64(&v.remove(0)))
    };
    vec![
        m.to_dense().and_then(|d| try_to_i64(&d)),
        one("dot", &[csr.clone(), s.x.clone()], &[]),
        one(
            "dot",
            &[csr.clone(), s.dense.clone()],
            &[("transpose_a", "true")],
        ),
        one("multiply", &[csr.clone(), s.dense.clone()], &[]),
        one("add", &[csr.clone(), csr.clone()], &[]),
        one("sum", std::slice::from_ref(csr), &[("axis", "0")]),
        csr.csr_rows(3, 30).and_then(|t| try_to_i64(&t)),
    ]
}

#[test]
fn kernels_finish_while_the_shared_index_part_itself_is_written() {
    // The writer breaks and restores the indices (breaking the never-write contract): every
    // kernel call must finish, with the intact result or `SparseError::Modified`.
    let s = shared();
    let m = CsrMatrix::try_from_tensors(
        [ROWS, COLS],
        s.indptr.clone(),
        s.indices.clone(),
        s.data.clone(),
    )
    .unwrap();
    let csr = Tensor::from_sparse_parts(SparseParts::Csr(m)).unwrap();
    let want: Vec<Vec<i64>> = try_kernels(&s, &csr)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let original = s.indices.copy().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, indices) = (stop.clone(), s.indices.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                indices.fill_(COLS as i64 + 3).unwrap();
                indices.assign(&original).unwrap();
            }
        })
    };
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        for _ in 0..ITERATIONS {
            for (got, want) in try_kernels(&s, &csr).into_iter().zip(&want) {
                match got {
                    Ok(v) => assert_eq!(&v, want),
                    Err(e) => assert!(matches!(e.kind(), tessera::ErrorKind::Sparse(_)), "{e}"),
                }
            }
        }
        done.send(()).unwrap();
    });
    let outcome = finished.recv_timeout(DEADLINE);
    stop.store(true, Ordering::Relaxed);
    match outcome {
        Ok(()) => writer.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("deadlock: sparse kernels under a writer of their indices did not finish in {DEADLINE:?}")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the kernel thread failed"),
    }
}
