//! The innermost runs of [`zip2`](super::zip2) and [`zip3`](super::zip3), and the copy of
//! each compiled for the instruction set the CPU has (docs/design.md P1).
//!
//! The drivers call [`run2_simd`] and [`run3_simd`], which pick an AVX2 or AVX-512 copy of the
//! plain loops [`run2`] and [`run3`]. Each copy is a `#[target_feature]` function that takes
//! the kernel closure as a reference parameter rather than through a `with_simd` closure's
//! captures: a reference parameter tells the compiler that no write through the destination
//! changes what the closure holds (the `0` of `x == 0`), so that state stays in a register and
//! the loop vectorises. Reached through captures, it was reloaded after every 1-byte store and
//! the loop stayed scalar: `logical_not` of a broadcast 256 x 256 `int64` took 1.8 NumPy's
//! time. A loop that narrows (an `f64` comparison into `bool`s) takes the AVX-512 copy where
//! the CPU has it, whose mask registers pack the results (as `tensor/flat.rs` does).

use super::DstPtr;
use crate::dtype::Element;
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::{has_avx2, narrows_on_avx512};

/// [`run2`] compiled for the best instruction set the CPU has (see the module doc).
#[inline(always)]
pub(super) fn run2_simd<O: Element, A: Element>(
    ptr: DstPtr<O>,
    so: isize,
    sa: isize,
    a: &[A],
    o: [isize; 2],
    n: usize,
    f: &impl Fn(O, A) -> O,
) {
    /// [`run2`] compiled for AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn avx2<O: Element, A: Element>(
        ptr: DstPtr<O>,
        so: isize,
        sa: isize,
        a: &[A],
        o: [isize; 2],
        n: usize,
        f: &impl Fn(O, A) -> O,
    ) {
        run2(ptr, so, sa, a, o, n, f)
    }
    /// [`run2`] compiled for AVX-512 (F, VL, DQ, BW).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    fn avx512<O: Element, A: Element>(
        ptr: DstPtr<O>,
        so: isize,
        sa: isize,
        a: &[A],
        o: [isize; 2],
        n: usize,
        f: &impl Fn(O, A) -> O,
    ) {
        run2(ptr, so, sa, a, o, n, f)
    }
    #[cfg(target_arch = "x86_64")]
    {
        if narrows_on_avx512::<O, A>() {
            // SAFETY: `avx512` only needs the features `narrows_on_avx512` has just confirmed.
            return unsafe { avx512(ptr, so, sa, a, o, n, f) };
        }
        if has_avx2() {
            // SAFETY: `avx2` only needs the features `has_avx2` has just confirmed.
            return unsafe { avx2(ptr, so, sa, a, o, n, f) };
        }
    }
    run2(ptr, so, sa, a, o, n, f)
}

/// [`run3`] compiled for the best instruction set the CPU has (see the module doc).
#[inline(always)]
pub(super) fn run3_simd<O: Element, A: Element, B: Element>(
    ptr: DstPtr<O>,
    s: [isize; 3],
    ab: (&[A], &[B]),
    o: [isize; 3],
    n: usize,
    f: &impl Fn(A, B) -> O,
) {
    /// [`run3`] compiled for AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn avx2<O: Element, A: Element, B: Element>(
        ptr: DstPtr<O>,
        s: [isize; 3],
        ab: (&[A], &[B]),
        o: [isize; 3],
        n: usize,
        f: &impl Fn(A, B) -> O,
    ) {
        run3(ptr, s, ab, o, n, f)
    }
    /// [`run3`] compiled for AVX-512 (F, VL, DQ, BW).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    fn avx512<O: Element, A: Element, B: Element>(
        ptr: DstPtr<O>,
        s: [isize; 3],
        ab: (&[A], &[B]),
        o: [isize; 3],
        n: usize,
        f: &impl Fn(A, B) -> O,
    ) {
        run3(ptr, s, ab, o, n, f)
    }
    #[cfg(target_arch = "x86_64")]
    {
        if narrows_on_avx512::<O, A>() {
            // SAFETY: `avx512` only needs the features `narrows_on_avx512` has just confirmed.
            return unsafe { avx512(ptr, s, ab, o, n, f) };
        }
        if has_avx2() {
            // SAFETY: `avx2` only needs the features `has_avx2` has just confirmed.
            return unsafe { avx2(ptr, s, ab, o, n, f) };
        }
    }
    run3(ptr, s, ab, o, n, f)
}

/// One run of [`zip2`]: `n` elements from offsets `o` with inner strides `so`, `sa`.
#[inline(always)]
pub(super) fn run2<O: Element, A: Element>(
    ptr: DstPtr<O>,
    so: isize,
    sa: isize,
    a: &[A],
    o: [isize; 2],
    n: usize,
    f: &impl Fn(O, A) -> O,
) {
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
}

/// One run of [`zip3`]: `n` elements from offsets `o` with inner strides `s`.
#[inline(always)]
pub(super) fn run3<O: Element, A: Element, B: Element>(
    ptr: DstPtr<O>,
    [so, sa, sb]: [isize; 3],
    (a, b): (&[A], &[B]),
    o: [isize; 3],
    n: usize,
    f: &impl Fn(A, B) -> O,
) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every instruction-set copy the CPU runs gives the plain loop's result, for a narrowing
    /// map and comparison (`i64` into `bool`) and a same-width one, on each stride arm
    /// (1, 0, 3) and every length up to past a few 512-bit vectors with a remainder.
    #[test]
    fn simd_copies_match_a_naive_loop_on_every_stride_arm() {
        let a: Vec<i64> = (0..400).map(|i| (i * 7919 % 13) - 6).collect();
        let b: Vec<i64> = (0..400).map(|i| (i * 104_729 % 11) - 5).collect();
        for n in 0..130usize {
            for sa in [1isize, 0, 3] {
                let at = |i: usize| a[1 + i * sa as usize];
                let mut out = vec![true; n + 2];
                if n > 0 {
                    let zero = 0i64;
                    let f = move |_: bool, x: i64| x == zero;
                    run2_simd(DstPtr::new(&mut out), 1, sa, &a, [1, 1], n, &f);
                }
                let want: Vec<bool> = (0..n).map(|i| at(i) == 0).collect();
                assert_eq!(&out[1..n + 1], &want[..], "run2 n={n} sa={sa}");
                assert!(out[0] && out[n + 1], "run2 wrote outside its run");
                for sb in [1isize, 0, 2] {
                    let bt = |i: usize| b[2 + i * sb as usize];
                    let mut lt = vec![true; n + 1];
                    let mut sum = vec![0i64; n + 1];
                    if n > 0 {
                        let s = [1, sa, sb];
                        let o = [0, 1, 2];
                        run3_simd(DstPtr::new(&mut lt), s, (&a, &b), o, n, &|x, y| x < y);
                        run3_simd(DstPtr::new(&mut sum), s, (&a, &b), o, n, &|x, y| x + y);
                    }
                    let want_lt: Vec<bool> = (0..n).map(|i| at(i) < bt(i)).collect();
                    let want_sum: Vec<i64> = (0..n).map(|i| at(i) + bt(i)).collect();
                    assert_eq!(&lt[..n], &want_lt[..], "run3 < n={n} sa={sa} sb={sb}");
                    assert_eq!(&sum[..n], &want_sum[..], "run3 + n={n} sa={sa} sb={sb}");
                    assert!(lt[n] && sum[n] == 0, "run3 wrote outside its run");
                }
            }
        }
    }
}
