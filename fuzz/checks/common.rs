//! Shared by the fuzz checks: a reader of fuzzer bytes and a small tensor whose elements
//! are their own flat positions, so a view's values tell which elements it selected.

use tessera::{DType, Tensor};

/// Reads fixed-size values from the fuzzer's bytes (zeros once they run out).
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    pub fn i64(&mut self) -> i64 {
        let mut w = [0u8; 8];
        for b in &mut w {
            *b = self.u8();
        }
        i64::from_le_bytes(w)
    }

    /// A value that is mostly small, sometimes an extreme: the edges the decoders must refuse.
    pub fn edgy(&mut self) -> i64 {
        match self.u8() % 8 {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => self.i64(),
            _ => i64::from(self.u8() as i8),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A tensor of at most 4 dims of at most 5 positions each (shape from the bytes), holding
/// 0, 1, 2, … in row-major order.
pub fn numbered(bytes: &mut Bytes) -> Tensor {
    let rank = usize::from(bytes.u8() % 5);
    let shape: Vec<usize> = (0..rank).map(|_| usize::from(bytes.u8() % 6)).collect();
    let n: usize = shape.iter().product();
    Tensor::arange(0, n as i64, 1, DType::I64)
        .and_then(|t| t.reshape(&shape.iter().map(|&d| d as isize).collect::<Vec<_>>()))
        .expect("a small numbered tensor")
}

/// Every element of a view must be one of the base's (`0..n`), and a view of a view of
/// distinct positions cannot repeat an element unless a dim has stride 0 (none here).
pub fn check_view(view: &Tensor, base_len: usize) {
    let values = view.to_vec::<i64>().expect("a view materialises");
    assert_eq!(values.len(), view.numel());
    for v in &values {
        assert!(
            *v >= 0 && (*v as usize) < base_len.max(1),
            "element {v} outside the base"
        );
    }
    let mut seen = values.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), values.len(), "a view repeated an element");
}
