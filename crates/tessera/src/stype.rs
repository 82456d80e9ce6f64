//! Storage types: how a tensor stores its elements (DESIGN O2).

use std::fmt;

/// How a tensor stores its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StorageType {
    /// Dense, strided storage.
    Default,
    /// Compressed sparse rows (2-D).
    Csr,
    /// A dense block of selected rows plus their sorted row indices.
    RowSparse,
    /// Test-only stand-in for a non-default storage type: a dense tensor tagged as
    /// non-default, cast to dense by dropping the tag. It exists so the dispatch and fallback
    /// machinery can be tested before the sparse types have kernels.
    TestSparse,
}

impl StorageType {
    /// MXNet's name: `default`, `csr`, `row_sparse`.
    pub fn name(self) -> &'static str {
        match self {
            StorageType::Default => "default",
            StorageType::Csr => "csr",
            StorageType::RowSparse => "row_sparse",
            StorageType::TestSparse => "test_sparse",
        }
    }
}

impl fmt::Display for StorageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
