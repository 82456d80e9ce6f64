//! Raw access for foreign-memory interop (the Python package's `__array_interface__`).

use super::Tensor;

impl Tensor {
    /// The address of the tensor's first element (index `[0, 0, ...]`): the storage's base
    /// pointer plus `offset * itemsize`. Together with [`Tensor::strides`] (in elements) it
    /// describes the view to foreign code such as NumPy.
    ///
    /// The pointer stays valid as long as the storage lives (any handle to it). Reads and
    /// writes through it bypass the storage's reader-writer lock: the caller must not race
    /// them with Tessera writes.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(0, 6, 1, DType::I32).unwrap();
    /// let v = t.as_strided(&[2], &[1], 3).unwrap();
    /// assert_eq!(v.data_ptr() as usize - t.data_ptr() as usize, 3 * 4);
    /// ```
    ///
    /// A sparse tensor has no dense element buffer: its `data_ptr` is null.
    pub fn data_ptr(&self) -> *const u8 {
        match self.dense_storage() {
            Ok(s) => s
                .as_ptr()
                .wrapping_add(self.layout.offset() * self.dtype().itemsize()),
            Err(_) => std::ptr::null(),
        }
    }
}
