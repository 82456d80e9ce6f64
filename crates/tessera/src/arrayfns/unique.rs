//! The set functions: the distinct elements of the flattened input in sorted order
//! ([`nan_last`]), with, for `unique_all`, the index of each one's first occurrence, the
//! inverse indices (the input's shape, each element's position among the values) and the
//! counts. Equal elements are those that compare equal (`-0.0 == 0.0`, the first occurrence's
//! sign is kept); every NaN is distinct, as the standard says (NumPy 2 would merge them).

use rayon::prelude::*;

use super::lanes::{fill, parallel, read};
use super::radix;
use super::sort::{is_nan, nan_last};
use crate::dtype::Element;
use crate::error::Result;
use crate::storage::{try_vec, try_with_capacity};
use crate::tensor::Tensor;
use crate::with_dtype;

/// Whether sorted neighbours `a`, `b` are the same set element.
#[inline]
fn same<T: Element>(a: &T, b: &T) -> bool {
    !is_nan(a) && nan_last(a, b).is_eq()
}

/// The four outputs of `unique_all`, as vectors.
struct Groups<T> {
    values: Vec<T>,
    indices: Vec<i64>,
    inverse: Vec<i64>,
    counts: Vec<i64>,
}

fn groups<T: Element>(v: &[T]) -> Result<Groups<T>> {
    let mut pairs: Vec<(T, i64)> = try_with_capacity(v.len())?;
    let cmp = |a: &(T, i64), b: &(T, i64)| nan_last(&a.0, &b.0).then(a.1.cmp(&b.1));
    if let Some(key) = radix::key_fn::<T>() {
        let mut order = try_vec(0i64, v.len())?;
        radix::argsort(v, key, false, &mut order)?;
        pairs.extend(order.iter().map(|&i| (v[i as usize], i)));
    } else if parallel(v.len()) {
        pairs.extend(v.iter().copied().zip(0i64..));
        pairs.par_sort_unstable_by(cmp);
    } else {
        pairs.extend(v.iter().copied().zip(0i64..));
        pairs.sort_unstable_by(cmp);
    }
    let mut g = Groups {
        values: Vec::new(),
        indices: Vec::new(),
        inverse: try_with_capacity(v.len())?,
        counts: Vec::new(),
    };
    g.inverse.resize(v.len(), 0);
    for (k, &(x, i)) in pairs.iter().enumerate() {
        if k == 0 || !same(&pairs[k - 1].0, &x) {
            g.values.push(x);
            g.indices.push(i);
            g.counts.push(0);
        }
        let last = g.counts.len() - 1;
        g.counts[last] += 1;
        g.inverse[i as usize] = last as i64;
    }
    Ok(g)
}

impl Tensor {
    /// The dense kernel of [`Tensor::unique_values`].
    pub(crate) fn unique_values_dense(&self) -> Result<Tensor> {
        let x = self.contiguous_dense()?;
        with_dtype!(self.dtype(), T => {
            let mut v: Vec<T> = read::<T, _>(&x, |s| -> Result<Vec<T>> {
                let mut v = try_with_capacity(s.len())?;
                v.extend_from_slice(s);
                Ok(v)
            })??;
            if let Some(key) = radix::key_fn::<T>() {
                let par = parallel(v.len());
                radix::sort_by_key(&mut v, key, false, par)?;
            } else if parallel(v.len()) {
                v.par_sort_unstable_by(nan_last);
            } else {
                v.sort_unstable_by(nan_last);
            }
            v.dedup_by(|b, a| same(a, b));
            Tensor::from_slice(&v, &[v.len()])
        })
    }

    /// The dense kernel of [`Tensor::unique_all`]: values, indices, inverse indices, counts.
    pub(crate) fn unique_all_dense(&self) -> Result<[Tensor; 4]> {
        let x = self.contiguous_dense()?;
        with_dtype!(self.dtype(), T => {
            let g = read::<T, _>(&x, groups)??;
            let k = g.values.len();
            Ok([
                Tensor::from_slice(&g.values, &[k])?,
                Tensor::from_slice(&g.indices, &[k])?,
                fill::<i64>(self.shape(), |d| {
                    d.copy_from_slice(&g.inverse);
                    Ok(())
                })?,
                Tensor::from_slice(&g.counts, &[k])?,
            ])
        })
    }
}
