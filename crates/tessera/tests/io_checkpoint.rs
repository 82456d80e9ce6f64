//! Checkpoints in the safetensors format (`tessera::io`, docs/design.md F1–F2): every dtype
//! and view round-trips, and sparse tensors round-trip and stay readable as plain tensors.
//! Bad files and OS failures (F3, F4) are in `io_bad_files.rs`.
//!
//! References: the `safetensors` crate's own reader (`SafeTensors::deserialize`) and a naive
//! little-endian encoder of `to_vec`'s elements, not the code under test.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use safetensors::SafeTensors;
use tessera::index::IndexSpec;
use tessera::io::{self, Checkpoint};
use tessera::{CsrMatrix, DType, ErrorKind, SparseParts, StorageType, Tensor};

use crate::io_support::{is_format, raw, TempDir};

/// The logical elements of `t`, little-endian, element by element (the reference encoding).
fn le_bytes(t: &Tensor) -> Vec<u8> {
    macro_rules! enc {
        ($T:ty) => {
            t.to_vec::<$T>()
                .unwrap()
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect()
        };
    }
    match t.dtype() {
        DType::Bool => t
            .to_vec::<bool>()
            .unwrap()
            .iter()
            .map(|&b| b as u8)
            .collect(),
        DType::U8 => enc!(u8),
        DType::I8 => enc!(i8),
        DType::U16 => enc!(u16),
        DType::I16 => enc!(i16),
        DType::U32 => enc!(u32),
        DType::U64 => enc!(u64),
        DType::I32 => enc!(i32),
        DType::I64 => enc!(i64),
        DType::F16 => enc!(tessera::half::f16),
        DType::BF16 => enc!(tessera::half::bf16),
        DType::F32 => enc!(f32),
        DType::F64 => enc!(f64),
        DType::C64 | DType::C128 => unreachable!("safetensors has no complex dtype"),
    }
}

/// The dtypes safetensors holds: all but the complex ones.
const SAVABLE: [DType; 13] = {
    let mut out = [DType::Bool; 13];
    let mut i = 0;
    while i < 13 {
        out[i] = DType::ALL[i];
        i += 1;
    }
    out
};

/// A contiguous tensor of `shape` with random bits (NaN payloads, infinities, subnormals;
/// bools 0 or 1).
fn random_tensor(dtype: DType, shape: &[usize], rng: &mut StdRng) -> Tensor {
    let n: usize = shape.iter().product();
    let bytes: Vec<u8> = (0..n * dtype.itemsize()).map(|_| rng.random()).collect();
    macro_rules! dec {
        ($T:ty) => {{
            const S: usize = std::mem::size_of::<$T>();
            let v: Vec<$T> = bytes
                .chunks_exact(S)
                .map(|c| <$T>::from_le_bytes(c.try_into().unwrap()))
                .collect();
            Tensor::from_vec(v, shape).unwrap()
        }};
    }
    match dtype {
        DType::Bool => Tensor::from_vec(bytes.iter().map(|b| b & 1 == 1).collect(), shape).unwrap(),
        DType::U8 => dec!(u8),
        DType::I8 => dec!(i8),
        DType::U16 => dec!(u16),
        DType::I16 => dec!(i16),
        DType::U32 => dec!(u32),
        DType::U64 => dec!(u64),
        DType::I32 => dec!(i32),
        DType::I64 => dec!(i64),
        DType::F16 => dec!(tessera::half::f16),
        DType::BF16 => dec!(tessera::half::bf16),
        DType::F32 => dec!(f32),
        DType::F64 => dec!(f64),
        DType::C64 | DType::C128 => unreachable!("safetensors has no complex dtype"),
    }
}

/// `t` seen through a view op: 0 reverse the dims, 1 flip every axis, 2 every other row,
/// 3 expand along a new leading dim of 3.
fn view_op(t: &Tensor, op: u8) -> Tensor {
    match op {
        0 => t.t().unwrap(),
        1 => t.flip(None).unwrap(),
        2 if t.rank() > 0 => t
            .index(&[IndexSpec::Interval {
                start: None,
                end: None,
                step: 2,
                inclusive: false,
            }])
            .unwrap(),
        _ => {
            let mut sizes = vec![3isize];
            sizes.extend(std::iter::repeat_n(-1, t.rank()));
            t.unsqueeze(0).unwrap().expand(&sizes).unwrap()
        }
    }
}

fn same(a: &Tensor, b: &Tensor) {
    assert_eq!(
        (a.dtype(), a.shape(), a.stype()),
        (b.dtype(), b.shape(), b.stype())
    );
    assert_eq!(le_bytes(a), le_bytes(b));
}

fn meta(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// F1: any dtype, shape (empty dims and rank 0 included) and chain of views saves its
    /// logical elements; the crate's reader sees exactly them, and loading gives them back.
    #[test]
    fn f1_every_dtype_shape_and_view_round_trips(
        d in 0usize..SAVABLE.len(),
        dims in prop::collection::vec(0usize..5, 0..4),
        ops in prop::collection::vec(0u8..4, 0..3),
        seed in any::<u64>(),
    ) {
        let dtype = SAVABLE[d];
        let mut rng = StdRng::seed_from_u64(seed);
        let mut v = random_tensor(dtype, &dims, &mut rng);
        for op in ops {
            v = view_op(&v, op);
        }
        let other = random_tensor(SAVABLE[(d + 3) % SAVABLE.len()], &[2], &mut rng);
        let m = meta(&[("epoch", "3")]);
        let bytes = io::serialize(&[("x", &v), ("a", &other)], &m).unwrap();
        // A plain safetensors reader sees ordinary tensors with the logical elements.
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let x = st.tensor("x").unwrap();
        prop_assert_eq!(x.shape(), v.shape());
        prop_assert_eq!(x.data(), &le_bytes(&v)[..]);
        prop_assert_eq!(x.dtype().to_string(), safetensors_name(dtype));
        // Tessera gets the tensors back, in order, with the metadata.
        let ck = io::deserialize(&bytes).unwrap();
        prop_assert_eq!(ck.names().collect::<Vec<_>>(), vec!["x", "a"]);
        prop_assert_eq!(&ck.metadata, &m);
        same(ck.get("x").unwrap(), &v);
        same(ck.get("a").unwrap(), &other);
        prop_assert!(ck.get("x").unwrap().is_contiguous());
    }

    /// F2: CSR (int32 or int64 indices, canonical or not) and row-sparse tensors of random
    /// patterns round-trip with their storage type, parts and values.
    #[test]
    fn f2_sparse_tensors_round_trip(
        rows in 0usize..6,
        cols in 0usize..6,
        density in prop::sample::select(vec![0.0, 0.3, 1.0]),
        d in prop::sample::select(vec![DType::F32, DType::F64, DType::I64, DType::Bool, DType::BF16]),
        seed in any::<u64>(),
    ) {
        let mut rng = StdRng::seed_from_u64(seed);
        let dense = random_tensor(d, &[rows, cols], &mut rng);
        let mask: Vec<bool> = (0..rows * cols).map(|_| rng.random::<f64>() < density).collect();
        let dense = Tensor::from_vec(mask, &[rows, cols]).unwrap().astype(d).unwrap()
            .mul(&dense).unwrap();
        let csr = dense.cast_storage(StorageType::Csr).unwrap();
        let rsp = dense.cast_storage(StorageType::RowSparse).unwrap();
        let bytes = io::serialize(&[("m", &csr), ("r", &rsp), ("d", &dense)], &BTreeMap::new())
            .unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let mut names = st.names();
        names.sort();
        prop_assert_eq!(names, vec!["d", "m.data", "m.indices", "m.indptr", "r.data", "r.indices"]);
        let ck = io::deserialize(&bytes).unwrap();
        prop_assert_eq!(ck.names().collect::<Vec<_>>(), vec!["m", "r", "d"]);
        let (m, r) = (ck.get("m").unwrap(), ck.get("r").unwrap());
        same(m, &csr);
        same(r, &rsp);
        let (a, b) = (m.as_csr().unwrap(), csr.as_csr().unwrap());
        prop_assert_eq!(a.index_dtype(), b.index_dtype());
        same(a.indptr(), b.indptr());
        same(a.indices(), b.indices());
        same(a.data(), b.data());
        same(r.as_row_sparse().unwrap().indices(), rsp.as_row_sparse().unwrap().indices());
    }

    /// F3: cutting a valid file anywhere is a format error, and changing any byte gives a
    /// checkpoint or an error, never a panic.
    #[test]
    fn f3_truncated_or_flipped_files_are_errors_not_panics(
        at in any::<prop::sample::Index>(),
        value in any::<u8>(),
    ) {
        let bytes = sample_checkpoint_bytes();
        let cut = at.index(bytes.len());
        let e = io::deserialize(&bytes[..cut]).unwrap_err();
        prop_assert!(is_format(&e), "{e}");
        let mut flipped = bytes.clone();
        flipped[cut] = value;
        let _ = io::deserialize(&flipped);
    }
}

/// The safetensors name of a dtype (the format's specification).
fn safetensors_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "BOOL",
        DType::U8 => "U8",
        DType::I8 => "I8",
        DType::U16 => "U16",
        DType::I16 => "I16",
        DType::U32 => "U32",
        DType::U64 => "U64",
        DType::I32 => "I32",
        DType::I64 => "I64",
        DType::F16 => "F16",
        DType::BF16 => "BF16",
        DType::F32 => "F32",
        DType::F64 => "F64",
        DType::C64 | DType::C128 => unreachable!("safetensors has no complex dtype"),
    }
}

/// A checkpoint with dense and sparse tensors of several dtypes.
fn sample_checkpoint_bytes() -> Vec<u8> {
    let w = Tensor::arange(0.0, 6.0, 1.0, DType::F32)
        .unwrap()
        .view(&[2, 3])
        .unwrap();
    let csr = w.cast_storage(StorageType::Csr).unwrap();
    let rsp = w.t().unwrap().cast_storage(StorageType::RowSparse).unwrap();
    let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let i = Tensor::arange(-3, 3, 1, DType::I8).unwrap();
    let m = meta(&[("step", "7")]);
    io::serialize(
        &[
            ("w", &w),
            ("csr", &csr),
            ("rsp", &rsp),
            ("b", &b),
            ("i", &i),
        ],
        &m,
    )
    .unwrap()
}

#[test]
fn f1_files_round_trip_in_the_callers_order_with_metadata() {
    let dir = TempDir::new("order");
    let p = dir.path("ck.safetensors");
    let mut rng = StdRng::seed_from_u64(1);
    // Names out of alphabetical order and dtypes of every item size, interleaved.
    let named: Vec<(String, Tensor)> = SAVABLE
        .iter()
        .rev()
        .enumerate()
        .map(|(k, &d)| (format!("z{}", 99 - k), random_tensor(d, &[k, 2], &mut rng)))
        .collect();
    let refs: Vec<(&str, &Tensor)> = named.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let m = meta(&[("framework", "tessera"), ("note", "é ünïcode \" quotes")]);
    io::save(&p, &refs, &m).unwrap();
    let ck: Checkpoint = io::load(&p).unwrap();
    assert_eq!(
        ck.names().collect::<Vec<_>>(),
        named.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()
    );
    assert_eq!(ck.metadata, m);
    for (n, t) in &named {
        same(ck.get(n).unwrap(), t);
    }
    // Equal inputs give equal bytes; each tensor's data is aligned to its item size.
    let again = io::serialize(&refs, &m).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), again);
    assert_eq!(again, io::serialize(&refs, &m).unwrap());
    let n = u64::from_le_bytes(again[..8].try_into().unwrap()) as usize;
    assert_eq!(n % 8, 0);
    let header: serde_json::Value = serde_json::from_slice(&again[8..8 + n]).unwrap();
    for (name, t) in &named {
        let start = header[name]["data_offsets"][0].as_u64().unwrap() as usize;
        assert_eq!(start % t.dtype().itemsize(), 0, "{name}");
    }
    // The metadata carries Tessera's key for other readers; Tessera hides it.
    assert!(header["__metadata__"][io::METADATA_KEY].is_string());
    assert!(!ck.metadata.contains_key(io::METADATA_KEY));
}

#[test]
fn f1_empty_views_with_any_offset_save_nothing() {
    for d in SAVABLE {
        let base = Tensor::zeros(&[0], d).unwrap();
        let v = base.as_strided(&[2, 0], &[1, 1], 5).unwrap();
        let bytes = io::serialize(&[("v", &v)], &BTreeMap::new()).unwrap();
        same(io::deserialize(&bytes).unwrap().get("v").unwrap(), &v);
    }
}

#[test]
fn f1_files_of_other_writers_load_in_data_order_with_all_their_metadata() {
    let data: Vec<u8> = [1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat();
    let header = r#"{"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},
        "a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"e":{"dtype":"I64","shape":[0,3],"data_offsets":[8,8]},
        "flags":{"dtype":"BOOL","shape":[0],"data_offsets":[8,8]}}"#;
    let ck = io::deserialize(&raw(header, &data)).unwrap();
    assert_eq!(ck.names().collect::<Vec<_>>(), ["a", "b", "e", "flags"]);
    assert_eq!(ck.metadata, meta(&[("format", "pt")]));
    assert_eq!(ck.get("b").unwrap().to_vec::<f32>().unwrap(), vec![-2.0]);
    assert_eq!(ck.get("e").unwrap().shape(), &[0, 3]);
    // Bool bytes other than 0 and 1 read as true (docs/design.md H7).
    let header = r#"{"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}"#;
    let ck = io::deserialize(&raw(header, &[0, 2, 255])).unwrap();
    assert_eq!(
        ck.get("m").unwrap().to_vec::<bool>().unwrap(),
        [false, true, true]
    );
}

#[test]
fn f2_noncanonical_csr_and_empty_sparse_tensors_round_trip() {
    let data = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    let m = CsrMatrix::try_new_noncanonical([2, 4], vec![0, 2, 3], vec![3, 1, 0], data).unwrap();
    let t = Tensor::from_sparse_parts(SparseParts::Csr(m)).unwrap();
    let empty = Tensor::zeros(&[0, 5], DType::F32)
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    let rs = Tensor::zeros(&[4, 2, 3], DType::I32)
        .unwrap()
        .cast_storage(StorageType::RowSparse)
        .unwrap();
    let bytes = io::serialize(&[("nc", &t), ("e", &empty), ("rs", &rs)], &BTreeMap::new()).unwrap();
    let ck = io::deserialize(&bytes).unwrap();
    let nc = ck.get("nc").unwrap();
    assert!(!nc.as_csr().unwrap().has_canonical_format());
    assert_eq!(
        nc.as_csr().unwrap().indices().to_vec::<i32>().unwrap(),
        [3, 1, 0]
    );
    same(nc, &t);
    same(ck.get("e").unwrap(), &empty);
    same(ck.get("rs").unwrap(), &rs);
}

#[test]
fn f2_names_and_metadata_that_would_clash_are_refused() {
    let t = Tensor::ones(&[2, 2], DType::F32).unwrap();
    let s = t.cast_storage(StorageType::Csr).unwrap();
    let none = BTreeMap::new();
    let cases: [(&[(&str, &Tensor)], _); 4] = [
        (&[("a", &t), ("a", &t)], &none),
        (&[("s", &s), ("s.indptr", &t)], &none),
        (&[("__metadata__", &t)], &none),
        (&[("a", &t)], &meta(&[("tessera", "x")])),
    ];
    for (tensors, m) in cases {
        let e = io::serialize(tensors, m).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidArgument(_)), "{e}");
    }
    // More than 64 dims cannot be read back, so it is not written.
    let deep = Tensor::zeros(&[1], DType::U8)
        .unwrap()
        .view(&[1; 65])
        .unwrap();
    let e = io::serialize(&[("deep", &deep)], &none).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidArgument(_)), "{e}");
    let ok = Tensor::zeros(&[1], DType::U8)
        .unwrap()
        .view(&[1; 64])
        .unwrap();
    assert!(io::serialize(&[("ok", &ok)], &none).is_ok());
    // Parts written after construction are refused before anything is written.
    s.as_csr().unwrap().indices().fill_(9).unwrap();
    let e = io::serialize(&[("s", &s)], &none).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Sparse(_)), "{e}");
}
