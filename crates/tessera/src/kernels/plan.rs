//! The iteration planner behind every kernel (docs/design.md §1): K strided operands over one
//! iteration shape, operand 0 being the destination.
//!
//! [`Plan::new`] simplifies the geometry once: drop size-1 dims, flip dims where the
//! destination stride is negative (for all operands together, so element pairing is kept),
//! sort dims by the destination's stride (largest outermost), and merge neighbouring dims
//! that are contiguous for every operand. Kernels then walk *runs*: each run is one pass
//! of the innermost dim, given as the K starting offsets; the innermost loop is the kernel's
//! own (memcpy, fill, strided gather, ...), never an N-d odometer per element.

use smallvec::SmallVec;

/// Dims or strides of a plan; inline up to rank 6.
pub type Dims<T> = SmallVec<[T; 6]>;

/// A simplified iteration over `K` strided operands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan<const K: usize> {
    /// Iteration dims, outermost first. Empty for a single element; contains no 1s.
    pub dims: Dims<usize>,
    /// Per operand, the element stride of each dim of `dims`.
    pub strides: [Dims<isize>; K],
    /// Per operand, the element offset of the first element visited.
    pub offsets: [isize; K],
    /// Total number of elements (0 if any original dim was 0).
    pub numel: usize,
}

impl<const K: usize> Plan<K> {
    /// Plans an iteration over `dims` where operand `k` has `strides[k]` and `offsets[k]`.
    ///
    /// All `strides[k]` must have `dims.len()` entries (callers build them from layouts of the
    /// same iteration shape, broadcasting with stride 0).
    pub fn new(dims: &[usize], strides: [&[isize]; K], offsets: [usize; K]) -> Plan<K> {
        debug_assert!(strides.iter().all(|s| s.len() == dims.len()));
        let numel = dims.iter().product();
        let mut offs = offsets.map(|o| o as isize);
        // (dim, strides per operand), size-1 dims dropped, destination strides made >= 0.
        let mut axes: Dims<(usize, [isize; K])> = Dims::new();
        if numel > 0 {
            for (i, &d) in dims.iter().enumerate() {
                if d == 1 {
                    continue;
                }
                let mut s: [isize; K] = std::array::from_fn(|k| strides[k][i]);
                if K > 0 && s[0] < 0 {
                    for k in 0..K {
                        offs[k] += (d as isize - 1) * s[k];
                        s[k] = -s[k];
                    }
                }
                axes.push((d, s));
            }
        }
        // Largest destination stride outermost; ties broken by the other operands' strides so
        // the innermost dim is the one most operands walk contiguously. Stable.
        axes.sort_by(|a, b| {
            let key = |x: &(usize, [isize; K])| x.1.map(|s| s.unsigned_abs());
            key(b).cmp(&key(a))
        });
        let mut merged: Dims<(usize, [isize; K])> = Dims::new();
        for (d, s) in axes {
            if let Some(last) = merged.last_mut() {
                if (0..K).all(|k| last.1[k] == s[k] * d as isize) {
                    last.0 *= d;
                    last.1 = s;
                    continue;
                }
            }
            merged.push((d, s));
        }
        Plan {
            dims: merged.iter().map(|a| a.0).collect(),
            strides: std::array::from_fn(|k| merged.iter().map(|a| a.1[k]).collect()),
            offsets: offs,
            numel,
        }
    }

    /// Number of dims after simplification.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Length of one run (the innermost dim; 1 for a single element, 0 if empty).
    pub fn inner_len(&self) -> usize {
        if self.numel == 0 {
            0
        } else {
            self.dims.last().copied().unwrap_or(1)
        }
    }

    /// Stride of operand `k` along the innermost dim (0 for a single element).
    pub fn inner_stride(&self, k: usize) -> isize {
        self.strides[k].last().copied().unwrap_or(0)
    }

    /// Number of runs (product of all dims but the innermost; 0 if empty).
    pub fn runs(&self) -> usize {
        if self.numel == 0 {
            return 0;
        }
        self.dims.iter().rev().skip(1).product()
    }

    /// Calls `f(offsets)` with the K starting offsets of each run in `range` (run indices in
    /// row-major order of the outer dims). Splitting the range is how kernels parallelise.
    ///
    /// Generic over `f` only in this thin wrapper: the walk itself is compiled once per `K`
    /// (it is called with hundreds of kernel closures; see [`Plan::for_each_run_dyn`]).
    #[inline]
    pub fn for_each_run(&self, range: std::ops::Range<usize>, mut f: impl FnMut([isize; K])) {
        self.for_each_run_dyn(range, &mut f);
    }

    /// [`Plan::for_each_run`] with the callback behind a `dyn` reference: one indirect call
    /// per run (runs are whole innermost loops), one copy of the walk in the binary.
    pub fn for_each_run_dyn(&self, range: std::ops::Range<usize>, f: &mut dyn FnMut([isize; K])) {
        if range.is_empty() {
            return;
        }
        let outer = self.rank().saturating_sub(1);
        // Decompose the first run index once, then step like an odometer over outer dims
        // (once per run, not per element).
        let mut idx: Dims<usize> = SmallVec::from_elem(0, outer);
        let mut rem = range.start;
        for a in (0..outer).rev() {
            idx[a] = rem % self.dims[a];
            rem /= self.dims[a];
        }
        let mut offs = self.offsets;
        for (a, &i) in idx.iter().enumerate() {
            for (o, s) in offs.iter_mut().zip(&self.strides) {
                *o += i as isize * s[a];
            }
        }
        for _ in range {
            f(offs);
            for a in (0..outer).rev() {
                idx[a] += 1;
                for (o, s) in offs.iter_mut().zip(&self.strides) {
                    *o += s[a];
                }
                if idx[a] < self.dims[a] {
                    break;
                }
                for (o, s) in offs.iter_mut().zip(&self.strides) {
                    *o -= self.dims[a] as isize * s[a];
                }
                idx[a] = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (dst, src) offset pair the plan visits, against a naive odometer.
    fn visited(p: &Plan<2>) -> Vec<(isize, isize)> {
        let mut out = Vec::new();
        p.for_each_run(0..p.runs(), |o| {
            for i in 0..p.inner_len() as isize {
                out.push((o[0] + i * p.inner_stride(0), o[1] + i * p.inner_stride(1)));
            }
        });
        out.sort();
        out
    }

    fn naive(dims: &[usize], s: [&[isize]; 2], o: [usize; 2]) -> Vec<(isize, isize)> {
        let n: usize = dims.iter().product();
        let mut out = Vec::new();
        for lin in 0..n {
            let (mut rem, mut a, mut b) = (lin, o[0] as isize, o[1] as isize);
            for i in (0..dims.len()).rev() {
                let x = (rem % dims[i]) as isize;
                rem /= dims[i];
                a += x * s[0][i];
                b += x * s[1][i];
            }
            out.push((a, b));
        }
        out.sort();
        out
    }

    #[test]
    fn merges_contiguous_and_flips_negative() {
        let p = Plan::new(&[2, 3, 4], [&[12, 4, 1], &[12, 4, 1]], [0, 0]);
        assert_eq!(p.dims.as_slice(), &[24]);
        let p = Plan::new(&[4], [&[-1], &[1]], [3, 0]);
        assert_eq!(
            (p.offsets, p.strides[0][0], p.strides[1][0]),
            ([0, 3], 1, -1)
        );
        let p = Plan::new(&[3, 1, 4], [&[4, 99, 1], &[1, 7, 3]], [0, 0]);
        assert_eq!(p.dims.as_slice(), &[3, 4]);
    }

    #[test]
    fn visits_the_same_pairs_as_a_naive_walk() {
        type Case<'a> = (&'a [usize], [&'a [isize]; 2], [usize; 2]);
        let cases: &[Case] = &[
            (&[2, 3, 4], [&[12, 4, 1], &[1, 2, 6]], [0, 0]),
            (&[3, 4], [&[-4, 1], &[0, 1]], [8, 0]),
            (&[5, 1, 2], [&[2, 0, -1], &[1, 5, 5]], [1, 0]),
            (&[0, 3], [&[3, 1], &[3, 1]], [0, 0]),
            (&[], [&[], &[]], [4, 2]),
            (&[2, 2, 2, 2], [&[8, 4, 2, 1], &[1, 2, 4, 8]], [0, 0]),
        ];
        for (d, s, o) in cases {
            let p = Plan::new(d, *s, *o);
            assert_eq!(visited(&p), naive(d, *s, *o), "{d:?} {s:?}");
            // Split ranges cover the same runs.
            let mut halves = Vec::new();
            let mid = p.runs() / 2;
            for r in [0..mid, mid..p.runs()] {
                p.for_each_run(r, |o| halves.push(o));
            }
            let mut all = Vec::new();
            p.for_each_run(0..p.runs(), |o| all.push(o));
            assert_eq!(halves, all);
        }
    }
}
