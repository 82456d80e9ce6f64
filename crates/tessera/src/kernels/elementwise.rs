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
use crate::error::{ErrorKind, Result};
use crate::layout::overlap::check_writable_parts;
use crate::shape::is_contiguous;
use runs::{run2_simd, run3_simd};

mod runs;

/// Element count from which kernels of a few cycles per element (arithmetic, comparisons,
/// copies, reductions) run on several threads. Measured by `benches/par_cutover.rs`
/// (docs/design.md P3): handing work to rayon's sleeping threads costs about 10 us on this
/// machine, more than a 64 Ki-element `a + b` takes on one thread (8 us); two threads win for
/// `a + b`, `sum` and a transposed `a + b` from 256 Ki elements.
pub const PAR_MIN: usize = 1 << 18;

/// Element count from which the vectorised transcendental functions (`exp`, `log`, `sin`,
/// ... about a nanosecond per element) run on several threads. On 2026-11-28 a 64 Ki-element
/// `sin` took 140 us on one thread and 94 us on two; on 2026-12-01, with the kernels faster
/// and rayon's hand-off to a sleeping thread far slower on this VM (calls interleaved with
/// other work, as in `bench_ops.py`), 45-57 us on one and 148-237 on two, and two threads won
/// only from 256 Ki (386 against 293 us). The cut-over is where threads won on both days.
pub const PAR_MIN_COSTLY: usize = 1 << 18;

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

    /// Checks that a run of `n >= 1` elements from `start` with stride `stride >= 0` stays
    /// inside the buffer, with checked arithmetic (the entry points validated the operands;
    /// this turns a planner bug into a panic, not UB).
    fn check_run(&self, start: isize, n: usize, stride: isize) {
        let last = isize::try_from(n - 1)
            .ok()
            .and_then(|m| m.checked_mul(stride))
            .and_then(|r| r.checked_add(start));
        assert!(
            start >= 0 && stride >= 0 && matches!(last, Some(l) if (l as usize) < self.len),
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

/// Checks that the operand reaches only elements of a buffer of `len` elements over `dims`
/// (checked arithmetic: a span that overflows is out of bounds too).
fn check_operand(what: &str, dims: &[usize], op: &Operand<'_>, len: usize) -> Result<()> {
    let oob = || {
        ErrorKind::OutOfBounds(format!(
            "{what} with dims {dims:?}, strides {:?} and offset {} does not fit in {len} elements",
            op.strides, op.offset
        ))
        .into()
    };
    if op.strides.len() != dims.len() {
        return Err(ErrorKind::InvalidShape(format!(
            "{what} has {} strides for {} dims",
            op.strides.len(),
            dims.len()
        ))
        .into());
    }
    if dims.contains(&0) {
        return Ok(());
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&d, &s) in dims.iter().zip(op.strides) {
        let reach = isize::try_from(d - 1)
            .ok()
            .and_then(|m| m.checked_mul(s))
            .ok_or_else(oob)?;
        let side = if reach < 0 { &mut lo } else { &mut hi };
        *side = side.checked_add(reach).ok_or_else(oob)?;
    }
    let base = isize::try_from(op.offset).map_err(|_| oob())?;
    match (base.checked_add(lo), base.checked_add(hi)) {
        (Some(first), Some(last)) if first >= 0 && (last as usize) < len => Ok(()),
        _ => Err(oob()),
    }
}

/// The call as one run, when it is small (below [`PAR_MIN`] elements, so serial) and every
/// operand walks the dims as one run: the destination row-major contiguous (so it cannot
/// overlap itself), each input contiguous in the same order or constant (stride 0 on every
/// dim). Returns the element count and each operand's run stride (1 or 0). Such calls, the
/// common small ones, skip the plan (sorting, merging, the overlap analysis); docs/design.md
/// P4 gives the measured saving.
fn small_single_run<const K: usize>(
    dims: &[usize],
    strides: [&[isize]; K],
) -> Option<(usize, [isize; K])> {
    let n = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d))?;
    if n == 0 || n >= super::parallel::cut_over(PAR_MIN) {
        return None;
    }
    let mut run = [1isize; K];
    for (k, s) in strides.iter().enumerate() {
        let walk = dims.iter().rev().zip(s.iter().rev());
        run[k] = if is_contiguous(walk, n) {
            1
        } else if k > 0 && dims.iter().zip(s.iter()).all(|(&d, &st)| d == 1 || st == 0) {
            0
        } else {
            return None;
        };
    }
    Some((n, run))
}

/// Up to this many elements, a call whose destination is row-major contiguous but whose
/// inputs are not one run each (a broadcast row, a transposed view) walks its rows directly
/// ([`for_each_small_row`]) instead of building a plan: the plan (sorting, merging, the
/// overlap analysis, its allocations) was most of the time of such calls, `astype` of 16
/// broadcast `int64` 1.0 us against NumPy's 0.55.
const SMALL_ROWS: usize = 512;

/// `run(offsets, len)` for each innermost row of `dims` in row-major order, with each
/// operand's offset of the row's first element, when the call is small ([`SMALL_ROWS`]) and
/// the destination (operand 0) is row-major contiguous (so its rows cannot overlap); `false`,
/// with nothing run, otherwise. The operands have been bounds-checked.
fn for_each_small_row<const K: usize>(
    dims: &[usize],
    strides: [&[isize]; K],
    offsets: [usize; K],
    mut run: impl FnMut([isize; K], usize),
) -> bool {
    let Some((&inner, outer)) = dims.split_last() else {
        return false;
    };
    let n = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    let dst = dims.iter().rev().zip(strides[0].iter().rev());
    let n = match n {
        Some(n) if n > 0 && n <= SMALL_ROWS && is_contiguous(dst, n) => n,
        _ => return false,
    };
    let base = offsets.map(|o| o as isize);
    for row in 0..n / inner {
        let (mut at, mut rest) = (base, row);
        for (d, &len) in outer.iter().enumerate().rev() {
            let i = (rest % len) as isize;
            rest /= len;
            for (a, s) in at.iter_mut().zip(strides) {
                *a += i * s[d];
            }
        }
        run(at, inner);
    }
    true
}

/// `out[i] = f(out[i], a[i])` over `dims`.
///
/// Checked: every operand must stay inside its buffer ([`ErrorKind::OutOfBounds`]) and
/// the destination must not overlap itself ([`ErrorKind::OverlappingWrite`], docs/design.md
/// V7); nothing is written when a check fails. `out` and `a` are different buffers (the
/// borrows guarantee it).
pub fn zip2<O: Element, A: Element>(
    dims: &[usize],
    out: &mut [O],
    dst: Operand<'_>,
    a: &[A],
    src: Operand<'_>,
    f: impl Fn(O, A) -> O + Sync,
) -> Result<()> {
    check_operand("destination", dims, &dst, out.len())?;
    check_operand("source", dims, &src, a.len())?;
    let ptr = DstPtr::new(out);
    if let Some((n, s)) = small_single_run(dims, [dst.strides, src.strides]) {
        let o = [dst.offset, src.offset].map(|x| x as isize);
        run2_simd(ptr, s[0], s[1], a, o, n, &f);
        return Ok(());
    }
    let (strides, offsets) = ([dst.strides, src.strides], [dst.offset, src.offset]);
    let inner = |k: usize| strides[k].last().copied().unwrap_or(1);
    if for_each_small_row(dims, strides, offsets, |o, n| {
        run2_simd(ptr, 1, inner(1), a, o, n, &f)
    }) {
        return Ok(());
    }
    check_writable_parts(dims, dst.strides)?;
    let plan = Plan::new(dims, [dst.strides, src.strides], [dst.offset, src.offset]);
    let (so, sa) = (plan.inner_stride(0), plan.inner_stride(1));
    drive(&plan, &|o: [isize; 2], n: usize| {
        run2_simd(ptr, so, sa, a, o, n, &f)
    });
    Ok(())
}

/// `out[i] = f(a[i], b[i])` over `dims`, checked as [`zip2`] is (the borrows keep `out`
/// apart from `a` and `b`).
pub fn zip3<O: Element, A: Element, B: Element>(
    dims: &[usize],
    out: &mut [O],
    dst: Operand<'_>,
    (a, sa): (&[A], Operand<'_>),
    (b, sb): (&[B], Operand<'_>),
    f: impl Fn(A, B) -> O + Sync,
) -> Result<()> {
    check_operand("destination", dims, &dst, out.len())?;
    check_operand("first input", dims, &sa, a.len())?;
    check_operand("second input", dims, &sb, b.len())?;
    let ptr = DstPtr::new(out);
    if let Some((n, s)) = small_single_run(dims, [dst.strides, sa.strides, sb.strides]) {
        let o = [dst.offset, sa.offset, sb.offset].map(|x| x as isize);
        run3_simd(ptr, s, (a, b), o, n, &f);
        return Ok(());
    }
    let strides = [dst.strides, sa.strides, sb.strides];
    let inner = |k: usize| strides[k].last().copied().unwrap_or(1);
    let offsets = [dst.offset, sa.offset, sb.offset];
    if for_each_small_row(dims, strides, offsets, |o, n| {
        run3_simd(ptr, [1, inner(1), inner(2)], (a, b), o, n, &f)
    }) {
        return Ok(());
    }
    check_writable_parts(dims, dst.strides)?;
    let plan = Plan::new(
        dims,
        [dst.strides, sa.strides, sb.strides],
        [dst.offset, sa.offset, sb.offset],
    );
    let (so, sa, sb) = (
        plan.inner_stride(0),
        plan.inner_stride(1),
        plan.inner_stride(2),
    );
    drive(&plan, &|o: [isize; 3], n: usize| {
        run3_simd(ptr, [so, sa, sb], (a, b), o, n, &f)
    });
    Ok(())
}

/// Calls `run(offsets, len)` for pieces of runs that together cover the plan exactly once,
/// in parallel above [`PAR_MIN`] elements, in strips when an input is strided along the
/// destination's fastest dim.
///
/// The callback is a `dyn` reference so that this driver and the rayon machinery under it
/// are compiled once per `K`, not once per kernel closure and dtype (the closures number in
/// the thousands); the cost is one indirect call per run.
fn drive<const K: usize>(plan: &Plan<K>, run: &(dyn Fn([isize; K], usize) + Sync)) {
    if plan.numel == 0 {
        return;
    }
    let par = plan.numel >= super::parallel::cut_over(PAR_MIN) && super::parallel::enabled();
    let threads = super::parallel::num_threads();
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
    run: &(dyn Fn([isize; K], usize) + Sync),
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
            // From PAR_MIN elements: the parallel paths.
            (
                vec![PAR_MIN + 4000],
                [vec![1], vec![0], vec![-1]],
                [0, 0, PAR_MIN + 3999],
            ),
            (
                vec![2, PAR_MIN / 2 + 3000],
                [vec![1, 2], vec![PAR_MIN as isize / 2 + 3000, 1], vec![0, 1]],
                [0, 0, 0],
            ),
            (
                vec![4, 5],
                [vec![-5, 1], vec![1, 4], vec![5, 1]],
                [15, 0, 0],
            ),
            // Small single runs: size-1 dims with any stride, offsets, a constant input.
            (
                vec![3, 1, 4],
                [vec![4, 99, 1], vec![4, 7, 1], vec![0, 0, 0]],
                [0, 2, 5],
            ),
            (vec![2, 3], [vec![3, 1], vec![0, 0], vec![3, 1]], [0, 4, 1]),
            // Small, the destination row-major, an input not one run: the row walk
            // (`for_each_small_row`): a broadcast row, a transposed input and a reversed
            // one, rows of one element, and one element past SMALL_ROWS (the plan).
            (vec![2, 3], [vec![3, 1], vec![3, 1], vec![0, 1]], [0, 0, 0]),
            (
                vec![3, 4, 5],
                [vec![20, 5, 1], vec![1, 3, 12], vec![0, -1, 0]],
                [0, 0, 3],
            ),
            (
                vec![6, 1],
                [vec![1, 1], vec![-2, 5], vec![1, 0]],
                [0, 10, 0],
            ),
            (vec![SMALL_ROWS + 1], [vec![1], vec![2], vec![0]], [0, 0, 0]),
            (vec![1, 1], [vec![1, 1], vec![0, 0], vec![3, 2]], [0, 0, 1]),
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
            })
            .unwrap();
            naive(&dims, [&s[0], &s[1], &s[2]], off, &a, &b, &mut want);
            assert_eq!(got, want, "{dims:?} {s:?}");
        }
    }

    #[test]
    fn small_single_run_takes_only_contiguous_or_constant_operands() {
        let d: &[usize] = &[3, 1, 4];
        let (c, odd, k) = (&[4, 1, 1][..], &[4, 99, 1][..], &[0, 0, 0][..]);
        assert_eq!(small_single_run(d, [c, odd, k]), Some((12, [1, 1, 0])));
        // A constant destination, a row broadcast, a transposed or flipped input: no.
        assert_eq!(small_single_run(d, [k, c]), None);
        assert_eq!(small_single_run(d, [c, &[0, 0, 1]]), None);
        assert_eq!(small_single_run(&[3, 4], [&[4, 1], &[1, 3]]), None);
        assert_eq!(small_single_run(&[3], [&[1], &[-1]]), None);
        // Empty, and from PAR_MIN elements on (the parallel plan), no.
        assert_eq!(small_single_run(&[0, 4], [&[4, 1], &[4, 1]]), None);
        assert_eq!(small_single_run(&[PAR_MIN], [&[1], &[1]]), None);
        assert_eq!(
            small_single_run(&[PAR_MIN - 1], [&[1], &[1]]),
            Some((PAR_MIN - 1, [1, 1]))
        );
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
        zip2(&[2, 80000], &mut out, dst, &a, src, |o, x| o * 10 + x).unwrap();
        for i in 0..2 {
            for j in 0..80000 {
                let (d, s) = (1 + 2 * i + 4 * j, i + 2 * j);
                assert_eq!(out[d], d as i64 * 10 + s as i64);
                assert_eq!(out[d - 1], d as i64 - 1);
            }
        }
    }
}

#[cfg(test)]
mod checks;
