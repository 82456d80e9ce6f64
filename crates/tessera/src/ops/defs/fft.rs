//! The one-axis discrete Fourier transforms `fft`, `ifft`, `rfft`, `irfft` (kernels:
//! `fft/mod.rs`; the n-dimensional and Hermitian ones are `Tensor` methods built on these,
//! `ops/methods/fft.rs`). Not differentiable: complex tensors do not record gradients
//! (docs/design.md T4).

use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::fft::{FftKind, FftNorm};
use crate::layout::normalize_axis;
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;

op_params! {
    /// Parameters of the one-axis transforms.
    pub struct FftParams {
        /// Points (input cut or zero-padded to it); None: the axis length (irfft: 2 (m - 1)).
        n: Option<usize> = None;
        /// The axis to transform.
        axis: isize = -1;
        /// Scaling: `backward` (1/n on the inverse), `ortho` (1/√n both) or `forward`.
        norm: FftNorm = FftNorm::Backward;
    }
}

// The parameter form of the norm lives here, not in `fft/` (imports go one way: ops -> fft).
impl crate::ops::params::ParamValue for FftNorm {
    const TYPE_NAME: &'static str = "backward | ortho | forward";
    fn parse_value(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "backward" => Ok(FftNorm::Backward),
            "ortho" => Ok(FftNorm::Ortho),
            "forward" => Ok(FftNorm::Forward),
            other => Err(format!("{other:?} is not backward, ortho or forward")),
        }
    }
    fn render(&self) -> String {
        match self {
            FftNorm::Backward => "backward",
            FftNorm::Ortho => "ortho",
            FftNorm::Forward => "forward",
        }
        .into()
    }
}

const WHY: &str = "complex tensors do not record gradients (docs/design.md T4)";

fn single(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F16 | DType::BF16 | DType::C64)
}

/// Output shape and dtype of `kind` on an input of `shape` and `dtype`.
fn infer(kind: FftKind, p: &FftParams, m: &TensorMeta) -> Result<Vec<TensorMeta>> {
    let axis = normalize_axis(p.axis, m.shape.len())?;
    let len = m.shape[axis];
    let n = match (p.n, kind) {
        (Some(n), _) => n,
        (None, FftKind::RealInverse) => 2 * len.saturating_sub(1),
        (None, _) => len,
    };
    if n < 1 {
        return Err(ErrorKind::InvalidArgument(format!(
            "invalid number of data points ({n}) for a transform along axis {}",
            p.axis
        ))
        .into());
    }
    let mut shape = m.shape.clone();
    let (out_len, dtype) = match (kind, single(m.dtype)) {
        (FftKind::RealForward, s) => (n / 2 + 1, if s { DType::C64 } else { DType::C128 }),
        (FftKind::RealInverse, s) => (n, if s { DType::F32 } else { DType::F64 }),
        (_, s) => (n, if s { DType::C64 } else { DType::C128 }),
    };
    shape[axis] = out_len;
    Ok(vec![TensorMeta::dense(shape, dtype)])
}

macro_rules! transform {
    ($infer:ident, $compute:ident, $kind:expr) => {
        fn $infer(p: &FftParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
            infer($kind, p, &m[0])
        }
        fn $compute(
            p: &FftParams,
            x: &[crate::tensor::Tensor],
        ) -> Result<Vec<crate::tensor::Tensor>> {
            Ok(vec![x[0].fft_dense($kind, p.n, p.axis, p.norm)?])
        }
    };
}

transform!(infer_fft, fft, FftKind::Complex { inverse: false });
transform!(infer_ifft, ifft, FftKind::Complex { inverse: true });
transform!(infer_rfft, rfft, FftKind::RealForward);
transform!(infer_irfft, irfft, FftKind::RealInverse);

type Infer = fn(&FftParams, &[TensorMeta]) -> Result<Vec<TensorMeta>>;
type Compute = fn(&FftParams, &[crate::tensor::Tensor]) -> Result<Vec<crate::tensor::Tensor>>;

pub(super) fn register(r: &mut OpTable) {
    let defs: [(&'static str, &'static str, Infer, Compute); 4] = [
        ("fft", "The discrete Fourier transform along `axis` (complex output; real input is promoted).", infer_fft, fft),
        ("ifft", "The inverse discrete Fourier transform along `axis`.", infer_ifft, ifft),
        ("rfft", "The transform of real input along `axis`: the n/2 + 1 non-negative frequencies.", infer_rfft, rfft),
        ("irfft", "The inverse of rfft: n real values (default 2 (m - 1)) from m non-negative frequencies; the imaginary parts of the zero and (even n) Nyquist terms are ignored.", infer_irfft, irfft),
    ];
    for (name, doc, inf, compute) in defs {
        r.add(
            OpDef::<FftParams>::new(name, doc, &["x"], &["y"], inf, compute)
                .not_differentiable(WHY),
        );
    }
}
