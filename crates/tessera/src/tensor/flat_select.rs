//! `where(c, a, b)` in one pass when its three operands make one flat run (`flat.rs`'s
//! `flat_runs`, docs/design.md P4): the kernel of `where` below the parallel cut-over.
//!
//! The loops are `#[target_feature]` functions, not `with_simd` closures: in this module of
//! their own, the closures compiled out of line and their loops ran without AVX2
//! (`scripts/check-simd` caught it, docs/performance.md).

use std::hint::select_unpredictable;
use std::sync::Arc;

use super::flat::{flat_runs, Run};
use super::Tensor;
use crate::dtype::Element;
use crate::error::Result;
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::has_avx2;
use crate::storage::Storage;

/// `if c { a } else { b }` elementwise into a fresh tensor (the kernel of `where`), when the
/// three operands make one flat run (`flat.rs`'s `flat_runs`); `c` is `bool` and `a`, `b` are
/// `T` already. `None` otherwise, or when the condition shares storage with a value operand,
/// with nothing done: the caller's general path broadcasts and copies. The choice is
/// `select_unpredictable`, which the compiler makes a blend of both values: written as an
/// `if`, it became a branch on each condition, mispredicted on half of a random mask (16 Mi
/// `f32`: 71 ms, a blend 11 ms).
pub(crate) fn select_flat<T: Element>(
    c: &Tensor,
    a: &Tensor,
    b: &Tensor,
) -> Result<Option<Tensor>> {
    if c.shares_storage(a) || c.shares_storage(b) {
        return Ok(None);
    }
    let Some((runs, layout)) = flat_runs([c.layout(), a.layout(), b.layout()])? else {
        return Ok(None);
    };
    let n = layout.numel();
    let mut storage = Storage::for_overwrite(T::DTYPE, n)?;
    if n > 0 {
        let out = storage.fresh_mut::<T>();
        // One read lock per storage (a second read lock on one storage by one thread could
        // deadlock behind a queued writer): `a` and `b` may share one.
        let gc = c.dense_storage()?.read_as::<bool>();
        let ga = a.dense_storage()?.read_as::<T>();
        let gb = match a.shares_storage(b) {
            true => None,
            false => Some(b.dense_storage()?.read_as::<T>()),
        };
        let (xc, xa, xb) = (&gc[..], &ga[..], gb.as_deref().unwrap_or(&ga));
        let at = |r: Run, i: usize| match r {
            Run::Flat(o) => o + i,
            Run::Const(o) => o,
        };
        match runs {
            [Run::Flat(i), Run::Flat(j), Run::Flat(k)] => {
                select_simd(out, &xc[i..i + n], &xa[j..j + n], Other::Run(&xb[k..k + n]))
            }
            [Run::Flat(i), Run::Flat(j), Run::Const(k)] => {
                select_simd(out, &xc[i..i + n], &xa[j..j + n], Other::One(xb[k]))
            }
            [rc, ra, rb] => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = select_unpredictable(xc[at(rc, i)], xa[at(ra, i)], xb[at(rb, i)]);
                }
            }
        }
    }
    Ok(Some(Tensor::from_parts(Arc::new(storage), layout)))
}

/// The values of a flat `where` where its condition is false: a run as long as the output,
/// or one element.
#[derive(Clone, Copy)]
enum Other<'a, T> {
    Run(&'a [T]),
    One(T),
}

/// [`select`] in the best copy the CPU runs.
fn select_simd<T: Copy>(out: &mut [T], c: &[bool], a: &[T], b: Other<'_, T>) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `select_avx2` only needs AVX2 and FMA, which `has_avx2` has just confirmed.
        return unsafe { select_avx2(out, c, a, b) };
    }
    select(out, c, a, b)
}

/// `out[k] = if c[k] { a[k] } else { b[k] }` (or `b` itself when it is one element), over
/// slices of one length, inlined into each copy of the loop.
#[inline(always)]
fn select<T: Copy>(out: &mut [T], c: &[bool], a: &[T], b: Other<'_, T>) {
    match b {
        Other::Run(b) => {
            for (o, ((&c, &x), &y)) in out.iter_mut().zip(c.iter().zip(a).zip(b)) {
                *o = select_unpredictable(c, x, y);
            }
        }
        Other::One(y) => {
            for (o, (&c, &x)) in out.iter_mut().zip(c.iter().zip(a)) {
                *o = select_unpredictable(c, x, y);
            }
        }
    }
}

/// [`select`] compiled for AVX2 and FMA: the blends take a vector of conditions at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn select_avx2<T: Copy>(out: &mut [T], c: &[bool], a: &[T], b: Other<'_, T>) {
    select(out, c, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run pairings that `select_flat` takes (three runs; a single `b`; a single
    /// condition, true and false; a single `a`; `a` and `b` one tensor; operands viewed at
    /// offsets into larger storages) against `if` element by element, on lengths around the
    /// vector widths, for `f32`, `i64` and `u8`.
    #[test]
    fn selects_like_an_if_for_every_run_pairing() {
        /// `v` as a view 3 elements into a storage with `pad` around it (3 before, 1 after).
        fn at_offset<E: Element>(v: &[E], pad: E) -> Tensor {
            let mut w = vec![pad; 3];
            w.extend_from_slice(v);
            w.push(pad);
            let t = Tensor::from_vec(w, &[v.len() + 4]).unwrap();
            t.narrow(0, 3, v.len()).unwrap()
        }
        fn check<T: Element>(mk: impl Fn(usize) -> T) {
            for n in [1usize, 7, 31, 32, 33, 100] {
                let cv: Vec<bool> = (0..n).map(|i| (i * 7 + n) % 3 == 0).collect();
                let av: Vec<T> = (0..n).map(&mk).collect();
                let bv: Vec<T> = (0..n).map(|i| mk(i + 1000)).collect();
                let vec = |v: &[T]| Tensor::from_vec(v.to_vec(), &[n]).unwrap();
                let (c, a, b) = (
                    Tensor::from_vec(cv.clone(), &[n]).unwrap(),
                    vec(&av),
                    vec(&bv),
                );
                let one = |x: T| Tensor::from_vec(vec![x], &[]).unwrap();
                let (c_true, c_false) = (
                    Tensor::from_vec(vec![true], &[]).unwrap(),
                    Tensor::from_vec(vec![false], &[]).unwrap(),
                );
                let (c_in, a_in, b_in) = (
                    at_offset(&cv, true),
                    at_offset(&av, mk(7)),
                    at_offset(&bv, mk(9)),
                );
                let pick = |i: usize, x: T, y: T| if cv[i] { x } else { y };
                let cases = [
                    (
                        &c,
                        &a,
                        &b,
                        (0..n).map(|i| pick(i, av[i], bv[i])).collect::<Vec<T>>(),
                    ),
                    (
                        &c,
                        &a,
                        &one(bv[0]),
                        (0..n).map(|i| pick(i, av[i], bv[0])).collect(),
                    ),
                    (
                        &c,
                        &one(av[0]),
                        &b,
                        (0..n).map(|i| pick(i, av[0], bv[i])).collect(),
                    ),
                    (&c_true, &a, &b, av.clone()),
                    (&c_false, &a, &b, bv.clone()),
                    (&c, &a, &a, av.clone()),
                    (
                        &c_in,
                        &a_in,
                        &b_in,
                        (0..n).map(|i| pick(i, av[i], bv[i])).collect(),
                    ),
                    (
                        &c_in,
                        &a_in,
                        &one(bv[0]),
                        (0..n).map(|i| pick(i, av[i], bv[0])).collect(),
                    ),
                ];
                for (k, (c, a, b, want)) in cases.into_iter().enumerate() {
                    let got = select_flat::<T>(c, a, b).unwrap().expect("one flat run");
                    assert_eq!(got.shape(), &[n]);
                    assert_eq!(got.to_vec::<T>().unwrap(), want, "n = {n}, case {k}");
                }
            }
        }
        check::<f32>(|i| i as f32 * 0.5 - 3.0);
        check::<i64>(|i| i as i64 * 1_000_003 - 77);
        check::<u8>(|i| (i * 37 % 251) as u8);
    }
}
