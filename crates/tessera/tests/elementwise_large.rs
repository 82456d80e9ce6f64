//! Elementwise calls on inputs from the parallel cut-over on, where the one-pass loops run in
//! pieces across threads (`tensor/flat.rs` `map_dense`), against the naive rules per element.

use tessera::{DType, MathOp, Tensor};

use crate::elementwise_fns::naive_clip;

/// `2 (PAR_MIN + 37)` values (two rows of an odd length): NaN, `±0`, `±inf`, `±m` and smooth
/// values in turn.
fn large_values(m: f64) -> Vec<f64> {
    let n = 2 * (tessera::kernels::elementwise::PAR_MIN + 37);
    let specials = [f64::NAN, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, m, -m];
    (0..n)
        .map(|i| match i % 11 {
            k @ 0..=6 => specials[k],
            k => (i as f64 * 0.37).sin() * 4.0 + k as f64 * 0.01,
        })
        .collect()
}

/// `clip` of inputs from the parallel cut-over on (one pass in pieces across threads when
/// the input is one dense run, `map_dense`; the composed ops for a NaN bound or a broadcast
/// input) and of inputs broadcast four times over or more, against the naive rule, bit for
/// bit.
#[test]
fn clip_of_large_inputs_matches_the_naive_rule() {
    let v = large_values(1.0);
    let n = v.len();
    let bounds = [
        (Some(-1.0), Some(1.0)),
        (Some(0.0), None),
        (None, Some(-0.0)),
        (Some(2.0), Some(-2.0)),
        (Some(f64::NAN), Some(1.0)),
    ];
    for dt in [DType::F64, DType::F32, DType::I64] {
        let cast = |x: f64| match dt {
            DType::I64 if !x.is_finite() => 3.0,
            DType::I64 => x.trunc() + 0.0,
            DType::F32 => x as f32 as f64,
            _ => x,
        };
        let v: Vec<f64> = v.iter().map(|&x| cast(x)).collect();
        let base = Tensor::from_slice(&v, &[2, n / 2])
            .unwrap()
            .astype(dt)
            .unwrap();
        let row = base
            .narrow(0, 0, 1)
            .unwrap()
            .expand(&[2, (n / 2) as isize])
            .unwrap();
        // Broadcast at least four times over: clipped once per distinct element, then copied
        // out (`Distinct`).
        let part = base.narrow(0, 0, 1).unwrap().narrow(1, 0, 1009).unwrap();
        let rows = part.expand(&[6, 1009]).unwrap();
        let cols = part
            .reshape(&[1009, 1])
            .unwrap()
            .expand(&[1009, 5])
            .unwrap();
        for x in [base.clone(), base.t().unwrap(), row, rows, cols] {
            for (lo, hi) in bounds {
                if dt == DType::I64 && lo.is_some_and(f64::is_nan) {
                    continue;
                }
                let (lo, hi) = (lo.map(cast), hi.map(cast));
                let bound = |b: Option<f64>| {
                    b.map(|b| Tensor::scalar(b, DType::F64).unwrap().astype(dt).unwrap())
                };
                let got = x.clip(bound(lo).as_ref(), bound(hi).as_ref()).unwrap();
                assert_eq!((got.dtype(), got.shape()), (dt, x.shape()));
                let want = x.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                let got = got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                for (g, w) in got
                    .iter()
                    .zip(want.into_iter().map(|e| naive_clip(e, lo, hi)))
                {
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                        "{dt:?}: clip gave {g} where the rule gives {w} (lo {lo:?}, hi {hi:?})"
                    );
                }
            }
        }
    }
}

/// One-operand maps of inputs from the parallel cut-over on (one flat loop in pieces across
/// threads when the input is one dense run, `map_dense`, writing `bool` outputs uncleared;
/// the general walk for a broadcast input) against Rust's own functions per element.
#[test]
fn maps_of_large_inputs_match_the_scalar_functions() {
    let v = large_values(2.5);
    let n = v.len();
    type Rule = fn(f64) -> f64;
    let rules: [(MathOp, Rule); 6] = [
        (MathOp::Isnan, |x| f64::from(u8::from(x.is_nan()))),
        (MathOp::Isinf, |x| f64::from(u8::from(x.is_infinite()))),
        (MathOp::Isfinite, |x| f64::from(u8::from(x.is_finite()))),
        (MathOp::Signbit, |x| {
            f64::from(u8::from(x.is_sign_negative()))
        }),
        (MathOp::LogicalNot, |x| f64::from(u8::from(x == 0.0))),
        (MathOp::Floor, f64::floor),
    ];
    for dt in [DType::F64, DType::F32] {
        let base = Tensor::from_slice(&v, &[2, n / 2])
            .unwrap()
            .astype(dt)
            .unwrap();
        let row = base
            .narrow(0, 0, 1)
            .unwrap()
            .expand(&[2, (n / 2) as isize])
            .unwrap();
        for x in [base.clone(), base.t().unwrap(), row] {
            let xs = x.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            for (op, rule) in rules {
                let got = x.math(op).unwrap();
                assert_eq!(got.shape(), x.shape());
                let got = got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                for (i, (g, &e)) in got.iter().zip(&xs).enumerate() {
                    let w = rule(e);
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                        "{dt:?} {op:?}: element {i} ({e}) gave {g}, Rust gives {w}"
                    );
                }
            }
        }
    }
}
