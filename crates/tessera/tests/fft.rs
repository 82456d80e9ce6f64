//! The Fourier transforms against the definition written naively (an O(n²) sum), for every
//! norm, lengths with odd and prime factors, `n` cutting or padding, and a non-last axis.

use proptest::prelude::*;
use tessera::num_complex::Complex64;
use tessera::{DType, FftNorm, Tensor, C128};

/// `X[k] = Σ x[j] e^{∓2πi jk/n}` over `n` points of `x` (cut or zero-padded), scaled by `f`.
fn naive_dft(x: &[Complex64], n: usize, inverse: bool, f: f64) -> Vec<Complex64> {
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..n)
        .map(|k| {
            let mut acc = Complex64::new(0.0, 0.0);
            for (j, &v) in x.iter().take(n).enumerate() {
                let ang = sign * 2.0 * std::f64::consts::PI * (j * k % n) as f64 / n as f64;
                acc += v * Complex64::new(ang.cos(), ang.sin());
            }
            acc * f
        })
        .collect()
}

fn norm_of(i: u8) -> FftNorm {
    [FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward][i as usize % 3]
}

fn assert_close(got: &[Complex64], want: &[Complex64]) {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().map(|z| z.norm()).fold(1.0, f64::max);
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).norm() <= 1e-9 * scale, "{g} vs {w}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn complex_and_real_transforms_match_the_definition(
        re in proptest::collection::vec(-4.0f64..4.0, 1..40),
        im_seed in 0u64..1000,
        n in proptest::option::of(1usize..45),
        norm in 0u8..3,
    ) {
        let norm = norm_of(norm);
        let m = re.len();
        let x: Vec<Complex64> = re.iter().enumerate()
            .map(|(i, &r)| Complex64::new(r, ((i as u64 * 31 + im_seed) % 17) as f64 - 8.0))
            .collect();
        let t = Tensor::from_vec(x.iter().map(|&z| C128(z)).collect(), &[m]).unwrap();
        let len = n.unwrap_or(m);
        for inverse in [false, true] {
            let got = if inverse { t.ifft(n, 0, norm) } else { t.fft(n, 0, norm) }.unwrap();
            let got: Vec<Complex64> = got.to_vec::<C128>().unwrap().into_iter().map(|c| c.0).collect();
            assert_close(&got, &naive_dft(&x, len, inverse, norm.factor(len, inverse)));
        }
        // rfft of the real parts: the first n/2 + 1 terms of the full transform.
        let r = Tensor::from_vec(re.clone(), &[m]).unwrap();
        let got: Vec<Complex64> = r.rfft(n, -1, norm).unwrap().to_vec::<C128>().unwrap().into_iter().map(|c| c.0).collect();
        let real: Vec<Complex64> = re.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        let full = naive_dft(&real, len, false, norm.factor(len, false));
        assert_close(&got, &full[..len / 2 + 1]);
        // irfft(rfft(x)) is x (cut or padded to n).
        let back = r.rfft(n, -1, norm).unwrap().irfft(Some(len), -1, norm).unwrap().to_vec::<f64>().unwrap();
        let want: Vec<f64> = (0..len).map(|i| re.get(i).copied().unwrap_or(0.0)).collect();
        for (b, w) in back.iter().zip(&want) {
            prop_assert!((b - w).abs() < 1e-9 * (1.0 + w.abs()), "{b} vs {w}");
        }
    }
}

#[test]
fn transforms_run_along_any_axis_and_keep_single_precision() {
    // A 3 x 5 float32 matrix along axis 0: each column transformed on its own.
    let v: Vec<f32> = (0..15).map(|i| (i * 7 % 11) as f32).collect();
    let t = Tensor::from_vec(v.clone(), &[3, 5]).unwrap();
    let y = t.fft(None, 0, FftNorm::Backward).unwrap();
    assert_eq!((y.dtype(), y.shape()), (DType::C64, &[3usize, 5][..]));
    let y = y.astype(DType::C128).unwrap().to_vec::<C128>().unwrap();
    for c in 0..5 {
        let col: Vec<Complex64> = (0..3)
            .map(|r| Complex64::new(v[r * 5 + c] as f64, 0.0))
            .collect();
        let want = naive_dft(&col, 3, false, 1.0);
        let got: Vec<Complex64> = (0..3).map(|r| y[r * 5 + c].0).collect();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).norm() < 1e-4, "{g} vs {w}");
        }
    }
    // Errors: no points, an axis out of range, complex input to rfft.
    assert!(t.fft(Some(0), 0, FftNorm::Backward).is_err());
    assert!(t.fft(None, 2, FftNorm::Backward).is_err());
    assert!(t
        .fft(None, 0, FftNorm::Backward)
        .unwrap()
        .rfft(None, 0, FftNorm::Backward)
        .is_err());
    // The frequencies, as NumPy's fftfreq(4, 0.25) and rfftfreq(5).
    let f = Tensor::fftfreq(4, 0.25, DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(f, vec![0.0, 1.0, -2.0, -1.0]);
    let f = Tensor::rfftfreq(5, 1.0, DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(f, vec![0.0, 0.2, 0.4]);
}
