//! Shared generators for the sparse tests (included with `mod`-less `include!`).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tessera::sparse::csr_from_triplets;
use tessera::{SparseParts, StorageType, Tensor};

/// The densities the issue asks for.
pub const DENSITIES: [f64; 4] = [0.0, 0.01, 0.5, 1.0];

/// A random `rows x cols` f64 matrix with small integer values (exact arithmetic) and its
/// CSR form: canonical (cast from dense) or builder-made (unsorted triples, duplicates
/// split in two, explicit zeros stored).
pub fn random_csr(
    rows: usize,
    cols: usize,
    density: f64,
    seed: u64,
    builder: bool,
) -> (Tensor, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut dense = vec![0.0f64; rows * cols];
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..rows {
        for j in 0..cols {
            if rng.random::<f64>() < density {
                let x = rng.random_range(1..5) as f64 * if rng.random() { 1.0 } else { -1.0 };
                dense[i * cols + j] = x;
                let half = (x / 2.0).floor();
                for part in [half, x - half] {
                    r.push(i as i64);
                    c.push(j as i64);
                    v.push(part);
                }
            } else if builder && rng.random::<f64>() < 0.1 {
                r.push(i as i64);
                c.push(j as i64);
                v.push(0.0); // an explicitly stored zero
            }
        }
    }
    let t = if builder {
        // Shuffle the triples.
        let n = r.len();
        for k in (1..n).rev() {
            let s = rng.random_range(0..=k);
            r.swap(k, s);
            c.swap(k, s);
            v.swap(k, s);
        }
        let m = csr_from_triplets([rows, cols], &r, &c, &v).unwrap();
        Tensor::from_sparse_parts(SparseParts::Csr(m)).unwrap()
    } else {
        Tensor::from_vec(dense.clone(), &[rows, cols])
            .unwrap()
            .cast_storage(StorageType::Csr)
            .unwrap()
    };
    (t, dense)
}

/// A random row-sparse tensor of shape `[rows, cols]` (rows kept with probability
/// `density`; kept rows may hold zeros).
pub fn random_row_sparse(rows: usize, cols: usize, density: f64, seed: u64) -> (Tensor, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut dense = vec![0.0f64; rows * cols];
    let (mut ids, mut block) = (Vec::new(), Vec::new());
    for i in 0..rows {
        if rng.random::<f64>() < density {
            ids.push(i as i64);
            for j in 0..cols {
                let x = rng.random_range(-3..4) as f64;
                dense[i * cols + j] = x;
                block.push(x);
            }
        }
    }
    let b = Tensor::from_vec(block, &[ids.len(), cols]).unwrap();
    let r = tessera::RowSparseArray::try_new(&[rows, cols], ids, b).unwrap();
    (
        Tensor::from_sparse_parts(SparseParts::RowSparse(r)).unwrap(),
        dense,
    )
}

/// Equal up to a relative tolerance; NaNs equal NaNs.
pub fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-12 * (1.0 + y.abs())
        })
}
