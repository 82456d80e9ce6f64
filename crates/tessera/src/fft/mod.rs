//! Discrete Fourier transforms along one axis (docs/design.md F1-F4), on rustfft (complex) and
//! realfft (real input or output), with one planner per precision shared by every thread:
//! plans are made once per length and direction and reused (the planners cache them).
//!
//! Every transform sees its input as lanes along the axis (`arrayfns::lanes`): each lane is
//! copied into a buffer of the output length (cut, or padded with zeros, to `n`), transformed
//! in place, scaled for `norm`, and written to the output, lanes in parallel on rayon's pool
//! for large inputs. The n-dimensional transforms are these applied axis by axis
//! (`ops/methods/fft.rs`).

use std::sync::OnceLock;

use num_complex::Complex;
use parking_lot::Mutex;
use rayon::prelude::*;
use realfft::RealFftPlanner;
use rustfft::{FftNum, FftPlanner};

use crate::arrayfns::lanes::{fill, parallel, read, Lanes};
use crate::complex::{C128, C64};
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result};
use crate::tensor::Tensor;

/// How a transform is scaled (the standard's `norm`): `backward` scales the inverse by
/// `1/n`, `forward` the forward transform, `ortho` both by `1/√n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FftNorm {
    /// No scaling forward, `1/n` inverse (the default).
    #[default]
    Backward,
    /// `1/√n` both ways (unitary).
    Ortho,
    /// `1/n` forward, none inverse.
    Forward,
}

impl FftNorm {
    /// The factor of a forward (`inverse == false`) or inverse transform of length `n`.
    pub fn factor(self, n: usize, inverse: bool) -> f64 {
        match (self, inverse) {
            (FftNorm::Backward, false) | (FftNorm::Forward, true) => 1.0,
            (FftNorm::Backward, true) | (FftNorm::Forward, false) => 1.0 / n as f64,
            (FftNorm::Ortho, _) => 1.0 / (n as f64).sqrt(),
        }
    }

    /// The norm whose forward scaling is this one's inverse scaling (NumPy's
    /// `_swap_direction`, for `hfft`/`ihfft`).
    pub fn swapped(self) -> FftNorm {
        match self {
            FftNorm::Backward => FftNorm::Forward,
            FftNorm::Ortho => FftNorm::Ortho,
            FftNorm::Forward => FftNorm::Backward,
        }
    }
}

/// Which transform: complex to complex (either direction), real to half-spectrum, or
/// half-spectrum to real.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftKind {
    /// Complex to complex, forward (`inverse == false`) or inverse.
    Complex {
        /// The inverse transform (`e^{+2πi jk/n}`).
        inverse: bool,
    },
    /// Real input, the `n/2 + 1` non-negative frequencies out (`rfft`).
    RealForward,
    /// The `n/2 + 1` non-negative frequencies in, `n` real values out (`irfft`).
    RealInverse,
}

/// The planners, one per precision, shared by every thread (a plan is an `Arc`: taking one
/// holds the lock only while it is looked up or made).
struct Planners<T: FftNum> {
    complex: Mutex<FftPlanner<T>>,
    real: Mutex<RealFftPlanner<T>>,
}

fn planners<T: FftNum>(cell: &'static OnceLock<Planners<T>>) -> &'static Planners<T> {
    cell.get_or_init(|| Planners {
        complex: Mutex::new(FftPlanner::new()),
        real: Mutex::new(RealFftPlanner::new()),
    })
}

static PLANNERS_F32: OnceLock<Planners<f32>> = OnceLock::new();
static PLANNERS_F64: OnceLock<Planners<f64>> = OnceLock::new();

/// A precision of the transforms: f32 (complex64) or f64 (complex128).
trait Precision: FftNum {
    type C: Element;
    fn planners() -> &'static Planners<Self>;
    fn to_c(z: Complex<Self>) -> Self::C;
    fn from_c(c: Self::C) -> Complex<Self>;
    fn of_f64(v: f64) -> Self;
}

impl Precision for f32 {
    type C = C64;
    fn planners() -> &'static Planners<f32> {
        planners(&PLANNERS_F32)
    }
    fn to_c(z: Complex<f32>) -> C64 {
        C64(z)
    }
    fn from_c(c: C64) -> Complex<f32> {
        c.0
    }
    fn of_f64(v: f64) -> f32 {
        v as f32
    }
}

impl Precision for f64 {
    type C = C128;
    fn planners() -> &'static Planners<f64> {
        planners(&PLANNERS_F64)
    }
    fn to_c(z: Complex<f64>) -> C128 {
        C128(z)
    }
    fn from_c(c: C128) -> Complex<f64> {
        c.0
    }
    fn of_f64(v: f64) -> f64 {
        v
    }
}

/// Runs `lane(k, out_lane, scratch)` for every lane of an output of `count` lanes of
/// `len` elements, in parallel when the job is large.
fn for_lanes<O: Send, S: Send>(
    out: &mut [O],
    len: usize,
    work: usize,
    scratch: impl Fn() -> S + Sync + Send,
    lane: impl Fn(usize, &mut [O], &mut S) + Sync + Send,
) {
    if parallel(work) && out.len() > len {
        out.par_chunks_mut(len)
            .enumerate()
            .for_each_init(&scratch, |s, (k, o)| lane(k, o, s));
    } else {
        let mut s = scratch();
        for (k, o) in out.chunks_mut(len).enumerate() {
            lane(k, o, &mut s);
        }
    }
}

/// Copies up to `dst.len()` elements of `src` into `dst` and zeroes the rest.
fn cut_or_pad<T: Copy>(dst: &mut [T], src: impl Iterator<Item = T>, zero: T) {
    let mut filled = 0;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s;
        filled += 1;
    }
    dst[filled..].fill(zero);
}

fn complex_lanes<P: Precision>(
    x: &Lanes,
    n: usize,
    inverse: bool,
    norm: FftNorm,
) -> Result<Tensor> {
    let plan = {
        let mut p = P::planners().complex.lock();
        if inverse {
            p.plan_fft_inverse(n)
        } else {
            p.plan_fft_forward(n)
        }
    };
    let scale = P::of_f64(norm.factor(n, inverse));
    let m = x.len;
    let zero = Complex::new(P::zero(), P::zero());
    read::<P::C, _>(&x.data, |src| {
        fill::<P::C>(&x.dims_with(n), |out| {
            for_lanes(
                out,
                n,
                n * x.count,
                || {
                    let buf = vec![zero; n];
                    let scratch = vec![zero; plan.get_inplace_scratch_len()];
                    (buf, scratch)
                },
                |k, o, (buf, scratch)| {
                    let lane = &src[k * m..(k + 1) * m];
                    cut_or_pad(buf, lane.iter().map(|&c| P::from_c(c)), zero);
                    plan.process_with_scratch(buf, scratch);
                    for (d, &z) in o.iter_mut().zip(buf.iter()) {
                        *d = P::to_c(Complex::new(z.re * scale, z.im * scale));
                    }
                },
            );
            Ok(())
        })
    })?
}

fn real_forward_lanes<P: Precision + Element>(
    x: &Lanes,
    n: usize,
    norm: FftNorm,
) -> Result<Tensor> {
    let plan = P::planners().real.lock().plan_fft_forward(n);
    let scale = P::of_f64(norm.factor(n, false));
    let (m, half) = (x.len, n / 2 + 1);
    read::<P, _>(&x.data, |src| {
        fill::<P::C>(&x.dims_with(half), |out| {
            for_lanes(
                out,
                half,
                n * x.count,
                || {
                    (
                        plan.make_input_vec(),
                        plan.make_output_vec(),
                        plan.make_scratch_vec(),
                    )
                },
                |k, o, (input, spectrum, scratch)| {
                    cut_or_pad(input, src[k * m..(k + 1) * m].iter().copied(), P::zero());
                    // Cannot fail: the buffers come from the plan itself.
                    let _ = plan.process_with_scratch(input, spectrum, scratch);
                    for (d, &z) in o.iter_mut().zip(spectrum.iter()) {
                        *d = P::to_c(Complex::new(z.re * scale, z.im * scale));
                    }
                },
            );
            Ok(())
        })
    })?
}

fn real_inverse_lanes<P: Precision + Element>(
    x: &Lanes,
    n: usize,
    norm: FftNorm,
) -> Result<Tensor> {
    let plan = P::planners().real.lock().plan_fft_inverse(n);
    let scale = P::of_f64(norm.factor(n, true));
    let (m, half) = (x.len, n / 2 + 1);
    let zero = Complex::new(P::zero(), P::zero());
    read::<P::C, _>(&x.data, |src| {
        fill::<P>(&x.dims_with(n), |out| {
            for_lanes(
                out,
                n,
                n * x.count,
                || {
                    (
                        plan.make_input_vec(),
                        plan.make_output_vec(),
                        plan.make_scratch_vec(),
                    )
                },
                |k, o, (spectrum, output, scratch)| {
                    let lane = &src[k * m..(k + 1) * m];
                    cut_or_pad(spectrum, lane.iter().map(|&c| P::from_c(c)), zero);
                    // A real signal's spectrum has real values at 0 and (even n) n/2: their
                    // imaginary parts are ignored, as NumPy (pocketfft) ignores them.
                    spectrum[0].im = P::zero();
                    if n.is_multiple_of(2) {
                        spectrum[half - 1].im = P::zero();
                    }
                    let _ = plan.process_with_scratch(spectrum, output, scratch);
                    for (d, &v) in o.iter_mut().zip(output.iter()) {
                        *d = v * scale;
                    }
                },
            );
            Ok(())
        })
    })?
}

/// Whether the transform runs in single precision: float32, float16, bfloat16, complex64.
fn single(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F16 | DType::BF16 | DType::C64)
}

impl Tensor {
    /// The dense kernel of the one-axis transforms: `kind` along `axis` with `n` points
    /// (default: the axis length for complex and real-forward transforms, `2 (m - 1)` for the
    /// real inverse of `m` frequencies), scaled for `norm`. Complex results are complex64 for
    /// single-precision input and complex128 otherwise (integers and bool compute in double
    /// precision, as NumPy); real results are float32 or float64 likewise.
    pub(crate) fn fft_dense(
        &self,
        kind: FftKind,
        n: Option<usize>,
        axis: isize,
        norm: FftNorm,
    ) -> Result<Tensor> {
        let d = self.dtype();
        if kind == FftKind::RealForward && d.is_complex() {
            return Err(ErrorKind::DType(crate::error::DTypeFacts::Unsupported {
                op: "rfft".into(),
                dtype: d,
                hint: " (rfft takes real input; use fft)",
            })
            .into());
        }
        let lanes_of = |dt: DType| Lanes::new(&self.astype_dense(dt)?, axis);
        let m = self
            .shape()
            .get(crate::layout::normalize_axis(axis, self.rank())?)
            .copied();
        let m = m.unwrap_or(1);
        let n = match (n, kind) {
            (Some(n), _) => n,
            (None, FftKind::RealInverse) => 2 * m.saturating_sub(1),
            (None, _) => m,
        };
        if n < 1 {
            return Err(ErrorKind::InvalidArgument(format!(
                "invalid number of data points ({n}) for a transform along axis {axis}"
            ))
            .into());
        }
        match (kind, single(d)) {
            (FftKind::Complex { inverse }, true) => {
                let x = lanes_of(DType::C64)?;
                x.restore(complex_lanes::<f32>(&x, n, inverse, norm)?)
            }
            (FftKind::Complex { inverse }, false) => {
                let x = lanes_of(DType::C128)?;
                x.restore(complex_lanes::<f64>(&x, n, inverse, norm)?)
            }
            (FftKind::RealForward, true) => {
                let x = lanes_of(DType::F32)?;
                x.restore(real_forward_lanes::<f32>(&x, n, norm)?)
            }
            (FftKind::RealForward, false) => {
                let x = lanes_of(DType::F64)?;
                x.restore(real_forward_lanes::<f64>(&x, n, norm)?)
            }
            (FftKind::RealInverse, true) => {
                let x = lanes_of(DType::C64)?;
                x.restore(real_inverse_lanes::<f32>(&x, n, norm)?)
            }
            (FftKind::RealInverse, false) => {
                let x = lanes_of(DType::C128)?;
                x.restore(real_inverse_lanes::<f64>(&x, n, norm)?)
            }
        }
    }
}
