//! The CSR checked constructors (docs/design.md O4): any parts give a matrix or a typed
//! error, never a panic; a matrix that is built densifies to what a naive loop over its
//! parts gives.
use tessera::{CsrMatrix, Tensor};

use super::common::Bytes;

/// One input: panics (fails) when the property above does not hold.
pub fn check(data: &[u8]) {
    let mut bytes = Bytes(data);
    let shape = [usize::from(bytes.u8() % 7), usize::from(bytes.u8() % 7)];
    let ptr_len = usize::from(bytes.u8() % 9);
    let nnz = usize::from(bytes.u8() % 12);
    let small = |b: &mut Bytes| match b.u8() % 16 {
        0 => b.edgy(),
        v => i64::from(v) - 2,
    };
    let indptr: Vec<i64> = (0..ptr_len).map(|_| small(&mut bytes)).collect();
    let indices: Vec<i64> = (0..nnz).map(|_| small(&mut bytes)).collect();
    let data_len = if bytes.u8() % 8 == 0 { nnz + 1 } else { nnz };
    let values: Vec<f64> = (0..data_len).map(|i| i as f64 + 1.0).collect();
    let data = Tensor::from_vec(values.clone(), &[data_len]).expect("1-D data");
    let canonical = bytes.u8() % 2 == 0;
    let built = if canonical {
        CsrMatrix::try_new(shape, indptr.clone(), indices.clone(), data)
    } else {
        CsrMatrix::try_new_noncanonical(shape, indptr.clone(), indices.clone(), data)
    };
    let Ok(m) = built else { return };
    // Naive densify. Duplicate columns (allowed only when non-canonical) keep the last stored
    // value (docs/design.md O4; SciPy would sum them).
    let mut want = vec![0.0f64; shape[0] * shape[1]];
    for r in 0..shape[0] {
        for k in indptr[r] as usize..indptr[r + 1] as usize {
            want[r * shape[1] + indices[k] as usize] = values[k];
        }
    }
    let got = m.to_dense().expect("densify").to_vec::<f64>().expect("f64");
    assert_eq!(got, want);
}
