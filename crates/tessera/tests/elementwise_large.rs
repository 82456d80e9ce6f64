//! Elementwise calls on inputs from the parallel cut-over on, where the one-pass loops run in
//! pieces across threads (`tensor/flat.rs` `map_dense`, `zip_dense`), against the naive rules
//! per element.

use tessera::{CompareOp, DType, MathBinaryOp, MathOp, Tensor};

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

/// The elements of `t` as `f64`, row-major.
fn f64s(t: &Tensor) -> Vec<f64> {
    t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

/// Whether `g` and `w` are the same value bit for bit, or both NaN.
fn same_bits(g: f64, w: f64) -> bool {
    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan())
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
                let want = f64s(&x);
                let got = f64s(&got);
                for (g, w) in got
                    .iter()
                    .zip(want.into_iter().map(|e| naive_clip(e, lo, hi)))
                {
                    assert!(
                        same_bits(*g, w),
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
            let xs = f64s(&x);
            for (op, rule) in rules {
                let got = x.math(op).unwrap();
                assert_eq!(got.shape(), x.shape());
                let got = f64s(&got);
                for (i, (g, &e)) in got.iter().zip(&xs).enumerate() {
                    let w = rule(e);
                    assert!(
                        same_bits(*g, w),
                        "{dt:?} {op:?}: element {i} ({e}) gave {g}, Rust gives {w}"
                    );
                }
            }
        }
    }
}

/// Two-operand calls with `bool` outputs and `nextafter` on inputs from the parallel
/// cut-over on (one flat loop in pieces across threads when the operands are one dense run
/// or one of them a single element, `zip_dense`, writing `bool` outputs uncleared; the
/// general walk for a broadcast row) against Rust's operators per element.
#[test]
fn zips_of_large_inputs_match_the_scalar_rules() {
    let v = large_values(2.5);
    let n = v.len();
    // The second operand: the values shifted by 3, so every pair of specials meets, ties
    // included (`large_values` repeats every 11 elements).
    let w: Vec<f64> = (0..n).map(|i| v[(i + 3) % n]).collect();
    type Rule = fn(f64, f64) -> bool;
    let compares: [(CompareOp, Rule); 6] = [
        (CompareOp::Eq, |x, y| x == y),
        (CompareOp::Ne, |x, y| x != y),
        (CompareOp::Lt, |x, y| x < y),
        (CompareOp::Le, |x, y| x <= y),
        (CompareOp::Gt, |x, y| x > y),
        (CompareOp::Ge, |x, y| x >= y),
    ];
    let logicals: [(MathBinaryOp, Rule); 3] = [
        (MathBinaryOp::LogicalAnd, |x, y| x != 0.0 && y != 0.0),
        (MathBinaryOp::LogicalOr, |x, y| x != 0.0 || y != 0.0),
        (MathBinaryOp::LogicalXor, |x, y| (x != 0.0) != (y != 0.0)),
    ];
    for dt in [DType::F64, DType::F32] {
        let tensor = |v: &[f64]| {
            Tensor::from_slice(v, &[2, n / 2])
                .unwrap()
                .astype(dt)
                .unwrap()
        };
        let (a, b) = (tensor(&v), tensor(&w));
        // Past the start of its storage: a run from a nonzero offset.
        let wide = Tensor::from_slice(&[&w[..], &v[..7]].concat(), &[n + 7])
            .unwrap()
            .astype(dt)
            .unwrap();
        let shifted = wide
            .narrow(0, 7, n)
            .unwrap()
            .reshape(&[2, (n / 2) as isize])
            .unwrap();
        let one = tensor(&w).narrow(1, 5, 1).unwrap().narrow(0, 0, 1).unwrap();
        let scalar = one.reshape(&[]).unwrap();
        let row = b.narrow(0, 0, 1).unwrap();
        let pairs = [
            (a.clone(), b.clone()),
            (a.t().unwrap(), b.t().unwrap()),
            (a.clone(), shifted),
            (a.clone(), scalar.clone()),
            (scalar, a.clone()),
            (a.clone(), one),
            (a.clone(), row),
        ];
        for (x, y) in &pairs {
            let shape = tessera::layout::broadcast_shapes(x.shape(), y.shape()).unwrap();
            let (xs, ys) = (
                f64s(&x.broadcast_to(&shape).unwrap()),
                f64s(&y.broadcast_to(&shape).unwrap()),
            );
            let check = |got: Tensor, name: &str, rule: &dyn Fn(f64, f64) -> f64| {
                assert_eq!(got.shape(), &shape[..]);
                for (i, g) in f64s(&got).into_iter().enumerate() {
                    let want = rule(xs[i], ys[i]);
                    assert!(
                        same_bits(g, want),
                        "{dt:?} {name}: element {i} ({}, {}) gave {g}, Rust gives {want}",
                        xs[i],
                        ys[i]
                    );
                }
            };
            for (op, rule) in compares {
                let got = x.compare(y, op).unwrap();
                check(got, &format!("{op:?}"), &|p, q| {
                    f64::from(u8::from(rule(p, q)))
                });
            }
            for (op, rule) in logicals {
                let got = x.math_binary(y, op).unwrap();
                check(got, &format!("{op:?}"), &|p, q| {
                    f64::from(u8::from(rule(p, q)))
                });
            }
            let got = x.math_binary(y, MathBinaryOp::Nextafter).unwrap();
            check(got, "nextafter", &|p, q| naive_nextafter(p, q, dt));
        }
    }
}

/// `nextafter(x, y)` in `dt` (`f32` or `f64`), written from C's definition: the next
/// representable value after `x` towards `y`; `y` when they are equal; NaN if either is.
fn naive_nextafter(x: f64, y: f64, dt: DType) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return y;
    }
    match dt {
        DType::F32 if x < y => f64::from((x as f32).next_up()),
        DType::F32 => f64::from((x as f32).next_down()),
        _ if x < y => x.next_up(),
        _ => x.next_down(),
    }
}
