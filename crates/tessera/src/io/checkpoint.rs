//! [`Checkpoint`]: what [`super::load`] returns.

use std::collections::BTreeMap;

use crate::tensor::Tensor;

/// Named tensors in order, and a string-to-string metadata map: the contents of a
/// safetensors file ([`super::load`], [`super::deserialize`]).
///
/// The order is the one they were saved in by [`super::save`]; for a file written by another
/// program it is the order of their data in the file. Sparse tensors come back sparse.
///
/// ```
/// use std::collections::BTreeMap;
/// use tessera::{io, DType, Tensor};
/// let w = Tensor::ones(&[2, 2], DType::F32).unwrap();
/// let b = Tensor::zeros(&[2], DType::F32).unwrap();
/// let bytes = io::serialize(&[("w", &w), ("b", &b)], &BTreeMap::new()).unwrap();
/// let ckpt = io::deserialize(&bytes).unwrap();
/// assert_eq!(ckpt.names().collect::<Vec<_>>(), ["w", "b"]);
/// assert_eq!(ckpt.get("b").unwrap().shape(), &[2]);
/// assert!(ckpt.get("missing").is_none());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Checkpoint {
    /// The tensors with their names, in order.
    pub tensors: Vec<(String, Tensor)>,
    /// The file's metadata (its `__metadata__` map), without Tessera's own `tessera` key.
    pub metadata: BTreeMap<String, String>,
}

impl Checkpoint {
    /// The tensor named `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors
            .iter()
            .find_map(|(n, t)| (n == name).then_some(t))
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.iter().map(|(n, _)| n.as_str())
    }

    /// Number of tensors.
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// True when there is no tensor.
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }
}
