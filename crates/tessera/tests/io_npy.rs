//! Single arrays in NumPy's `.npy` format (`tessera::io::save_npy` / `load_npy`,
//! docs/design.md F5). References: byte strings NumPy writes (hand-checked against
//! `np.save`), hand-made Fortran-order and big-endian files, and `to_vec`.

use std::path::PathBuf;

use proptest::prelude::*;
use tessera::index::IndexSpec;
use tessera::io;
use tessera::{DType, ErrorKind, IoFacts, StorageType, Tensor, TesseraError};

/// A file path removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> TempFile {
        TempFile(std::env::temp_dir().join(format!("tessera-npy-{}-{name}", std::process::id())))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn is_format(e: &TesseraError) -> bool {
    matches!(e.kind(), ErrorKind::Io(IoFacts::Format { .. }))
}

/// A `.npy` file (version 1.0) from a header dict and data, padded as NumPy pads.
fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
    npy_version(1, dict, data)
}

fn npy_version(major: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let len_bytes = if major == 1 { 2 } else { 4 };
    let total = (6 + 2 + len_bytes + dict.len() + 1).next_multiple_of(64);
    let header_len = total - 6 - 2 - len_bytes;
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([major, 0]);
    out.extend(&(header_len as u32).to_le_bytes()[..len_bytes]);
    out.extend(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out.extend_from_slice(data);
    out
}

fn load_bytes(name: &str, bytes: &[u8]) -> tessera::Result<Tensor> {
    let f = TempFile::new(name);
    std::fs::write(&f.0, bytes).unwrap();
    io::load_npy(&f.0)
}

#[test]
fn f5_output_is_byte_for_byte_what_numpy_writes() {
    // np.save(f, np.arange(6, dtype="<i4").reshape(2, 3)) with NumPy 2.
    let mut expected =
        b"\x93NUMPY\x01\x00v\x00{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"
            .to_vec();
    expected.resize(127, b' ');
    expected.push(b'\n');
    expected.extend((0i32..6).flat_map(|x| x.to_le_bytes()));
    let f = TempFile::new("exact.npy");
    let t = Tensor::arange(0, 6, 1, DType::I32)
        .unwrap()
        .view(&[2, 3])
        .unwrap();
    io::save_npy(&f.0, &t).unwrap();
    assert_eq!(std::fs::read(&f.0).unwrap(), expected);
    // A 0-d bool (np.save(f, np.bool_(True))) and a 1-d float16.
    io::save_npy(&f.0, &Tensor::scalar(true, DType::Bool).unwrap()).unwrap();
    let got = std::fs::read(&f.0).unwrap();
    assert!(got.starts_with(
        b"\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape': (), }"
    ));
    assert_eq!((got.len(), got[127], got[128]), (129, b'\n', 1));
    io::save_npy(&f.0, &Tensor::ones(&[1], DType::F16).unwrap()).unwrap();
    let got = std::fs::read(&f.0).unwrap();
    assert!(got[10..].starts_with(b"{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }"));
    assert_eq!(&got[128..], &[0x00, 0x3c]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// F5: every dtype NumPy has, any shape, through views (flip, transpose, stride 2,
    /// expand), saves its logical elements and loads them back contiguous.
    #[test]
    fn f5_every_numpy_dtype_and_view_round_trips(
        d in prop::sample::select(DType::ALL.iter().copied().filter(|&d| d != DType::BF16).collect::<Vec<_>>()),
        dims in prop::collection::vec(0usize..4, 0..4),
        op in 0u8..5,
        start in -100i64..100,
    ) {
        let n: usize = dims.iter().product();
        let base = Tensor::arange(start, start + n as i64, 1, DType::I64).unwrap()
            .astype(d).unwrap()
            .reshape(&dims.iter().map(|&x| x as isize).collect::<Vec<_>>()).unwrap();
        let v = match op {
            0 => base.clone(),
            1 => base.flip(None).unwrap(),
            2 => base.t().unwrap(),
            3 if base.rank() > 0 => base.index(&[IndexSpec::Interval {
                start: None, end: None, step: 2, inclusive: false }]).unwrap(),
            _ => {
                let mut sizes = vec![2isize];
                sizes.extend(std::iter::repeat_n(-1, base.rank()));
                base.unsqueeze(0).unwrap().expand(&sizes).unwrap()
            }
        };
        let f = TempFile::new(&format!("prop-{d}-{op}.npy"));
        io::save_npy(&f.0, &v).unwrap();
        let back = io::load_npy(&f.0).unwrap();
        prop_assert_eq!((back.dtype(), back.shape()), (v.dtype(), v.shape()));
        prop_assert!(back.is_contiguous());
        let as_f64 = |t: &Tensor| t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        prop_assert_eq!(as_f64(&back), as_f64(&v));
    }
}

#[test]
fn f5_fortran_order_big_endian_and_later_versions_read() {
    // np.arange(6).reshape(2, 3) in Fortran order is stored column by column: 0 3 1 4 2 5.
    let col_major = [0i32, 3, 1, 4, 2, 5];
    let be: Vec<u8> = col_major.iter().flat_map(|x| x.to_be_bytes()).collect();
    let t = load_bytes(
        "f-be.npy",
        &npy(
            "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }",
            &be,
        ),
    )
    .unwrap();
    assert_eq!(t.shape(), &[2, 3]);
    assert_eq!(t.to_vec::<i32>().unwrap(), [0, 1, 2, 3, 4, 5]);
    let le: Vec<u8> = [1.5f64, -2.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    for major in [2, 3] {
        let t = load_bytes(
            &format!("v{major}.npy"),
            &npy_version(
                major,
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                &le,
            ),
        )
        .unwrap();
        assert_eq!(t.to_vec::<f64>().unwrap(), [1.5, -2.0]);
    }
    // Bool bytes other than 0 and 1 are true (docs/design.md H7).
    let b = load_bytes(
        "bools.npy",
        &npy(
            "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
            &[0, 2, 255],
        ),
    )
    .unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), [false, true, true]);
}

#[test]
fn f5_bfloat16_and_sparse_tensors_are_refused() {
    let f = TempFile::new("refused.npy");
    let e = io::save_npy(&f.0, &Tensor::ones(&[2], DType::BF16).unwrap()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DType(_)), "{e}");
    assert!(e.to_string().contains("bfloat16"), "{e}");
    let s = Tensor::ones(&[2, 2], DType::F32)
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    let e = io::save_npy(&f.0, &s).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidArgument(_)), "{e}");
    assert!(!f.0.exists());
}

#[test]
fn f5_bad_files_are_format_errors() {
    let f4 = 1.0f32.to_le_bytes();
    let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
    assert!(load_bytes("ok.npy", &npy(dict, &f4)).is_ok());
    let mut bad_version = npy(dict, &f4);
    bad_version[6] = 4;
    let mut past_end = npy(dict, &f4);
    past_end[8] = 0xff;
    past_end[9] = 0xff;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("not npy", b"PK\x03\x04 a zip file, say".to_vec()),
        ("version 4.0", bad_version),
        ("header past the end", past_end),
        ("not a dict", npy("['descr']", &f4)),
        ("float128", npy("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", &[0; 16])),
        ("object array", npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", &f4)),
        ("structured", npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", &f4)),
        ("truncated data", npy(dict, &f4[..3])),
        ("trailing data", npy(dict, &[0; 5])),
        ("huge declared shape", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", &f4)),
        ("overflowing shape", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", &f4)),
        ("missing key", npy("{'descr': '<f4', 'shape': (1,), }", &f4)),
        ("rank 65", npy(&format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", ["1"; 65].join(", ")), &f4)),
        ("rank 100000", npy_version(2, &format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", ["1"; 100_000].join(", ")), &f4)),
    ];
    for (what, bytes) in cases {
        let e = load_bytes("bad.npy", &bytes).expect_err(what);
        assert!(is_format(&e), "{what}: {e}");
    }
    // Every proper prefix of a valid file is a format error.
    let good = npy(dict, &f4);
    for cut in 0..good.len() {
        let e = load_bytes("cut.npy", &good[..cut]).unwrap_err();
        assert!(is_format(&e), "cut at {cut}: {e}");
    }
    let missing = TempFile::new("missing.npy");
    assert!(matches!(
        io::load_npy(&missing.0).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Io(IoFacts::Os { .. }))
    ));
}
