//! `f32` `tan`, `sin` and `cos` where their reductions are hardest: the `f32`s nearest the
//! multiples of π/2, every `f32` up to `TRIG_LIMIT` (on demand), and arguments above it, which
//! go to the C library. The reference is std's `f64` function rounded to `f32`; the bounds are
//! the ones docs/design.md P2 documents.

use crate::vector_math::assert_within;
use crate::vector_math_derived::{tensor_of, worst32};
use tessera::kernels::vmath::{self, TRIG_LIMIT};

/// The `f32` tangent at the `f32`s nearest every multiple of π/2 up to [`TRIG_LIMIT`] and
/// their neighbours, both signs: where the reduced argument is smallest, so its relative error
/// shows (the reduction carries it as `hi + lo`), and where odd quadrants divide by it.
#[test]
fn f32_tangent_near_multiples_of_pi_2() {
    let last = (TRIG_LIMIT / std::f64::consts::FRAC_PI_2) as u32;
    let mut xs = Vec::new();
    for k in 1..=last {
        let x = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
        for b in [x.to_bits() - 1, x.to_bits(), x.to_bits() + 1] {
            let y = f32::from_bits(b);
            xs.extend([y, -y]);
        }
    }
    assert_within("tan", &xs, vmath::f32::tan, f64::tan, 1, true);
}

/// Every `f32` up to [`TRIG_LIMIT`] through `tan`, `sin` and `cos` (both signs are
/// symmetric, so the positive ones), against `f64`: about a minute on two cores in release,
/// so run on demand: `cargo test --release -p tessera --test suite
/// f32_trig_exhaustive -- --ignored --nocapture`. Measured 2026-12-03 against the exact
/// `f64` values: `tan` within 1.52 ulp (1.54 since the small reduction of 2026-12-05), `sin`
/// and `cos` 1.58 (as before the `f32` reduction);
/// 2 each in the whole ulps from the rounded `f64` value that this test counts.
#[test]
#[ignore = "exhaustive: about a minute in release; run on demand"]
fn f32_trig_exhaustive() {
    let top = (TRIG_LIMIT as f32).to_bits();
    type Case = (&'static str, fn(f32) -> f32, fn(f64) -> f64);
    let cases: [Case; 3] = [
        ("tan", vmath::f32::tan, f64::tan),
        ("sin", vmath::f32::sin, f64::sin),
        ("cos", vmath::f32::cos, f64::cos),
    ];
    let bound = 2;
    for (name, f, reference) in cases {
        let (e, x) = worst32(f, reference, 0..top + 1);
        println!("{name} f32: max {e} ulp at {x:e}");
        assert!(e <= bound, "{name}({x:e}): {e} ulp");
    }
}

/// A `tan` argument above `TRIG_LIMIT` (or an infinity) goes to the C library: for `f64`
/// the whole tensor with it (`sin`'s rule), for `f32` that element alone, so the others keep
/// the vector function's bits (`tan_f32_blocks`: each block by the magnitudes in it). Checked
/// for a contiguous tensor and its transpose (a permuted layout), with arguments on both
/// sides of the small reduction's limit 4096 (the `f32`s nearest multiples of π/2 there,
/// where the two reductions differ most), so blocks of every kind (small, large, mixed, huge)
/// occur. NaNs compare as NaN, whatever their bits.
#[test]
fn a_huge_tan_argument_goes_to_the_c_library() {
    use tessera::{DType, MathOp};
    let near: Vec<f64> = (2500..2700)
        .flat_map(|k| {
            let c = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
            [c.next_down(), c, c.next_up()].map(f64::from)
        })
        .collect();
    for n in [16usize, 270_000] {
        let mut vals: Vec<f64> = (0..n)
            .map(|i| match (i / 300) % 4 {
                0 => (i % 97) as f64 * 0.37 - 17.0,
                1 => (i % 89) as f64 * 71.3 + 4000.0,
                2 => near[i % near.len()],
                _ => -((i % 89) as f64 * 5003.7 + 4097.0),
            })
            .collect();
        vals[n / 2] = 3.0e6;
        vals[n / 4] = f64::NEG_INFINITY;
        vals[n / 3] = f64::NAN;
        vals[n / 5] = f32::MAX as f64;
        vals[n - 1] = -0.0;
        for dtype in [DType::F32, DType::F64] {
            let (t, xs) = tensor_of(&vals, dtype);
            let transposed = t
                .reshape(&[2, n as isize / 2])
                .unwrap()
                .transpose(0, 1)
                .unwrap();
            let xs_t: Vec<f64> = (0..n).map(|k| xs[(k % 2) * (n / 2) + k / 2]).collect();
            for (t, xs) in [(&t, &xs), (&transposed, &xs_t)] {
                let got = t.math(MathOp::Tan).unwrap().astype(DType::F64).unwrap();
                for (k, (&x, &g)) in xs.iter().zip(&got.to_vec::<f64>().unwrap()).enumerate() {
                    let want = match dtype {
                        DType::F32 if x.abs() > TRIG_LIMIT => (x.tan() as f32) as f64,
                        DType::F32 => vmath::f32::tan(x as f32) as f64,
                        _ => x.tan(),
                    };
                    assert!(
                        g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                        "n={n} {dtype} [{k}] tan({x:e}) = {g:e}, want {want:e}"
                    );
                }
            }
        }
    }
}
