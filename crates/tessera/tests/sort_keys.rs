//! `sort` and `argsort` through the integer-key paths (`arrayfns/radix.rs`: the `(key, index)`
//! sort of short lanes and the radix passes of long ones) for every dtype with a key, at
//! lengths on both sides of the cut-over, against a stable reference sort of the values; and
//! the integer dtypes by value through the sorting network (lanes around its cuts,
//! `radix::DIRECT_INT64_MAX` and `network::NET_MAX`) against the standard library's sort.

use std::cmp::Ordering;

use proptest::prelude::*;
use tessera::{DType, Tensor};

/// NumPy's order on f64: NaN last, -0.0 == 0.0.
fn np_cmp(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
}

/// Many ties, both signs, signed zeros, infinities and NaN (floats only).
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => (-300i32..300).prop_map(f64::from),
        2 => -1e6f64..1e6,
        1 => Just(f64::NAN),
        1 => Just(-0.0),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
    ]
}

/// `x` made representable in `dtype` (integers: finite, in range).
fn fit(x: f64, dtype: DType) -> f64 {
    let finite = if x.is_finite() { x.trunc() } else { 7.0 };
    match dtype {
        DType::Bool => (finite != 0.0) as i32 as f64,
        DType::U8 => finite.abs() % 256.0,
        DType::I8 => finite % 128.0,
        DType::U16 | DType::U32 | DType::U64 => finite.abs(),
        DType::I16 | DType::I32 | DType::I64 => finite,
        _ => x,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn keyed_dtypes_sort_stably_at_any_length(
        raw in proptest::collection::vec(value(), 0..1300),
        dtype in proptest::sample::select(vec![
            DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
            DType::I16, DType::I8, DType::U8, DType::U16, DType::U32, DType::U64, DType::Bool,
        ]),
        desc: bool,
    ) {
        let fitted: Vec<f64> = raw.iter().map(|&x| fit(x, dtype)).collect();
        let n = fitted.len();
        let t = Tensor::from_slice(&fitted, &[n]).unwrap().astype(dtype).unwrap();
        // The values as the dtype holds them (f16 rounds), read back exactly.
        let vals = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&i, &j| {
            let o = np_cmp(vals[i], vals[j]);
            if desc { o.reverse() } else { o }
        });
        let got = t.sort(0, desc, true).unwrap();
        prop_assert_eq!(got.dtype(), dtype);
        let got = got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        for (k, &i) in idx.iter().enumerate() {
            let (g, w) = (got[k], vals[i]);
            prop_assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{} sort[{}] = {} want {}", dtype, k, g, w);
        }
        let order = t.argsort(0, desc).unwrap().to_vec::<i64>().unwrap();
        let want: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
        prop_assert_eq!(order, want);
    }
}

/// Signed zeros and NaNs of both signs and several payloads, among few distinct numbers.
fn tie_heavy() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-3i32..3).prop_map(f64::from),
        2 => Just(-0.0),
        2 => Just(0.0),
        1 => Just(f64::NAN),
        1 => Just(-f64::NAN),
        1 => (1u64..1000).prop_map(|p| f64::from_bits(0x7ff8_0000_0000_0000 | p)),
        1 => (1u64..1000).prop_map(|p| f64::from_bits(0xfff0_0000_0000_0000 | p)),
        1 => -1e300f64..1e300,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// Lanes up to and past the sorting network's 256 keys: a stable sort keeps every tie
    /// (signed zeros, NaN payloads and signs) in input order, in both directions, bit for bit.
    #[test]
    fn short_float_lanes_keep_ties_in_input_order(
        raw in proptest::collection::vec(tie_heavy(), 0..300),
        f32_lane: bool,
        desc: bool,
    ) {
        let n = raw.len();
        let dtype = if f32_lane { DType::F32 } else { DType::F64 };
        let t = Tensor::from_slice(&raw, &[n]).unwrap().astype(dtype).unwrap();
        let bits: Vec<u64> = if f32_lane {
            t.to_vec::<f32>().unwrap().iter().map(|x| x.to_bits() as u64).collect()
        } else {
            t.to_vec::<f64>().unwrap().iter().map(|x| x.to_bits()).collect()
        };
        let vals = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&i, &j| {
            let o = np_cmp(vals[i], vals[j]);
            if desc { o.reverse() } else { o }
        });
        let got: Vec<u64> = if f32_lane {
            t.sort(0, desc, true).unwrap().to_vec::<f32>().unwrap().iter().map(|x| x.to_bits() as u64).collect()
        } else {
            t.sort(0, desc, true).unwrap().to_vec::<f64>().unwrap().iter().map(|x| x.to_bits()).collect()
        };
        let want: Vec<u64> = idx.iter().map(|&i| bits[i]).collect();
        prop_assert_eq!(got, want);
        let order = t.argsort(0, desc).unwrap().to_vec::<i64>().unwrap();
        prop_assert_eq!(order, idx.iter().map(|&i| i as i64).collect::<Vec<_>>());
    }
}

/// Sorts `v` by the standard library (descending: reversed), the reference below.
fn std_sorted<T: Ord + Copy>(v: &[T], desc: bool) -> Vec<T> {
    let mut w = v.to_vec();
    w.sort_unstable();
    if desc {
        w.reverse();
    }
    w
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The 32- and 64-bit integers sort in place as their own keys (one xor each way): the
    /// whole range, both extremes included, at lengths through the network (up to 256) and
    /// the quicksort above it, in rows of a 2-D tensor.
    #[test]
    fn wide_integers_sort_in_place_over_their_whole_range(
        raw in proptest::collection::vec(
            prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), Just(0), -3i64..3],
            0..700,
        ),
        rows in 1usize..4,
        desc: bool,
    ) {
        let n = raw.len() / rows;
        let raw = &raw[..n * rows];
        let lanes = |got: Vec<i64>| got.chunks(n.max(1)).map(<[i64]>::to_vec).collect::<Vec<_>>();
        let t = Tensor::from_vec(raw.to_vec(), &[rows, n]).unwrap();
        let want: Vec<Vec<i64>> = raw.chunks(n.max(1)).map(|l| std_sorted(l, desc)).collect();
        let got = t.sort(1, desc, false).unwrap().to_vec::<i64>().unwrap();
        prop_assert_eq!(lanes(got), want.clone());
        let as_u64: Vec<u64> = raw.iter().map(|&x| x as u64).collect();
        let t = Tensor::from_vec(as_u64.clone(), &[rows, n]).unwrap();
        let got = t.sort(1, desc, false).unwrap().to_vec::<u64>().unwrap();
        let want: Vec<u64> = as_u64.chunks(n.max(1)).flat_map(|l| std_sorted(l, desc)).collect();
        prop_assert_eq!(got, want);
        let as_i32: Vec<i32> = raw.iter().map(|&x| (x >> 32) as i32).collect();
        let t = Tensor::from_vec(as_i32.clone(), &[rows, n]).unwrap();
        let got = t.sort(1, desc, false).unwrap().to_vec::<i32>().unwrap();
        let want: Vec<i32> = as_i32.chunks(n.max(1)).flat_map(|l| std_sorted(l, desc)).collect();
        prop_assert_eq!(got, want);
        let as_u32: Vec<u32> = raw.iter().map(|&x| x as u32).collect();
        let t = Tensor::from_vec(as_u32.clone(), &[rows, n]).unwrap();
        let got = t.sort(1, desc, false).unwrap().to_vec::<u32>().unwrap();
        let want: Vec<u32> = as_u32.chunks(n.max(1)).flat_map(|l| std_sorted(l, desc)).collect();
        prop_assert_eq!(got, want);
    }
}

/// One long ascending float lane (from 64 Ki elements its first partition writes the new
/// array: `arrayfns/partition_copy.rs`), against a stable reference sort bit for bit: plain
/// values, and with a signed zero or a NaN put in (the lanes that pass go the ordinary way),
/// in both widths; a descending sort and two lanes, which do not take that path, alike.
#[test]
fn long_float_lanes_sort_as_the_stable_reference() {
    let n = (1 << 16) + 9;
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let base: Vec<f64> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) % 50_000) as f64 / 7.0 - 3000.25
        })
        .collect();
    // Zeros of both signs every 97th element (an unstable sort would mix their signs).
    let mut zeroed = base.clone();
    for (k, i) in (0..n).step_by(97).enumerate() {
        zeroed[i] = if k % 2 == 0 { -0.0 } else { 0.0 };
    }
    let mut nan = base.clone();
    nan[n - 2] = f64::NAN;
    for v in [&base, &zeroed, &nan] {
        for dtype in [DType::F64, DType::F32] {
            for (desc, rows) in [(false, 1), (true, 1), (false, 2)] {
                let t = Tensor::from_slice(v, &[n]).unwrap().astype(dtype).unwrap();
                let vals = t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                let lane = n / rows;
                let mut want = Vec::new();
                for r in 0..rows {
                    let mut l = vals[r * lane..(r + 1) * lane].to_vec();
                    l.sort_by(|a, b| if desc { np_cmp(*b, *a) } else { np_cmp(*a, *b) });
                    want.extend(l);
                }
                let shape = [rows as isize, lane as isize];
                let t = t
                    .narrow(0, 0, rows * lane)
                    .unwrap()
                    .reshape(&shape)
                    .unwrap();
                let got = t.sort(1, desc, true).unwrap().astype(DType::F64).unwrap();
                let got = got.to_vec::<f64>().unwrap();
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(
                    same && got.len() == want.len(),
                    "{dtype:?}, desc {desc}, {rows} lanes"
                );
            }
        }
    }
}

/// Sorts `v` (row-major `r x c`) along `axis`, each lane by [`std_sorted`], in the output's
/// row-major order.
fn lanes_sorted<T: Ord + Copy>(v: &[T], r: usize, c: usize, axis: usize, desc: bool) -> Vec<T> {
    let mut out = v.to_vec();
    let (lanes, len) = if axis == 1 { (r, c) } else { (c, r) };
    for k in 0..lanes {
        let at = |i: usize| if axis == 1 { k * c + i } else { i * c + k };
        let lane: Vec<T> = (0..len).map(|i| v[at(i)]).collect();
        for (i, x) in std_sorted(&lane, desc).into_iter().enumerate() {
            out[at(i)] = x;
        }
    }
    out
}

proptest! {
    /// Integer lanes of every length around the network's cuts (one pass by value up to 64
    /// elements for 64-bit integers and 256 for 32-bit ones, 32-bit offsets or keys past
    /// them), with values narrow and spanning the whole type, against the standard sort.
    #[test]
    fn integer_sorts_match_the_standard_sort(
        r in 1usize..4,
        c in 0usize..300,
        seed: u64,
        wide: bool,
        axis in 0usize..2,
        desc: bool,
    ) {
        let mut s = seed | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if wide { s } else { s % 601 }
        };
        let v: Vec<u64> = (0..r * c).map(|_| next()).collect();
        let signed: Vec<i64> = v.iter().map(|&x| if wide { x as i64 } else { x as i64 - 300 }).collect();
        // Lanes along axis 0 are the columns: take the transpose's lanes of `c` too.
        let (rr, cc, ax) = if axis == 0 { (c, r, 0) } else { (r, c, 1) };
        macro_rules! check {
            ($vals:expr, $t:ty) => {{
                let vals: Vec<$t> = $vals;
                let t = Tensor::from_vec(vals.clone(), &[rr, cc]).unwrap();
                let got = t.sort(ax as isize, desc, false).unwrap().contiguous().unwrap();
                prop_assert_eq!(got.to_vec::<$t>().unwrap(), lanes_sorted(&vals, rr, cc, ax, desc), "{}", stringify!($t));
            }};
        }
        check!(signed.clone(), i64);
        check!(v.clone(), u64);
        check!(signed.iter().map(|&x| x as i32).collect(), i32);
        check!(v.iter().map(|&x| x as u32).collect(), u32);
        check!(signed.iter().map(|&x| x as i16).collect(), i16);
    }
}
