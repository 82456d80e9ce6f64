//! The routing of the transcendental functions of `f32`/`f64` tensors (`exp`, `expm1`, `log`,
//! `log1p`, `log2`, `log10`, the trigonometric and hyperbolic functions and their inverses) to
//! the vectorised functions of [`kernels::vmath`](crate::kernels::vmath) (docs/design.md P2).
//!
//! Both the contiguous and the strided paths apply the same function to every element, so
//! a result does not depend on the layout. `sin`, `cos` and `tan` reduce their argument correctly
//! up to [`TRIG_LIMIT`]; a tensor holding a larger magnitude (or an infinity) is computed by
//! the C library's functions instead (`f32` through `f64`, rounded once), found by a scan of
//! each block just before it is computed. `f32`'s `tan` sends each such element to the C
//! library on its own instead ([`VecFn::scans_huge`]).
//!
//! When the input and the fresh output are laid out alike (a contiguous input, or a permuted
//! one whose output follows its order, docs/design.md P6), the function runs as one flat
//! loop per piece of the two buffers, with the function inlined into the loop's AVX2 copy
//! (`flat_loop!`); other layouts (strided, broadcast, flipped) are copied row-major first.
//! `atan2` and `hypot` ([`vector_math2`]) read their operands in place when they make one
//! flat run below the parallel cut-over, and otherwise copy them row-major at the broadcast
//! shape; from the cut-over they run in pieces across threads.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::distinct::Distinct;
use super::flat::{fill_flat, fill_pair, zip_flat_slices, zip_gathered};
use super::map::map_into;
use super::trig_huge::{any_above, HugeScan};
use super::Tensor;
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::elementwise::PAR_MIN;
use crate::kernels::flat::{drive_flat, drive_flat2, Loop2};
use crate::kernels::parallel::cut_over;
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::{has_avx2, has_avx512};
use crate::kernels::vmath::{
    self, exp_table64, hyperbolic, ln_table, ln_table64, log_table, TRIG_LIMIT,
};
use crate::layout::{broadcast_shapes, Layout};
use crate::shape::checked_numel;
use crate::storage::overwritable;

/// A function with a vectorised implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VecFn {
    Exp,
    Expm1,
    Log,
    Log1p,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
}

impl VecFn {
    /// Whether the function reduces its argument modulo π/2, correctly only up to
    /// [`TRIG_LIMIT`].
    fn is_trig(self) -> bool {
        matches!(self, VecFn::Sin | VecFn::Cos | VecFn::Tan)
    }

    /// Whether a tensor of `dtype` is scanned for arguments above [`TRIG_LIMIT`] first, all
    /// of it going to the C library if one is found: the trig functions other than `f32`'s
    /// `tan`, whose loop sends each such element there itself
    /// ([`tan_f32_blocks`](vmath::tangent::tan_f32_blocks)).
    fn scans_huge(self, dtype: DType) -> bool {
        self.is_trig() && !(self == VecFn::Tan && dtype == DType::F32)
    }
}

/// The flat loop of one vectorised function over one float type, `out[i] = f(a[i])`, with
/// the function called directly: it is `#[inline(always)]`, so it is inlined into the AVX2
/// copy of the loop whatever its size. The generic elementwise driver takes it as a closure
/// called from several loops, and LLVM kept a large one (`tanh` on `f64`) out of line,
/// compiled for SSE2 and called once per element: three times slower.
macro_rules! flat_loop {
    ($t:ident, $f:ident) => {
        flat_loop!($t, path vmath::$t::$f)
    };
    ($t:ident, path $f:path) => {
        flat_loop!($t, body |out: &mut [$t], a: &[$t]| {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = $f(x);
            }
        })
    };
    ($t:ident, body $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
        fn widest(out: &mut [$t], a: &[$t]) {
            ($body)(out, a)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn wide(out: &mut [$t], a: &[$t]) {
            ($body)(out, a)
        }
        fn base(out: &mut [$t], a: &[$t]) {
            ($body)(out, a)
        }
        |out: &mut [$t], a: &[$t]| {
            #[cfg(target_arch = "x86_64")]
            if has_avx512() {
                // SAFETY: `widest` only needs the features `has_avx512` has just confirmed.
                return unsafe { widest(out, a) };
            }
            #[cfg(target_arch = "x86_64")]
            if has_avx2() {
                // SAFETY: `wide` only needs AVX2 and FMA, which `has_avx2` has just confirmed.
                return unsafe { wide(out, a) };
            }
            base(out, a)
        }
    }};
}

/// The loop of `$f` for `f32` or `f64`, as a `&dyn Fn`: a [`flat_loop!`] of the scalar
/// function, which the compiler vectorises, or the function's own loop where it has one (the
/// table methods and the hyperbolic functions in `kernels/vmath`, written on `Lanes` with
/// AVX-512 and AVX2 copies: a table lookup, or a block sent to the scalar function, is what the
/// compiler does not vectorise by itself). Each width lists all its functions, so the loops
/// that never run are not compiled.
macro_rules! vec_loop {
    (f32, $f:expr) => {{
        let run: &(dyn Fn(&mut [f32], &[f32]) + Sync) = match $f {
            VecFn::Exp => &flat_loop!(f32, exp),
            VecFn::Expm1 => &flat_loop!(f32, expm1),
            VecFn::Log => &ln_table::log_loop,
            VecFn::Log1p => &ln_table::log1p_loop,
            VecFn::Log2 => &log_table::log2_loop,
            VecFn::Log10 => &log_table::log10_loop,
            VecFn::Sin => &flat_loop!(f32, sin),
            VecFn::Cos => &flat_loop!(f32, cos),
            VecFn::Tan => &flat_loop!(f32, body vmath::tangent::tan_f32_blocks),
            VecFn::Asin => &flat_loop!(f32, asin),
            VecFn::Acos => &flat_loop!(f32, acos),
            VecFn::Atan => &flat_loop!(f32, atan),
            VecFn::Sinh => &hyperbolic::f32::sinh_loop,
            VecFn::Cosh => &hyperbolic::f32::cosh_loop,
            VecFn::Tanh => &hyperbolic::f32::tanh_loop,
            VecFn::Asinh => &ln_table::asinh_loop,
            VecFn::Acosh => &flat_loop!(f32, acosh),
            VecFn::Atanh => &ln_table::atanh_loop,
        };
        run
    }};
    (f64, $f:expr) => {{
        let run: &(dyn Fn(&mut [f64], &[f64]) + Sync) = match $f {
            VecFn::Exp => &exp_table64::exp_loop,
            VecFn::Expm1 => &flat_loop!(f64, expm1),
            VecFn::Log => &ln_table64::log_loop,
            VecFn::Log1p => &ln_table64::log1p_loop,
            VecFn::Log2 => &ln_table64::log2_loop,
            VecFn::Log10 => &ln_table64::log10_loop,
            VecFn::Sin => &flat_loop!(f64, sin),
            VecFn::Cos => &flat_loop!(f64, cos),
            VecFn::Tan => &flat_loop!(f64, tan),
            VecFn::Asin => &flat_loop!(f64, asin),
            VecFn::Acos => &flat_loop!(f64, acos),
            VecFn::Atan => &flat_loop!(f64, atan),
            VecFn::Sinh => &hyperbolic::f64::sinh_loop,
            VecFn::Cosh => &hyperbolic::f64::cosh_loop,
            VecFn::Tanh => &hyperbolic::f64::tanh_loop,
            VecFn::Asinh => &ln_table64::asinh_loop,
            VecFn::Acosh => &flat_loop!(f64, acosh),
            VecFn::Atanh => &ln_table64::atanh_loop,
        };
        run
    }};
}

/// A two-operand function with a vectorised implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VecFn2 {
    Atan2,
    Hypot,
    Logaddexp,
}

/// [`flat_loop!`] for a two-operand function, `out[i] = f(a[i], b[i])`. (`atan2` ran on AVX2
/// only while its dependent chain was long: the AVX-512 copy measured 2x slower then. With
/// the chain shortened, AVX-512 halves its time: 64 Ki `f32`, 132 -> 47 us.)
macro_rules! flat_loop2 {
    ($t:ident, $f:ident) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
        fn widest(out: &mut [$t], a: &[$t], b: &[$t]) {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = vmath::$t::$f(x, y);
            }
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn wide(out: &mut [$t], a: &[$t], b: &[$t]) {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = vmath::$t::$f(x, y);
            }
        }
        fn base(out: &mut [$t], a: &[$t], b: &[$t]) {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = vmath::$t::$f(x, y);
            }
        }
        |out: &mut [$t], a: &[$t], b: &[$t]| {
            #[cfg(target_arch = "x86_64")]
            if has_avx512() {
                // SAFETY: `widest` only needs the features `has_avx512` has just confirmed.
                return unsafe { widest(out, a, b) };
            }
            #[cfg(target_arch = "x86_64")]
            if has_avx2() {
                // SAFETY: `wide` only needs AVX2 and FMA, which `has_avx2` has just confirmed.
                return unsafe { wide(out, a, b) };
            }
            base(out, a, b)
        }
    }};
}

/// The size from which [`vector_math2`] copies operands that are not one flat run.
const COPY_MIN: usize = 256;

/// `f(a, b)` into a fresh row-major tensor of dtype `dt` (`f32` or `f64`, the promoted dtype
/// of the operands; `None` for any other), with the function inlined into the widest copy of
/// its loop the CPU runs. Below the parallel cut-over, operands that make one flat run
/// ([`zip_flat_slices`]) are read in place; all others (broadcast, strided, flipped, of
/// another dtype, or larger) are converted and copied row-major at the broadcast shape first
/// (from [`COPY_MIN`] elements; below, `None` for the caller's element-wise driver, except
/// for the functions costly there, whose operands of `dt` are gathered on the stack),
/// as [`vector_math`] copies a strided input, and a large call runs in pieces across threads
/// ([`drive_flat2`]). Through the element-wise driver the function was not inlined and its
/// fused multiply-adds became library calls: `f64` `atan2` with a broadcast 64 Ki operand
/// took 19 times NumPy's time, and a contiguous 1 Mi one 69 ms against 2.7 ms here.
pub(crate) fn vector_math2(f: VecFn2, a: &Tensor, b: &Tensor, dt: DType) -> Result<Option<Tensor>> {
    macro_rules! run {
        ($t:ident, $a:expr, $b:expr) => {
            match f {
                VecFn2::Atan2 => zip_flat_slices::<$t>($a, $b, flat_loop2!($t, atan2)),
                VecFn2::Hypot => zip_flat_slices::<$t>($a, $b, flat_loop2!($t, hypot)),
                VecFn2::Logaddexp => zip_flat_slices::<$t>($a, $b, flat_loop2!($t, logaddexp)),
            }
        };
    }
    let flat = |x: &Tensor, y: &Tensor| match dt {
        DType::F32 => run!(f32, x, y),
        _ => run!(f64, x, y),
    };
    if !matches!(dt, DType::F32 | DType::F64) {
        return Ok(None);
    }
    if a.dtype() == dt && b.dtype() == dt {
        if let Some(out) = flat(a, b)? {
            return Ok(Some(out));
        }
    }
    let dims = broadcast_shapes(a.shape(), b.shape())?;
    let n = checked_numel(&dims)?;
    // Small calls take the element-wise driver (the caller's), which costs less than any
    // copy there, except for `f64` `atan2`, whose 19 fused multiply-adds out of line cost
    // 65 ns an element (broadcast rows, 1 thread: 16 elements 0.86 us against 1.10 copied for
    // `hypot`, 1.85 against 1.17 for `f64` `atan2`; even at 256), and `logaddexp` (an `exp`
    // and a `log1p` out of line: 16 broadcast elements 1.8 us, NumPy 1.0). Those two gather
    // operands of `dt` on the stack (`zip_gathered`: 16 broadcast `f64` from Python, `atan2`
    // 1.00 -> 0.70 us, `logaddexp` 1.00 -> 0.72; `hypot` went from 0.57 to 0.68 that way).
    let out_of_line_costly = (f == VecFn2::Atan2 && dt == DType::F64) || f == VecFn2::Logaddexp;
    if n < COPY_MIN {
        if !out_of_line_costly {
            return Ok(None);
        }
        macro_rules! gathered {
            ($t:ident) => {
                match f {
                    VecFn2::Logaddexp => {
                        zip_gathered::<$t>(a, b, &dims, flat_loop2!($t, logaddexp))
                    }
                    _ => zip_gathered::<$t>(a, b, &dims, flat_loop2!($t, atan2)),
                }
            };
        }
        let out = match dt {
            DType::F32 => gathered!(f32)?,
            _ => gathered!(f64)?,
        };
        if out.is_some() {
            return Ok(out);
        }
    }
    let dense = |t: &Tensor| -> Result<Tensor> {
        if t.dtype() == dt && t.shape() == dims.as_slice() && t.is_contiguous() {
            return Ok(t.clone());
        }
        let t = t.astype_if(dt)?;
        let l = t.layout().broadcast_to(&dims)?;
        t.with_layout(l)?.copy_dense()
    };
    let (a, b) = (dense(a)?, dense(b)?);
    if n < cut_over(PAR_MIN) {
        return flat(&a, &b);
    }
    let layout = Layout::contiguous(&dims)?;
    let (oa, ob) = (a.layout().offset(), b.layout().offset());
    macro_rules! large {
        ($t:ident) => {{
            let run: &Loop2<'_, $t, $t> = match f {
                VecFn2::Atan2 => &flat_loop2!($t, atan2),
                VecFn2::Hypot => &flat_loop2!($t, hypot),
                VecFn2::Logaddexp => &flat_loop2!($t, logaddexp),
            };
            fill_pair(
                &a,
                &b,
                layout,
                |o: &mut [MaybeUninit<$t>], xa: &[$t], xb: &[$t]| {
                    drive_flat2(overwritable(o), &xa[oa..oa + n], &xb[ob..ob + n], run)
                },
            )
        }};
    }
    Ok(Some(match dt {
        DType::F32 => large!(f32)?,
        _ => large!(f64)?,
    }))
}

/// `f(src)` into a fresh tensor in `src`'s memory order for an `f32`/`f64` tensor: the flat
/// loop straight into a buffer nobody shares when `src` is one small run ([`fill_flat`]),
/// else [`vector_math_into`]. `None` for other dtypes (the caller's generic loop).
pub(crate) fn vector_math(f: VecFn, src: &Tensor) -> Result<Option<Tensor>> {
    macro_rules! flat {
        ($t:ident) => {{
            let (trig, run) = (f.scans_huge(src.dtype()), vec_loop!($t, f));
            fill_flat::<$t, $t>(src, |o, a| {
                if trig && HugeScan::holds_huge(a) {
                    return false;
                }
                drive_flat(overwritable(o), a, run);
                true
            })?
        }};
    }
    if !matches!(src.dtype(), DType::F32 | DType::F64) {
        return Ok(None);
    }
    if let Some(d) = Distinct::of(&[src])? {
        if let Some(y) = vector_math(f, &d.operands[0])? {
            return Ok(Some(d.spread(&y)?));
        }
    }
    let flat = match src.dtype() {
        DType::F32 => flat!(f32),
        DType::F64 => flat!(f64),
        _ => return Ok(None),
    };
    if flat.is_some() {
        return Ok(flat);
    }
    if !src.is_contiguous() && src.numel() > 0 && src.layout().dense_order()?.is_none() {
        // Strided, broadcast or flipped: the function runs over a row-major copy (the order
        // such an input's output takes anyway). The generic driver would call it out of line,
        // element by element: 2-20x the cost of the copy.
        return vector_math(f, &src.copy_dense()?);
    }
    let out = Tensor::for_overwrite_in_order(src.layout(), src.dtype())?;
    Ok(vector_math_into(f, src, &out)?.then_some(out))
}

/// The block of a trig flat loop that is scanned for huge arguments just before it is
/// computed: 16 KiB of `f32`, in L1 when the function reads it.
const SCAN_BLOCK: usize = 4096;

/// Where `src`'s elements start in its storage when they and `out`'s can be walked as two
/// flat slices in one order: `out` is fresh at offset 0 over exactly its elements (so a dense
/// block, from [`Tensor::for_overwrite_in_order`]) and `src` has the same strides on every
/// dim longer than 1 (so it is the same block at its own offset).
fn flat_offset(src: &Tensor, out: &Tensor, out_len: usize) -> Option<usize> {
    let fresh = out.layout().offset() == 0 && out_len == out.numel();
    let block = out.is_contiguous() || out.layout().is_dense_block();
    (fresh && block && src.layout().walks_like(out.layout())).then(|| src.layout().offset())
}

/// `out = f(src)` elementwise when both are `f32` or both `f64` (same shape, `out` fresh from
/// [`Tensor::for_overwrite_in_order`]); `Ok(false)`, with nothing written, for other dtypes.
fn vector_math_into(f: VecFn, src: &Tensor, out: &Tensor) -> Result<bool> {
    macro_rules! run {
        ($t:ident) => {{
            use vmath::$t as m;
            let trig = f.scans_huge(src.dtype());
            let n = src.numel();
            // Whether a trig argument is huge: found in the slices the flat loop reads, each
            // block scanned just before it is computed (in cache: a separate pass over a
            // 16 Mi `f32` source cost a fifth of `sin`'s time), or by a reduction when the
            // flat loop does not apply. A huge argument found late sends the whole tensor
            // to libm below, which overwrites what the blocks before it wrote.
            let mut big = if trig { None } else { Some(false) };
            let run = vec_loop!($t, f);
            let mut done = false;
            {
                let mut o = out.dense_storage()?.write_as::<$t>();
                let a = src.dense_storage()?.read_as::<$t>();
                let at = flat_offset(src, out, o.len());
                if let (Some(o), Some(a)) =
                    (o.get_mut(..n), at.and_then(|at| a.get(at..)?.get(..n)))
                {
                    if trig {
                        let found = AtomicBool::new(false);
                        drive_flat(o, a, &|o: &mut [$t], a: &[$t]| {
                            for (o, a) in o.chunks_mut(SCAN_BLOCK).zip(a.chunks(SCAN_BLOCK)) {
                                if found.load(Relaxed) || HugeScan::holds_huge(a) {
                                    found.store(true, Relaxed);
                                    return;
                                }
                                run(o, a);
                            }
                        });
                        big = Some(found.into_inner());
                    } else {
                        drive_flat(o, a, run);
                    }
                    done = big == Some(false);
                }
            }
            let big = match big {
                Some(b) => b,
                None => any_above::<$t>(src, TRIG_LIMIT)?,
            };
            if !done {
                // The generic driver, for layouts the flat loop does not cover.
                macro_rules! each {
                    ($g:expr) => {
                        map_into::<$t, $t>(out, src, |_, x| $g(x))?
                    };
                }
                match f {
                    VecFn::Sin | VecFn::Cos | VecFn::Tan if big => match f {
                        VecFn::Sin => each!(|x: $t| (x as f64).sin() as $t),
                        VecFn::Cos => each!(|x: $t| (x as f64).cos() as $t),
                        _ => each!(|x: $t| (x as f64).tan() as $t),
                    },
                    VecFn::Exp => each!(m::exp),
                    VecFn::Expm1 => each!(m::expm1),
                    VecFn::Log => each!(m::log),
                    VecFn::Log1p => each!(m::log1p),
                    VecFn::Log2 => each!(m::log2),
                    VecFn::Log10 => each!(m::log10),
                    VecFn::Sin => each!(m::sin),
                    VecFn::Cos => each!(m::cos),
                    // The C library element by element above the limit (only `f32` gets
                    // here with such an argument).
                    VecFn::Tan => each!(m::tan_any),
                    VecFn::Asin => each!(m::asin),
                    VecFn::Acos => each!(m::acos),
                    VecFn::Atan => each!(m::atan),
                    VecFn::Sinh => each!(m::sinh),
                    VecFn::Cosh => each!(m::cosh),
                    VecFn::Tanh => each!(m::tanh),
                    VecFn::Asinh => each!(m::asinh),
                    VecFn::Acosh => each!(m::acosh),
                    VecFn::Atanh => each!(m::atanh),
                }
            }
        }};
    }
    match (src.dtype(), out.dtype()) {
        (DType::F32, DType::F32) => run!(f32),
        (DType::F64, DType::F64) => run!(f64),
        _ => return Ok(false),
    }
    Ok(true)
}
