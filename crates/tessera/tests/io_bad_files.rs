//! Bad checkpoint files and failing file systems (`tessera::io`, docs/design.md F3–F4):
//! hand-made broken files, tampered sparse parts and OS failures are typed errors (never
//! panics or aborts), and saves replace files atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tessera::io;
use tessera::{DType, ErrorKind, IoFacts, StorageType, Tensor, TesseraError};

use crate::io_support::{is_format, raw, TempDir};

#[test]
fn f3_hand_made_bad_files_are_format_errors() {
    let f4 = 1.0f32.to_le_bytes();
    let ok = r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    assert!(io::deserialize(&raw(ok, &f4)).is_ok());
    let mut huge_len = (1u64 << 63).to_le_bytes().to_vec();
    huge_len.extend_from_slice(b"{}      ");
    let mut past_end = 16u64.to_le_bytes().to_vec();
    past_end.extend_from_slice(b"{}      ");
    let mut not_utf8 = 8u64.to_le_bytes().to_vec();
    not_utf8.extend_from_slice(b"{\xff}     ");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("short length", vec![1, 2, 3]),
        ("huge header length", huge_len),
        ("header past the end", past_end),
        ("not UTF-8", not_utf8),
        ("not JSON", raw("{\"a\": ", &[])),
        ("data truncated", raw(ok, &f4[..3])),
        ("trailing bytes", raw(ok, &[0, 0, 0, 0, 1])),
        (
            "offsets past the data",
            raw(
                r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}}"#,
                &f4,
            ),
        ),
        (
            "size not shape x dtype",
            raw(
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
                &f4,
            ),
        ),
        (
            "hole in the data",
            raw(
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
                &f4[..2],
            ),
        ),
        (
            "huge declared shape",
            raw(
                r#"{"a":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,4]}}"#,
                &f4,
            ),
        ),
        (
            "shape overflowing usize",
            raw(
                r#"{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,4]}}"#,
                &f4,
            ),
        ),
        (
            "shape of 2^62 bytes",
            raw(
                r#"{"a":{"dtype":"F32","shape":[1073741824,1073741824],"data_offsets":[0,4611686018427387904]}}"#,
                &f4,
            ),
        ),
        (
            "unknown dtype",
            raw(
                r#"{"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,4]}}"#,
                &f4,
            ),
        ),
        (
            "dtype Tessera lacks",
            raw(
                r#"{"a":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}}"#,
                &f4,
            ),
        ),
        (
            "negative dim",
            raw(
                r#"{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#,
                &f4,
            ),
        ),
        (
            "metadata not strings",
            raw(
                r#"{"__metadata__":{"k":1},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
                &f4,
            ),
        ),
    ];
    // A rank of 100 000 (the shape cache's trie would be that deep): refused up front.
    let deep = format!(
        r#"{{"a":{{"dtype":"U8","shape":[{}],"data_offsets":[0,1]}}}}"#,
        vec!["1"; 100_000].join(",")
    );
    let rank65 = format!(
        r#"{{"a":{{"dtype":"U8","shape":[{}],"data_offsets":[0,1]}}}}"#,
        vec!["1"; 65].join(",")
    );
    let mut cases = cases;
    cases.push(("rank 100000", raw(&deep, &[0])));
    cases.push(("rank 65", raw(&rank65, &[0])));
    for (what, bytes) in cases {
        let e = io::deserialize(&bytes).expect_err(what);
        assert!(is_format(&e), "{what}: {e}");
    }
    let e = io::deserialize(&raw(
        r#"{"a":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}}"#,
        &f4,
    ))
    .unwrap_err();
    assert!(e.to_string().contains("F8_E4M3"), "{e}");
}

/// A file with Tessera's key `key` over the parts of a 2x3 CSR `m` (indptr, indices, data
/// given as i32, i32, f32) and a dense `d`.
fn sparse_file(key: &str, indptr: &[i32], indices: &[i32], data: &[f32]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut entries = Vec::new();
    let parts: [(&str, &str, Vec<u8>); 4] = [
        (
            "m.data",
            "F32",
            data.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
        (
            "m.indices",
            "I32",
            indices.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
        (
            "m.indptr",
            "I32",
            indptr.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
        ("d", "F32", 0.5f32.to_le_bytes().to_vec()),
    ];
    for (name, dt, b) in parts {
        let (s, e) = (bytes.len(), bytes.len() + b.len());
        entries.push(format!(
            r#""{name}":{{"dtype":"{dt}","shape":[{}],"data_offsets":[{s},{e}]}}"#,
            b.len() / 4
        ));
        bytes.extend(b);
    }
    let key = serde_json::to_string(key).unwrap();
    let header = format!(
        r#"{{"__metadata__":{{"tessera":{key}}},{}}}"#,
        entries.join(",")
    );
    raw(&header, &bytes)
}

#[test]
fn f3_tampered_sparse_parts_and_tessera_keys_are_format_errors() {
    let good = r#"{"format":1,"order":["m","d"],"sparse":{"m":{"stype":"csr","shape":[2,3],"canonical":true}}}"#;
    let ck = io::deserialize(&sparse_file(good, &[0, 1, 2], &[2, 0], &[1.0, 2.0])).unwrap();
    assert_eq!(
        ck.get("m").unwrap().to_vec::<f32>().unwrap(),
        [0., 0., 1., 2., 0., 0.]
    );
    let parts: [(&str, &[i32], &[i32]); 5] = [
        ("column out of range", &[0, 1, 2], &[3, 0]),
        ("negative column", &[0, 1, 2], &[-1, 0]),
        ("indptr decreasing", &[0, 2, 1], &[2, 0]),
        ("indptr past nnz", &[0, 1, 9], &[2, 0]),
        ("unsorted columns", &[0, 2, 2], &[2, 0]),
    ];
    for (what, indptr, indices) in parts {
        let e = io::deserialize(&sparse_file(good, indptr, indices, &[1.0, 2.0])).unwrap_err();
        assert!(
            is_format(&e) && e.to_string().contains("sparse tensor \"m\""),
            "{what}: {e}"
        );
    }
    let keys = [
        ("not JSON", "{"),
        (
            "newer format",
            r#"{"format":2,"order":["m","d"],"sparse":{}}"#,
        ),
        ("no order", r#"{"format":1}"#),
        (
            "missing from order",
            r#"{"format":1,"order":["d"],"sparse":{"m":{"stype":"csr","shape":[2,3]}}}"#,
        ),
        (
            "listed twice",
            r#"{"format":1,"order":["m","d","d"],"sparse":{"m":{"stype":"csr","shape":[2,3]}}}"#,
        ),
        (
            "unknown name",
            r#"{"format":1,"order":["m","d","x"],"sparse":{"m":{"stype":"csr","shape":[2,3]}}}"#,
        ),
        (
            "parts left over",
            r#"{"format":1,"order":["d"],"sparse":{}}"#,
        ),
        (
            "unknown stype",
            r#"{"format":1,"order":["m","d"],"sparse":{"m":{"stype":"coo","shape":[2,3]}}}"#,
        ),
        (
            "3-D csr",
            r#"{"format":1,"order":["m","d"],"sparse":{"m":{"stype":"csr","shape":[2,3,1]}}}"#,
        ),
        (
            "wrong shape",
            r#"{"format":1,"order":["m","d"],"sparse":{"m":{"stype":"csr","shape":[5,3]}}}"#,
        ),
        (
            "row_sparse of csr parts",
            r#"{"format":1,"order":["m","d"],"sparse":{"m":{"stype":"row_sparse","shape":[2,3]}}}"#,
        ),
        (
            "bad shape",
            r#"{"format":1,"order":["m","d"],"sparse":{"m":{"stype":"csr","shape":"2x3"}}}"#,
        ),
    ];
    for (what, key) in keys {
        let e = io::deserialize(&sparse_file(key, &[0, 1, 2], &[2, 0], &[1.0, 2.0])).unwrap_err();
        assert!(is_format(&e), "{what}: {e}");
    }
}

fn os_kind(e: &TesseraError) -> Option<(std::io::ErrorKind, Option<i32>, PathBuf)> {
    match e.kind() {
        ErrorKind::Io(IoFacts::Os {
            kind, errno, path, ..
        }) => Some((*kind, *errno, path.clone())),
        _ => None,
    }
}

#[test]
fn f3_os_failures_name_the_path_and_errno() {
    let dir = TempDir::new("os");
    let missing = dir.path("missing.safetensors");
    let e = io::load(&missing).unwrap_err();
    assert_eq!(
        os_kind(&e),
        Some((std::io::ErrorKind::NotFound, Some(2), missing.clone())) // ENOENT
    );
    assert!(e.to_string().contains("missing.safetensors"), "{e}");
    let e = io::load(&dir.0).unwrap_err();
    assert_eq!(os_kind(&e).unwrap().1, Some(21), "{e}"); // EISDIR
    let t = Tensor::zeros(&[1], DType::F32).unwrap();
    let e = io::save(
        dir.path("no/such/dir.safetensors"),
        &[("t", &t)],
        &BTreeMap::new(),
    )
    .unwrap_err();
    assert_eq!(os_kind(&e).unwrap().0, std::io::ErrorKind::NotFound, "{e}");
    assert!(dir.entries().is_empty());
}

#[test]
#[cfg(unix)]
fn f4_saves_replace_atomically_keep_permissions_and_follow_links() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let dir = TempDir::new("atomic");
    let p = dir.path("ck.safetensors");
    let a = Tensor::ones(&[3], DType::F64).unwrap();
    io::save(&p, &[("a", &a)], &BTreeMap::new()).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = std::fs::read(&p).unwrap();
    // A failed save leaves the old file and no temporary file behind.
    let s = a
        .view(&[1, 3])
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    s.as_csr().unwrap().indptr().fill_(7).unwrap();
    assert!(io::save(&p, &[("s", &s)], &BTreeMap::new()).is_err());
    assert_eq!(std::fs::read(&p).unwrap(), before);
    assert_eq!(dir.entries(), ["ck.safetensors"]);
    // A successful save replaces the contents and keeps the permissions.
    let b = Tensor::zeros(&[2], DType::I8).unwrap();
    io::save(&p, &[("b", &b)], &BTreeMap::new()).unwrap();
    assert_eq!(io::load(&p).unwrap().names().collect::<Vec<_>>(), ["b"]);
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(dir.entries(), ["ck.safetensors"]);
    // Through a symbolic link: the link stays, its target gets the new contents.
    let link = dir.path("latest.safetensors");
    symlink(&p, &link).unwrap();
    io::save(&link, &[("a", &a)], &BTreeMap::new()).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(io::load(&p).unwrap().names().collect::<Vec<_>>(), ["a"]);
    assert!(Path::new(&link).exists());
}
