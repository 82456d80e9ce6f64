//! Files: checkpoints of named tensors in the safetensors format ([`save`], [`load`],
//! [`serialize`], [`deserialize`]) and single arrays in NumPy's `.npy` format ([`save_npy`],
//! [`load_npy`]).
//!
//! Layer: the top of the core crate, above `sparse` and `tensor`; nothing in the crate imports
//! it.
//!
//! What is written is a tensor's logical elements, row-major and little-endian, whatever its
//! layout (a transposed, flipped, sliced or expanded view is saved as the array it shows).
//! Every dtype round-trips through safetensors; `.npy` has every dtype but bfloat16.
//! Sparse tensors are saved as ordinary dense parts plus a metadata key (`convention.rs`), so
//! other safetensors readers can still read the file.
//!
//! Reading trusts nothing in a file: sizes, offsets, dtypes and sparse parts are checked, and
//! a bad file is [`ErrorKind::Io`](crate::ErrorKind::Io) with
//! [`IoFacts::Format`](crate::IoFacts::Format), never a panic or an abort. No buffer is
//! sized past the file's length, and buffers are allocated fallibly (docs/design.md H1).
//! OS failures are [`IoFacts::Os`](crate::IoFacts::Os), with the path and the OS error number.
//! Writes replace the destination atomically (`file.rs`).
//!
//! ```
//! use std::collections::BTreeMap;
//! use tessera::{io, DType, StorageType, Tensor};
//! let dir = std::env::temp_dir();
//! let path = dir.join(format!("tessera-doc-mod-{}.safetensors", std::process::id()));
//! let w = Tensor::arange(0, 12, 1, DType::F32).unwrap().view(&[3, 4]).unwrap();
//! let emb = w.cast_storage(StorageType::RowSparse).unwrap();
//! io::save(&path, &[("w", &w), ("emb", &emb)], &BTreeMap::new()).unwrap();
//! let ckpt = io::load(&path).unwrap();
//! assert_eq!(ckpt.names().collect::<Vec<_>>(), ["w", "emb"]);
//! assert_eq!(ckpt.get("emb").unwrap().stype(), StorageType::RowSparse);
//! assert_eq!(ckpt.get("emb").unwrap().to_vec::<f32>().unwrap(), w.to_vec::<f32>().unwrap());
//! std::fs::remove_file(&path).unwrap();
//! ```

mod checkpoint;
mod convention;
mod elements;
mod file;
mod npy;
mod npy_header;
mod origin;
mod safetensors_file;

pub use checkpoint::Checkpoint;
pub use convention::KEY as METADATA_KEY;
pub use npy::{load_npy, save_npy};
pub use safetensors_file::{deserialize, load, save, serialize};
