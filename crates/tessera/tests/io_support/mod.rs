//! Helpers shared by the checkpoint tests (`io_checkpoint.rs`, `io_bad_files.rs`).

use std::path::PathBuf;

use tessera::{ErrorKind, IoFacts, TesseraError};

/// A directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("tessera-io-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
    #[allow(dead_code)] // used by one of the two test crates
    pub fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether `e` is a format error (a bad file's contents).
pub fn is_format(e: &TesseraError) -> bool {
    matches!(e.kind(), ErrorKind::Io(IoFacts::Format { .. }))
}

/// A safetensors file from a header (JSON text) and data bytes.
pub fn raw(header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.as_bytes().to_vec();
    h.resize(h.len().next_multiple_of(8), b' ');
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend(h);
    out.extend_from_slice(data);
    out
}
