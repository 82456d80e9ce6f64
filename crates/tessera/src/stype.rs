//! Storage types: how a tensor stores its elements (docs/design.md O2).

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
}

impl StorageType {
    /// MXNet's name: `default`, `csr`, `row_sparse`.
    pub fn name(self) -> &'static str {
        match self {
            StorageType::Default => "default",
            StorageType::Csr => "csr",
            StorageType::RowSparse => "row_sparse",
        }
    }
}

impl std::str::FromStr for StorageType {
    type Err = crate::TesseraError;

    /// Parses `default`, `csr` or `row_sparse`.
    fn from_str(s: &str) -> crate::Result<StorageType> {
        match s {
            "default" => Ok(StorageType::Default),
            "csr" => Ok(StorageType::Csr),
            "row_sparse" => Ok(StorageType::RowSparse),
            _ => Err(crate::ErrorKind::InvalidArgument(format!(
                "unknown storage type {s:?} (expected 'default', 'csr' or 'row_sparse')"
            ))
            .into()),
        }
    }
}

impl fmt::Display for StorageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
