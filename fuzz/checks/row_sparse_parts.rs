//! The row-sparse checked constructor (docs/design.md O4): any rows and data give an array
//! or a typed error, never a panic; an array that is built densifies to its rows placed by a
//! naive loop.
use tessera::{RowSparseArray, Tensor};

use super::common::Bytes;

/// One input: panics (fails) when the property above does not hold.
pub fn check(data: &[u8]) {
    let mut bytes = Bytes(data);
    let rank = usize::from(bytes.u8() % 4);
    let shape: Vec<usize> = (0..rank).map(|_| usize::from(bytes.u8() % 6)).collect();
    let rows = usize::from(bytes.u8() % 6);
    let indices: Vec<i64> = (0..rows)
        .map(|_| match bytes.u8() % 16 {
            0 => bytes.edgy(),
            v => i64::from(v) - 2,
        })
        .collect();
    // The data block: usually `[rows, shape[1..]]`, sometimes a wrong shape.
    let mut block: Vec<usize> = vec![rows];
    block.extend(shape.iter().skip(1));
    if bytes.u8() % 6 == 0 && !block.is_empty() {
        let at = usize::from(bytes.u8()) % block.len();
        block[at] += 1;
    }
    let n: usize = block.iter().product();
    let values: Vec<f32> = (0..n).map(|i| i as f32 + 1.0).collect();
    let data = Tensor::from_vec(values.clone(), &block).expect("data block");
    let Ok(a) = RowSparseArray::try_new(&shape, indices.clone(), data) else {
        return;
    };
    let row_len: usize = shape.iter().skip(1).product();
    let mut want = vec![0.0f32; shape.iter().product()];
    for (k, &r) in indices.iter().enumerate() {
        let r = r as usize;
        want[r * row_len..(r + 1) * row_len]
            .copy_from_slice(&values[k * row_len..(k + 1) * row_len]);
    }
    let got = a.to_dense().expect("densify").to_vec::<f32>().expect("f32");
    assert_eq!(got, want);
}
