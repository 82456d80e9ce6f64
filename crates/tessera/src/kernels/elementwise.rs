//! Elementwise kernels over strided, broadcast operands, built on [`Plan`].
//!
//! Two drivers cover every elementwise operation:
//!
//! - [`zip2`]: `out[i] = f(out[i], a[i])` (unary maps ignore the old value; in-place binary
//!   ops use it), a `Plan<2>`.
//! - [`zip3`]: `out[i] = f(a[i], b[i])`, a `Plan<3>`.
//!
//! Operand 0 is the destination. Each innermost run is one plain loop: a slice loop the
//! compiler vectorises when every operand is unit-stride, a scalar-broadcast loop for a
//! stride-0 operand, or a strided loop. When an input walks the destination's fastest dim
//! with a large stride (`a.T + b`), the runs are visited in strips: for a strip of
//! [`STRIP`] columns, every row of the dim where that input *is* contiguous, so the lines of
//! the strided input stay in cache while the strip is swept (a cache-blocked 2-D traversal).
//! Above [`PAR_MIN`] elements the runs (or strips, or pieces of a single long run) are
//! split across rayon's threads.

use rayon::prelude::*;

use super::plan::{Dims, Plan};
use crate::dtype::Element;

/// Element count from which kernels run on several threads.
pub const PAR_MIN: usize = 1 << 16;

/// Width (elements of the destination's fastest dim) of one strip of the blocked traversal.
pub const STRIP: usize = 128;

/// A destination pointer shared by the threads of one kernel call.
///
/// Invariant (what makes the `Send`/`Sync` impls and every write through it sound): the
/// destination layout has no internal overlap, so distinct runs, strips and run pieces write
/// disjoint elements, and the `&mut [T]` it came from is borrowed for the whole call.
#[derive(Clone, Copy)]
struct DstPtr<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: see the type's invariant: threads write disjoint elements of a buffer exclusively
// borrowed by the kernel call, and `T: Send`.
unsafe impl<T: Send> Send for DstPtr<T> {}
// SAFETY: as above; shared use only hands out disjoint element writes.
unsafe impl<T: Send> Sync for DstPtr<T> {}

impl<T> DstPtr<T> {
    fn new(out: &mut [T]) -> Self {
        DstPtr {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        }
    }

    /// Checks that a run of `n` elements from `start` with stride `stride >= 0` stays inside
    /// the buffer (layouts are bounds-checked; this turns a planner bug into a panic, not UB).
    fn check_run(&self, start: isize, n: usize, stride: isize) {
        let last = start + (n as isize - 1) * stride;
        assert!(
            start >= 0 && stride >= 0 && (last as usize) < self.len,
            "elementwise kernel: destination run out of bounds"
        );
    }
}

/// One strided operand of a kernel: its elements, element strides and offset, over the
/// iteration dims shared by all operands of the call.
#[derive(Clone, Copy)]
pub struct Operand<'a> {
    /// Strides (in elements) of each iteration dim; 0 where broadcast.
    pub strides: &'a [isize],
    /// Offset of the first element.
    pub offset: usize,
}

/// `out[i] = f(out[i], a[i])` over `dims`.
///
/// The destination must not overlap itself (no two indices map to one element); callers
/// check that (docs/design.md V7) before calling. `out` and `a` are different buffers.
pub fn zip2<O: Element, A: Element>(
    dims: &[usize],
    out: &mut [O],
    dst: Operand<'_>,
    a: &[A],
    src: Operand<'_>,
    f: impl Fn(O, A) -> O + Sync,
) {
    let plan = Plan::new(dims, [dst.strides, src.strides], [dst.offset, src.offset]);
    let ptr = DstPtr::new(out);
    let (so, sa) = (plan.inner_stride(0), plan.inner_stride(1));
    drive(&plan, &|o: [isize; 2], n: usize| {
        ptr.check_run(o[0], n, so);
        let ao = o[1];
        if so == 1 {
            // SAFETY: the run is inside the buffer (checked above) and no other thread
            // touches these elements (type invariant of `DstPtr`).
            let out = unsafe { std::slice::from_raw_parts_mut(ptr.ptr.offset(o[0]), n) };
            match sa {
                1 => {
                    let a = &a[ao as usize..ao as usize + n];
                    for (x, &y) in out.iter_mut().zip(a) {
                        *x = f(*x, y);
                    }
                }
                0 => {
                    let y = a[ao as usize];
                    for x in out.iter_mut() {
                        *x = f(*x, y);
                    }
                }
                _ => {
                    for (i, x) in out.iter_mut().enumerate() {
                        *x = f(*x, a[(ao + i as isize * sa) as usize]);
                    }
                }
            }
        } else {
            for i in 0..n as isize {
                let y = a[(ao + i * sa) as usize];
                // SAFETY: in bounds (checked run) and written only by this thread.
                unsafe {
                    let p = ptr.ptr.offset(o[0] + i * so);
                    *p = f(*p, y);
                }
            }
        }
    });
}

/// `out[i] = f(a[i], b[i])` over `dims`. The destination must not overlap itself and must
/// not share memory with `a` or `b`.
pub fn zip3<O: Element, A: Element, B: Element>(
    dims: &[usize],
    out: &mut [O],
    dst: Operand<'_>,
    (a, sa): (&[A], Operand<'_>),
    (b, sb): (&[B], Operand<'_>),
    f: impl Fn(A, B) -> O + Sync,
) {
    let plan = Plan::new(
        dims,
        [dst.strides, sa.strides, sb.strides],
        [dst.offset, sa.offset, sb.offset],
    );
    let ptr = DstPtr::new(out);
    let (so, sa, sb) = (
        plan.inner_stride(0),
        plan.inner_stride(1),
        plan.inner_stride(2),
    );
    drive(&plan, &|o: [isize; 3], n: usize| {
        ptr.check_run(o[0], n, so);
        let (ao, bo) = (o[1], o[2]);
        if so != 1 {
            for i in 0..n as isize {
                let v = f(a[(ao + i * sa) as usize], b[(bo + i * sb) as usize]);
                // SAFETY: in bounds (checked run) and written only by this thread.
                unsafe { *ptr.ptr.offset(o[0] + i * so) = v };
            }
            return;
        }
        // SAFETY: the run is inside the buffer (checked above) and no other thread touches
        // these elements (type invariant of `DstPtr`).
        let out = unsafe { std::slice::from_raw_parts_mut(ptr.ptr.offset(o[0]), n) };
        let (au, bu) = (ao as usize, bo as usize);
        match (sa, sb) {
            (1, 1) => {
                let (a, b) = (&a[au..au + n], &b[bu..bu + n]);
                for ((x, &y), &z) in out.iter_mut().zip(a).zip(b) {
                    *x = f(y, z);
                }
            }
            (1, 0) => {
                let (a, z) = (&a[au..au + n], b[bu]);
                for (x, &y) in out.iter_mut().zip(a) {
                    *x = f(y, z);
                }
            }
            (0, 1) => {
                let (y, b) = (a[au], &b[bu..bu + n]);
                for (x, &z) in out.iter_mut().zip(b) {
                    *x = f(y, z);
                }
            }
            (_, 1) => {
                let b = &b[bu..bu + n];
                for (i, (x, &z)) in out.iter_mut().zip(b).enumerate() {
                    *x = f(a[(ao + i as isize * sa) as usize], z);
                }
            }
            (1, _) => {
                let a = &a[au..au + n];
                for (i, (x, &y)) in out.iter_mut().zip(a).enumerate() {
                    *x = f(y, b[(bo + i as isize * sb) as usize]);
                }
            }
            _ => {
                for (i, x) in out.iter_mut().enumerate() {
                    let i = i as isize;
                    *x = f(a[(ao + i * sa) as usize], b[(bo + i * sb) as usize]);
                }
            }
        }
    });
}

/// Calls `run(offsets, len)` for pieces of runs that together cover the plan exactly once,
/// in parallel above [`PAR_MIN`] elements, in strips when an input is strided along the
/// destination's fastest dim.
fn drive<const K: usize>(plan: &Plan<K>, run: &(impl Fn([isize; K], usize) + Sync)) {
    if plan.numel == 0 {
        return;
    }
    let threads = rayon::current_num_threads();
    let par = plan.numel >= PAR_MIN && threads > 1;
    if let Some(p) = blocking_dim(plan) {
        return drive_strips(plan, p, run, par);
    }
    let (n, runs) = (plan.inner_len(), plan.runs());
    if !par {
        plan.for_each_run(0..runs, |o| run(o, n));
        return;
    }
    let tasks = 4 * threads;
    if runs >= tasks {
        let chunk = runs.div_ceil(tasks);
        (0..runs.div_ceil(chunk))
            .into_par_iter()
            .for_each(|c| plan.for_each_run(c * chunk..((c + 1) * chunk).min(runs), |o| run(o, n)));
    } else {
        // Few long runs: cut each run into pieces.
        let per = tasks.div_ceil(runs);
        let piece = n.div_ceil(per).max(4096);
        let per = n.div_ceil(piece);
        (0..runs * per).into_par_iter().for_each(|t| {
            let (r, s) = (t / per, t % per);
            let start = s * piece;
            plan.for_each_run(r..r + 1, |o| {
                run(
                    advance(plan, o, plan.rank() - 1, start),
                    piece.min(n - start),
                )
            });
        });
    }
}

/// `o` moved `by` steps along dim `dim` of `plan`.
fn advance<const K: usize>(plan: &Plan<K>, o: [isize; K], dim: usize, by: usize) -> [isize; K] {
    std::array::from_fn(|k| o[k] + by as isize * plan.strides[k][dim])
}

/// The dim to sweep inside each strip, when blocking pays: some input walks the innermost
/// dim with |stride| > 1 and has another dim along which it is closer to contiguous.
fn blocking_dim<const K: usize>(plan: &Plan<K>) -> Option<usize> {
    let r = plan.rank();
    if r < 2 || plan.inner_len() <= STRIP / 2 {
        return None;
    }
    (1..K)
        .filter(|&k| plan.inner_stride(k).unsigned_abs() > 1)
        .filter_map(|k| {
            let inner = plan.inner_stride(k).unsigned_abs();
            (0..r - 1)
                .filter(|&d| plan.strides[k][d] != 0)
                .map(|d| (plan.strides[k][d].unsigned_abs(), d))
                .filter(|&(s, _)| s < inner)
                .min()
        })
        .min()
        .map(|(_, d)| d)
}

/// Strip-mined traversal: for each combination of the other outer dims and each strip of
/// the innermost dim, every index of dim `p`, as runs of at most [`STRIP`] elements.
fn drive_strips<const K: usize>(
    plan: &Plan<K>,
    p: usize,
    run: &(impl Fn([isize; K], usize) + Sync),
    par: bool,
) {
    let r = plan.rank();
    let (n, np) = (plan.inner_len(), plan.dims[p]);
    // Outer plan: every dim but `p` and the innermost, then `p` as its innermost dim, so
    // its runs are the starting offsets of each 2-D (p, inner) block.
    let order: Dims<usize> = (0..r - 1).filter(|&d| d != p).chain([p]).collect();
    let outer = Plan::<K> {
        dims: order.iter().map(|&d| plan.dims[d]).collect(),
        strides: std::array::from_fn(|k| order.iter().map(|&d| plan.strides[k][d]).collect()),
        offsets: plan.offsets,
        numel: plan.numel / n,
    };
    let strips = n.div_ceil(STRIP);
    let block = |t: usize| {
        let (c, s) = (t / strips, t % strips);
        let start = s * STRIP;
        let len = STRIP.min(n - start);
        outer.for_each_run(c..c + 1, |o| {
            let mut o = advance(plan, o, r - 1, start);
            for _ in 0..np {
                run(o, len);
                o = advance(plan, o, p, 1);
            }
        });
    };
    let tasks = outer.runs() * strips;
    if par {
        (0..tasks).into_par_iter().for_each(block);
    } else {
        (0..tasks).for_each(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Naive reference: `out[idx] = a[idx] + b[idx]` by odometer.
    fn naive(
        dims: &[usize],
        s: [&[isize]; 3],
        off: [usize; 3],
        a: &[f64],
        b: &[f64],
        out: &mut [f64],
    ) {
        let n: usize = dims.iter().product();
        for lin in 0..n {
            let (mut rem, mut o) = (lin, off.map(|x| x as isize));
            for d in (0..dims.len()).rev() {
                let i = (rem % dims[d]) as isize;
                rem /= dims[d];
                for k in 0..3 {
                    o[k] += i * s[k][d];
                }
            }
            out[o[0] as usize] = a[o[1] as usize] + b[o[2] as usize];
        }
    }

    type Case = (Vec<usize>, [Vec<isize>; 3], [usize; 3]);

    #[test]
    fn zip3_matches_naive_on_strided_blocked_and_parallel_cases() {
        // (dims, strides of out/a/b, offsets); sizes exercise strips and threads.
        let cases: Vec<Case> = vec![
            (
                vec![300, 300],
                [vec![300, 1], vec![1, 300], vec![300, 1]],
                [0, 0, 0],
            ),
            (
                vec![3, 200, 150],
                [vec![30000, 150, 1], vec![1, 450, 3], vec![0, 1, 0]],
                [0, 0, 0],
            ),
            (vec![70000], [vec![1], vec![0], vec![-1]], [0, 0, 69999]),
            (
                vec![2, 70000],
                [vec![1, 2], vec![70000, 1], vec![0, 1]],
                [0, 0, 0],
            ),
            (
                vec![4, 5],
                [vec![-5, 1], vec![1, 4], vec![5, 1]],
                [15, 0, 0],
            ),
        ];
        for (dims, s, off) in cases {
            let n: usize = dims.iter().product();
            let a: Vec<f64> = (0..n * 3).map(|x| x as f64).collect();
            let b: Vec<f64> = (0..n * 3).map(|x| (x * 7 % 11) as f64).collect();
            let (mut got, mut want) = (vec![0.0; n], vec![0.0; n]);
            let op = |k: usize| Operand {
                strides: &s[k],
                offset: off[k],
            };
            zip3(&dims, &mut got, op(0), (&a, op(1)), (&b, op(2)), |x, y| {
                x + y
            });
            naive(&dims, [&s[0], &s[1], &s[2]], off, &a, &b, &mut want);
            assert_eq!(got, want, "{dims:?} {s:?}");
        }
    }

    #[test]
    fn zip2_in_place_through_strided_destination() {
        // Destination: every other element of a 2 x 80000 buffer, transposed walk.
        let mut out: Vec<i64> = (0..320004).collect();
        let a: Vec<i64> = (0..160000).collect();
        let dst = Operand {
            strides: &[2, 4],
            offset: 1,
        };
        let src = Operand {
            strides: &[1, 2],
            offset: 0,
        };
        zip2(&[2, 80000], &mut out, dst, &a, src, |o, x| o * 10 + x);
        for i in 0..2 {
            for j in 0..80000 {
                let (d, s) = (1 + 2 * i + 4 * j, i + 2 * j);
                assert_eq!(out[d], d as i64 * 10 + s as i64);
                assert_eq!(out[d - 1], d as i64 - 1);
            }
        }
    }
}
