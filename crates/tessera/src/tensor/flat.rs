//! Two-operand elementwise calls that are one flat run: each operand row-major over the
//! output's dims, or a single element broadcast to them, the whole call below the parallel
//! cut-over. [`zip_flat`] reads both inputs as slices and fills a storage before any handle
//! shares it, so it takes no lock on the output, builds no broadcast views and plans no walk:
//! for a 16-element `a + b` those were most of the time (docs/design.md P4). Other calls
//! return `None` and take the general path (`zip_new` and `kernels::elementwise::zip3`).

use std::mem::MaybeUninit;
use std::sync::Arc;

use smallvec::smallvec;

use super::Tensor;
use crate::dtype::Element;
use crate::error::Result;
use crate::kernels::copy::{contiguous_plan, copy_strided};
use crate::kernels::elementwise::PAR_MIN;
use crate::kernels::flat::{drive_flat, drive_flat2};
use crate::kernels::parallel::cut_over;
use crate::kernels::simd::{asks_ahead, map_ahead, zip_near, zips_near};
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::{has_avx2, narrows_on_avx512};
use crate::layout::Layout;
use crate::shape::{checked_numel, DimVec};
use crate::storage::{overwritable, Storage};

/// How one operand walks the output: a row-major run from an offset, or one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Run {
    Flat(usize),
    Const(usize),
}

/// The layout of a fresh output that walks like `l`, when `l` is one run below the
/// parallel cut-over: row-major (sharing a canonical descriptor, no shape-cache lookup), or
/// a dense block in another order, whose order the output takes (P6). `None` otherwise.
fn run_layout(l: &Layout) -> Result<Option<Layout>> {
    if l.numel() >= cut_over(PAR_MIN) {
        return Ok(None);
    }
    dense_layout(l)
}

/// [`run_layout`] at any size: the layout of a fresh output that walks like `l` when `l` is
/// one dense run.
fn dense_layout(l: &Layout) -> Result<Option<Layout>> {
    if l.is_canonical() {
        return Ok(Some(l.clone()));
    }
    if let Some(order) = l.dense_order()? {
        return Ok(Some(order));
    }
    Ok(match l.is_contiguous() {
        true => Some(Layout::contiguous(l.dims())?),
        false => None,
    })
}

/// How each of the operand layouts `ls` walks the output, and the output's layout, when
/// together they make one flat run: every operand either walked in the same order as the
/// others (one shape and one set of strides, or all row-major; [`run_layout`]) or a single
/// element with no more dims than the rest. The order is that of the first operand that is
/// not a single element (of the one of highest rank when all are). `None` otherwise.
pub(super) fn flat_runs<const N: usize>(ls: [&Layout; N]) -> Result<Option<([Run; N], Layout)>> {
    runs_of(ls, run_layout)
}

/// [`flat_runs`] with the output's layout from `out_layout` ([`run_layout`] or, at any
/// size, [`dense_layout`]).
fn runs_of<const N: usize>(
    ls: [&Layout; N],
    out_layout: fn(&Layout) -> Result<Option<Layout>>,
) -> Result<Option<([Run; N], Layout)>> {
    let highest = ls.iter().copied().max_by_key(|l| l.rank());
    let Some(lead) = ls.iter().copied().find(|l| l.numel() != 1).or(highest) else {
        return Ok(None);
    };
    let mut runs = [Run::Const(0); N];
    for (r, l) in runs.iter_mut().zip(ls) {
        let same_order = l.dims() == lead.dims()
            && (l.strides() == lead.strides() || (l.is_contiguous() && lead.is_contiguous()));
        *r = if same_order {
            Run::Flat(l.offset())
        } else if l.numel() == 1 && l.rank() <= lead.rank() {
            Run::Const(l.offset())
        } else {
            return Ok(None);
        };
    }
    Ok(out_layout(lead)?.map(|out| (runs, out)))
}

/// The runs of `a` and `b` and the output's layout, or `None` when the call is not one
/// flat run ([`flat_runs`]).
fn flat_pair(a: &Tensor, b: &Tensor) -> Result<Option<(Run, Run, Layout)>> {
    Ok(flat_runs([a.layout(), b.layout()])?.map(|([ra, rb], out)| (ra, rb, out)))
}

/// `f(a, b)` elementwise into a fresh row-major tensor of dtype `O`, when both operands
/// (of dtype `T`) make one flat run ([`flat_pair`]); `None` otherwise, with nothing done.
/// The caller has checked the dtypes and that `a` and `b` are dense.
pub(super) fn zip_flat<O: Element, T: Element>(
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> O,
) -> Result<Option<Tensor>> {
    let Some((ra, rb, layout)) = flat_pair(a, b)? else {
        return Ok(None);
    };
    let n = layout.numel();
    fill_pair(a, b, layout, |out: &mut [MaybeUninit<O>], xa, xb| {
        zip_runs_simd(out, xa, xb, (ra, rb), n, &f)
    })
    .map(Some)
}

/// [`zip_flat`] at any size: from the parallel cut-over on, operands that make one dense
/// run go in pieces across threads ([`drive_flat2`], or [`drive_flat`] beside a single
/// element) into a buffer nobody shares yet. For outputs the general walk would clear
/// first (`bool`s: comparisons and logical functions).
pub(super) fn zip_dense<O: Element, T: Element>(
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> O + Sync,
) -> Result<Option<Tensor>> {
    if let Some(out) = zip_flat(a, b, &f)? {
        return Ok(Some(out));
    }
    let Some(([ra, rb], layout)) = runs_of([a.layout(), b.layout()], dense_layout)? else {
        return Ok(None);
    };
    let n = layout.numel();
    fill_pair(a, b, layout, |out: &mut [MaybeUninit<O>], xa, xb| {
        if n == 0 {
            return;
        }
        // Each operand as the slice the output's pieces walk: its run, or its one element.
        fn part<T>(r: Run, x: &[T], n: usize) -> (Run, &[T]) {
            match r {
                Run::Flat(i) => (Run::Flat(0), &x[i..i + n]),
                Run::Const(i) => (Run::Const(0), &x[i..i + 1]),
            }
        }
        let ((ra, xa), (rb, xb)) = (part(ra, xa, n), part(rb, xb, n));
        let runs = (ra, rb);
        let f = &f;
        match runs {
            (Run::Flat(_), Run::Flat(_)) => drive_flat2(out, xa, xb, &|o, a, b| {
                zip_runs_simd(o, a, b, runs, o.len(), f)
            }),
            (Run::Flat(_), Run::Const(_)) => {
                drive_flat(out, xa, &|o, a| zip_runs_simd(o, a, xb, runs, o.len(), f))
            }
            (Run::Const(_), Run::Flat(_)) => {
                drive_flat(out, xb, &|o, b| zip_runs_simd(o, xa, b, runs, o.len(), f))
            }
            (Run::Const(_), Run::Const(_)) => zip_runs_simd(out, xa, xb, runs, n, f),
        }
    })
    .map(Some)
}

/// [`zip_runs`] in the best copy the CPU runs.
fn zip_runs_simd<O: Copy, T: Copy>(
    out: &mut [MaybeUninit<O>],
    xa: &[T],
    xb: &[T],
    runs: (Run, Run),
    n: usize,
    f: &impl Fn(T, T) -> O,
) {
    // A narrowing loop (a comparison into `bool`s) gains from AVX-512's mask registers.
    #[cfg(target_arch = "x86_64")]
    if narrows_on_avx512::<O, T>() {
        // SAFETY: `zip_runs_avx512` only needs the features `narrows_on_avx512` confirmed.
        return unsafe { zip_runs_avx512(out, xa, xb, runs, n, f) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `zip_runs_avx2` only needs the features `has_avx2` confirmed.
        return unsafe { zip_runs_avx2(out, xa, xb, runs, n, f) };
    }
    zip_runs(out, xa, xb, runs, n, f)
}

/// `out[k] = f(a[k], b[k])` over the runs `ra` of `xa` and `rb` of `xb` (`n` elements each),
/// inlined into each SIMD copy of the loop that calls it.
#[inline(always)]
fn zip_runs<O: Copy, T: Copy>(
    out: &mut [MaybeUninit<O>],
    xa: &[T],
    xb: &[T],
    runs: (Run, Run),
    n: usize,
    f: &impl Fn(T, T) -> O,
) {
    match runs {
        // An empty view's offset may lie anywhere, even past its storage: nothing to read.
        _ if n == 0 => {}
        // Two inputs streamed from memory ask for their next lines as they go.
        (Run::Flat(i), Run::Flat(j)) if zips_near(n * std::mem::size_of::<T>()) => {
            zip_near(out, &xa[i..i + n], &xb[j..j + n], |x, y| {
                MaybeUninit::new(f(x, y))
            })
        }
        (Run::Flat(i), Run::Flat(j)) => {
            for ((o, &x), &y) in out.iter_mut().zip(&xa[i..i + n]).zip(&xb[j..j + n]) {
                *o = MaybeUninit::new(f(x, y));
            }
        }
        (Run::Flat(i), Run::Const(j)) => {
            let y = xb[j];
            for (o, &x) in out.iter_mut().zip(&xa[i..i + n]) {
                *o = MaybeUninit::new(f(x, y));
            }
        }
        (Run::Const(i), Run::Flat(j)) => {
            let x = xa[i];
            for (o, &y) in out.iter_mut().zip(&xb[j..j + n]) {
                *o = MaybeUninit::new(f(x, y));
            }
        }
        (Run::Const(i), Run::Const(j)) => out.fill(MaybeUninit::new(f(xa[i], xb[j]))),
    }
}

/// [`zip_runs`] compiled for AVX2 and FMA, a function for the reason [`map_run_avx2`] gives:
/// through a `with_simd` closure, the `0` that `logical_and` of `u8`s captures was reloaded
/// for every element and the loop stayed scalar (64 Ki elements: 62 us).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn zip_runs_avx2<O: Copy, T: Copy>(
    out: &mut [MaybeUninit<O>],
    xa: &[T],
    xb: &[T],
    runs: (Run, Run),
    n: usize,
    f: &impl Fn(T, T) -> O,
) {
    zip_runs(out, xa, xb, runs, n, f)
}

/// [`zip_runs`] compiled for AVX-512: a comparison of floats or 64-bit integers into
/// `bool`s writes a mask register and one masked move makes the bytes, where AVX2 packs each
/// vector down in several steps. Measured on 64 Ki elements, `x < y` into `bool` (standalone
/// loop): f32 0.152 -> 0.136 ns per element, f64 0.35 -> 0.27, i64 0.43 -> 0.27; a plain
/// `f32` subtraction gained 5%, so other loops stay on AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
fn zip_runs_avx512<O: Copy, T: Copy>(
    out: &mut [MaybeUninit<O>],
    xa: &[T],
    xb: &[T],
    runs: (Run, Run),
    n: usize,
    f: &impl Fn(T, T) -> O,
) {
    zip_runs(out, xa, xb, runs, n, f)
}

/// `run(out, a, b)` over the two operands' element slices when they are one flat run of
/// equal length ([`flat_pair`], neither a single broadcast element): for kernels that loop
/// over slices themselves (the vectorised `atan2`, `hypot`, `logaddexp`); `None` otherwise.
pub(super) fn zip_flat_slices<T: Element>(
    a: &Tensor,
    b: &Tensor,
    run: impl FnOnce(&mut [T], &[T], &[T]),
) -> Result<Option<Tensor>> {
    let Some((Run::Flat(i), Run::Flat(j), layout)) = flat_pair(a, b)? else {
        return Ok(None);
    };
    let n = layout.numel();
    fill_pair(
        a,
        b,
        layout,
        |out: &mut [MaybeUninit<T>], xa: &[T], xb: &[T]| {
            if n > 0 {
                run(overwritable(out), &xa[i..i + n], &xb[j..j + n]);
            }
        },
    )
    .map(Some)
}

/// The most elements [`zip_gathered`] takes.
pub(super) const GATHER_MAX: usize = 256;

/// `run(out, a, b)` over `a` and `b` (both of dtype `T`) broadcast to `dims` and gathered
/// row-major into buffers on the stack, into a fresh row-major tensor; `None`, with nothing
/// done, for more than [`GATHER_MAX`] elements or another dtype. For small broadcast calls
/// of a function the element-wise driver would not inline (`atan2`, `logaddexp`:
/// `tensor/vector_math.rs`): a copy of each operand as a tensor cost two storages and two
/// interned descriptors, which at 16 elements were more than the function.
pub(super) fn zip_gathered<T: Element>(
    a: &Tensor,
    b: &Tensor,
    dims: &[usize],
    run: impl FnOnce(&mut [T], &[T], &[T]),
) -> Result<Option<Tensor>> {
    let n = checked_numel(dims)?;
    if n > GATHER_MAX || a.dtype() != T::DTYPE || b.dtype() != T::DTYPE {
        return Ok(None);
    }
    let (mut xa, mut xb) = ([T::default(); GATHER_MAX], [T::default(); GATHER_MAX]);
    gather_into(a, dims, &mut xa[..n])?;
    gather_into(b, dims, &mut xb[..n])?;
    let layout = Layout::contiguous(dims)?;
    let mut storage = Storage::uninit(T::DTYPE, n)?;
    run(
        overwritable(storage.fresh_uninit::<T>()),
        &xa[..n],
        &xb[..n],
    );
    Ok(Some(Tensor::from_parts(Arc::new(storage), layout)))
}

/// `t` broadcast to `dims` (which it broadcasts to) written row-major into `dst`.
fn gather_into<T: Element>(t: &Tensor, dims: &[usize], dst: &mut [T]) -> Result<()> {
    let (src_dims, lead) = (t.shape(), dims.len() - t.rank());
    let mut strides: DimVec<isize> = smallvec![0; dims.len()];
    for (i, (&d, &s)) in src_dims.iter().zip(t.strides()).enumerate() {
        if d == dims[lead + i] {
            strides[lead + i] = s;
        }
    }
    let plan = contiguous_plan(dims, &strides, t.layout().offset())?;
    copy_strided(&plan, dst, &t.dense_storage()?.read_as::<T>());
    Ok(())
}

/// A fresh tensor of `layout` (dtype `O`) filled by `fill(out, a's storage, b's storage)`,
/// before any handle shares it. `fill` must write every element of `out` (a `bool` buffer is
/// not cleared first: [`Storage::uninit`]); [`overwritable`] hands a numeric one to a kernel
/// on plain slices.
pub(super) fn fill_pair<O: Element, T: Element>(
    a: &Tensor,
    b: &Tensor,
    layout: Layout,
    fill: impl FnOnce(&mut [MaybeUninit<O>], &[T], &[T]),
) -> Result<Tensor> {
    let mut storage = Storage::uninit(O::DTYPE, layout.numel())?;
    {
        let out = storage.fresh_uninit::<O>();
        // One read lock serves both inputs when they share a storage (parking_lot read locks
        // must not be taken twice by one thread: a queued writer would deadlock it).
        let ga = a.dense_storage()?.read_as::<T>();
        let gb = match a.shares_storage(b) {
            true => None,
            false => Some(b.dense_storage()?.read_as::<T>()),
        };
        fill(out, &ga, gb.as_deref().unwrap_or(&ga));
    }
    Ok(Tensor::from_parts(Arc::new(storage), layout))
}

/// `f(x)` for each element of `src` into a fresh tensor of dtype `O` in `src`'s memory
/// order (P6), when `src` is one flat run below the parallel cut-over: row-major, or a dense
/// block walked in another order (a transpose). `None` otherwise, with nothing done.
pub(super) fn map_flat<O: Element, A: Element>(
    src: &Tensor,
    f: impl Fn(A) -> O,
) -> Result<Option<Tensor>> {
    fill_flat::<O, A>(src, |out, x| {
        map_run_simd(out, x, &f);
        true
    })
}

/// [`map_flat`] at any size: an input that is one dense run from the parallel cut-over on
/// runs in pieces across threads ([`drive_flat`]), into a buffer nobody shares yet. For
/// functions that the general walk would not vectorise (`clip`'s, `tensor/clip.rs`).
pub(super) fn map_dense<O: Element, A: Element>(
    src: &Tensor,
    f: impl Fn(A) -> O + Sync,
) -> Result<Option<Tensor>> {
    if let Some(out) = map_flat(src, &f)? {
        return Ok(Some(out));
    }
    let l = src.layout();
    let Some(layout) = dense_layout(l)? else {
        return Ok(None);
    };
    fill_in(src, layout, |out, x| {
        drive_flat(out, x, &|o, x| map_run_simd(o, x, &f));
        true
    })
}

/// [`map_run`] in the best copy the CPU runs: a narrowing loop (a predicate into `bool`s)
/// gains from AVX-512's mask registers, as in `zip_flat`; others take AVX2.
fn map_run_simd<O, A: Copy>(out: &mut [MaybeUninit<O>], x: &[A], f: &impl Fn(A) -> O) {
    #[cfg(target_arch = "x86_64")]
    if narrows_on_avx512::<O, A>() {
        // SAFETY: `map_run_avx512` only needs the features `narrows_on_avx512` confirmed.
        return unsafe { map_run_avx512(out, x, f) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `map_run_avx2` only needs the features `has_avx2` confirmed.
        return unsafe { map_run_avx2(out, x, f) };
    }
    map_run(out, x, f)
}

/// `out[k] = f(x[k])`, inlined into each SIMD copy of the loop that calls it; an input past
/// the caches asks for its lines ahead ([`map_ahead`]) when `simd::ASK_AHEAD` is on.
#[inline(always)]
fn map_run<O, A: Copy>(out: &mut [MaybeUninit<O>], x: &[A], f: &impl Fn(A) -> O) {
    if asks_ahead(std::mem::size_of_val(x)) {
        return map_ahead(out, x, |v| MaybeUninit::new(f(v)));
    }
    for (o, &v) in out.iter_mut().zip(x) {
        *o = MaybeUninit::new(f(v));
    }
}

/// [`map_run`] compiled for AVX2 and FMA. A function rather than a `with_simd` closure: `f`
/// arrives as a reference parameter, which the compiler knows no write through `out` can
/// change, so state `f` captured (the `0` of `x == 0`) stays in a register. Reached through a
/// closure's captures, it was reloaded for every element of a 1-byte map and the loop stayed
/// scalar (`logical_not` of 64 Ki `u8`: 26 us, against 1.8 us vectorised).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn map_run_avx2<O, A: Copy>(out: &mut [MaybeUninit<O>], x: &[A], f: &impl Fn(A) -> O) {
    map_run(out, x, f)
}

/// [`map_run`] compiled for AVX-512 (see [`zip_runs_avx512`]). Measured on 64 Ki elements
/// into `bool` (standalone loop, 1 thread): `isnan` f64 19.4 -> 7.8 us, f32 7.0 -> 3.5;
/// `signbit` f64 19.3 -> 10.1, f32 8.1 -> 3.9.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
fn map_run_avx512<O, A: Copy>(out: &mut [MaybeUninit<O>], x: &[A], f: &impl Fn(A) -> O) {
    map_run(out, x, f)
}

/// A fresh tensor of dtype `O` in `src`'s memory order that `fill(out, x)` writes from the
/// slice `x` of `src`'s elements (in memory order), when `src` is one flat run as for
/// [`map_flat`]. `None`, with the buffer dropped, when `src` is not or `fill` returns false.
/// Unless it returns false, `fill` must write every element of `out`, as for [`fill_pair`].
pub(super) fn fill_flat<O: Element, A: Element>(
    src: &Tensor,
    fill: impl FnOnce(&mut [MaybeUninit<O>], &[A]) -> bool,
) -> Result<Option<Tensor>> {
    match run_layout(src.layout())? {
        Some(layout) => fill_in(src, layout, fill),
        None => Ok(None),
    }
}

/// [`fill_flat`]'s body for an output `layout` that walks like `src`'s (`run_layout` or
/// `dense_layout`).
fn fill_in<O: Element, A: Element>(
    src: &Tensor,
    layout: Layout,
    fill: impl FnOnce(&mut [MaybeUninit<O>], &[A]) -> bool,
) -> Result<Option<Tensor>> {
    let l = src.layout();
    let (n, start) = (l.numel(), l.offset());
    let mut storage = Storage::uninit(O::DTYPE, n)?;
    // An empty view's offset may lie anywhere, even past its storage: nothing to read.
    if n > 0 {
        let out = storage.fresh_uninit::<O>();
        let x = src.dense_storage()?.read_as::<A>();
        if !fill(out, &x[start..start + n]) {
            return Ok(None);
        }
    }
    Ok(Some(Tensor::from_parts(Arc::new(storage), layout)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_pair_takes_runs_same_order_blocks_and_single_elements_only() {
        let runs = |a: &Tensor, b: &Tensor| flat_pair(a, b).unwrap().map(|(x, y, _)| (x, y));
        let a = Tensor::from_vec((0..6).map(|x| x as f32).collect(), &[2, 3]).unwrap();
        let s = Tensor::from_vec(vec![2f32], &[]).unwrap();
        let row = Tensor::from_vec(vec![1f32, 2., 3.], &[3]).unwrap();
        assert_eq!(runs(&a, &a), Some((Run::Flat(0), Run::Flat(0))));
        assert_eq!(runs(&a, &s), Some((Run::Flat(0), Run::Const(0))));
        assert_eq!(runs(&s, &a), Some((Run::Const(0), Run::Flat(0))));
        // Two transposes walk memory in the same order; the output takes it.
        let at = a.t().unwrap();
        let (_, _, out) = flat_pair(&at, &at).unwrap().unwrap();
        assert_eq!((out.dims(), out.strides()), (&[3, 2][..], &[1, 3][..]));
        // A real broadcast, a transpose next to a row-major operand, a flip, or a single
        // element with more dims: the general path.
        assert_eq!(runs(&at, &s), Some((Run::Flat(0), Run::Const(0))));
        assert_eq!(runs(&a, &row), None);
        let c = Tensor::from_vec((0..6).map(|x| x as f32).collect(), &[3, 2]).unwrap();
        assert_eq!(runs(&at, &c), None);
        let f = a.flip(None).unwrap();
        assert_eq!(runs(&f, &f), None);
        assert_eq!(runs(&a, &s.reshape(&[1, 1, 1]).unwrap()), None);
    }

    #[test]
    fn bool_outputs_in_reused_buffers_are_written_in_full() {
        // Each output of `n` bools takes the heap buffer of `n` bytes freed just before it,
        // uncleared (`Storage::uninit`), when the cache still holds it: here bytes of 2,
        // which are no bool. Every element must be written over.
        let n = crate::storage::HEAP_REUSE_MIN + 3 * 64;
        let vals = |i: usize| (i % 7) as f32 - 3.0;
        let x = Tensor::from_vec((0..n).map(vals).collect(), &[n]).unwrap();
        let zero = Tensor::from_vec(vec![0f32], &[]).unwrap();
        let garbage = || {
            let s = Storage::for_overwrite(crate::dtype::DType::U8, n).unwrap();
            s.write::<u8>().unwrap().fill(2);
        };
        let below: Vec<bool> = (0..n).map(|i| vals(i) < 0.0).collect();
        for _ in 0..3 {
            garbage();
            let lt = zip_flat::<bool, f32>(&x, &zero, |a, b| a < b)
                .unwrap()
                .unwrap();
            assert_eq!(lt.to_vec::<bool>().unwrap(), below);
            garbage();
            let ge = zip_flat::<bool, f32>(&zero, &x, |a, b| a > b)
                .unwrap()
                .unwrap();
            assert_eq!(ge.to_vec::<bool>().unwrap(), below);
            garbage();
            let neg = map_flat::<bool, f32>(&x, |a| a < 0.0).unwrap().unwrap();
            assert_eq!(neg.to_vec::<bool>().unwrap(), below);
        }
    }

    #[test]
    fn streamed_pairs_ask_ahead_and_write_every_element() {
        // Two inputs of `STREAM_BYTES` or more (`zips_near`), one of them from an offset,
        // a length that leaves a partial block, against the plain loop, and in pieces as the
        // flat driver cuts them.
        let n = crate::kernels::simd::STREAM_BYTES / 4 + 37;
        assert!(zips_near(n * 4));
        let xa: Vec<f32> = (0..n + 5).map(|i| ((i * 37) % 101) as f32 - 50.0).collect();
        let xb: Vec<f32> = (0..n).map(|i| ((i * 53) % 97) as f32 - 48.0).collect();
        let want: Vec<bool> = xa[5..].iter().zip(&xb).map(|(a, b)| a < b).collect();
        let mut out = vec![MaybeUninit::new(true); n];
        zip_runs_simd(
            &mut out,
            &xa,
            &xb,
            (Run::Flat(5), Run::Flat(0)),
            n,
            &|a, b| a < b,
        );
        // SAFETY: every element was written (the test's claim; each started as a bool).
        let got: Vec<bool> = out.iter().map(|o| unsafe { o.assume_init() }).collect();
        assert_eq!(got, want);
        let mut out = vec![MaybeUninit::new(true); n];
        drive_flat2(&mut out, &xa[5..], &xb, &|o, a, b| {
            zip_runs_simd(o, a, b, (Run::Flat(0), Run::Flat(0)), o.len(), &|a, b| {
                a < b
            })
        });
        // SAFETY: as above.
        let got: Vec<bool> = out.iter().map(|o| unsafe { o.assume_init() }).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn empty_views_at_any_offset_read_nothing() {
        // An empty view whose offset lies past its one-element storage.
        let base = Tensor::from_vec(vec![7i64], &[1]).unwrap();
        let e = base.as_strided(&[0, 3], &[1, -1], 3).unwrap();
        let s = Tensor::from_vec(vec![2i64], &[]).unwrap();
        for out in [
            zip_flat::<i64, i64>(&e, &e, |x, y| x + y).unwrap(),
            zip_flat::<i64, i64>(&e, &s, |x, y| x + y).unwrap(),
            map_flat::<i64, i64>(&e, |x| x).unwrap(),
        ] {
            assert_eq!(out.map(|t| t.shape().to_vec()), Some(vec![0, 3]));
        }
    }
}
