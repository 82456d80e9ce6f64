//! Creating the Array API's patterned tensors: `eye` (ones on a diagonal) and `linspace`
//! (evenly spaced values).

use super::Tensor;
use crate::dtype::{DType, Scalar};
use crate::error::{ErrorKind, Result};
use crate::with_dtype;

impl Tensor {
    /// A `rows x cols` tensor of zeros with ones on diagonal `k` (0: main, positive: above).
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let e = Tensor::eye(2, 3, 1, DType::I32).unwrap();
    /// assert_eq!(e.to_vec::<i32>().unwrap(), vec![0, 1, 0, 0, 0, 1]);
    /// ```
    pub fn eye(rows: usize, cols: usize, k: i64, dtype: DType) -> Result<Tensor> {
        let t = Tensor::zeros(&[rows, cols], dtype)?;
        with_dtype!(dtype, T => {
            let one = Scalar::Int(1).to::<T>();
            let mut w = t.dense_storage()?.write_as::<T>();
            for r in 0..rows {
                let c = r as i128 + k as i128;
                if (0..cols as i128).contains(&c) {
                    w[r * cols + c as usize] = one;
                }
            }
        });
        Ok(t)
    }

    /// `num` evenly spaced values from `start` to `stop` (included when `endpoint`), computed
    /// in float64 as `start + i * step` (the last one exactly `stop`) and converted to
    /// `dtype`.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::linspace(0.0, 1.0, 5, true, DType::F64).unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// ```
    pub fn linspace(
        start: f64,
        stop: f64,
        num: usize,
        endpoint: bool,
        dtype: DType,
    ) -> Result<Tensor> {
        let div = if endpoint { num.saturating_sub(1) } else { num };
        let step = if div > 0 {
            (stop - start) / div as f64
        } else {
            0.0
        };
        let mut v = crate::storage::try_with_capacity::<f64>(num)?;
        v.extend((0..num).map(|i| start + i as f64 * step));
        if endpoint && num > 1 {
            v[num - 1] = stop;
        }
        if !dtype.is_float() && v.iter().any(|x| !x.is_finite()) {
            return Err(ErrorKind::InvalidArgument(
                "linspace: non-finite values for an integer dtype".into(),
            )
            .into());
        }
        Tensor::from_vec(v, &[num])?.astype(dtype)
    }
}
