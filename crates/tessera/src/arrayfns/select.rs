//! `where(condition, x1, x2)`: elements of `x1` where `condition` is true, else of `x2`, with
//! the three inputs broadcast together and `x1`, `x2` promoted to their result type. A
//! non-bool condition counts as true where it is non-zero (NaN is true), as in NumPy.
//! Operands that are one flat run (`tensor::flat_select::select_flat`) are selected in one pass;
//! others are converted, broadcast and made contiguous first.

use std::hint::select_unpredictable;

use rayon::prelude::*;

use super::lanes::{fill, parallel, read};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::simd::with_simd;
use crate::layout::broadcast_shapes;
use crate::promote::result_type;
use crate::tensor::flat_select::select_flat;
use crate::tensor::Tensor;
use crate::with_dtype;

/// `t` converted to `dtype`, broadcast to `dims` and made C-contiguous (a copy only when
/// one of the three is needed).
fn prepared(t: &Tensor, dtype: DType, dims: &[usize]) -> Result<Tensor> {
    let t = if t.dtype() == dtype {
        t.clone()
    } else {
        t.astype_contiguous(dtype)?
    };
    let t = if t.shape() == dims {
        t
    } else {
        t.broadcast_to_dense(dims)?
    };
    t.contiguous_dense()
}

impl Tensor {
    /// The dense kernel of [`Tensor::where_`].
    pub(crate) fn where_dense(cond: &Tensor, x1: &Tensor, x2: &Tensor) -> Result<Tensor> {
        let dt = result_type(x1.dtype(), x2.dtype())?;
        if cond.dtype() == DType::Bool && x1.dtype() == dt && x2.dtype() == dt {
            // Operands that are one flat run (or single elements) need no broadcast copies.
            let flat = with_dtype!(dt, T => select_flat::<T>(cond, x1, x2)?);
            if let Some(out) = flat {
                return Ok(out);
            }
        }
        let dims = broadcast_shapes(&broadcast_shapes(cond.shape(), x1.shape())?, x2.shape())?;
        let c = prepared(cond, DType::Bool, &dims)?;
        let a = prepared(x1, dt, &dims)?;
        let b = prepared(x2, dt, &dims)?;
        // The reads below nest one read guard per operand: two on one storage would deadlock
        // with a writer queued between them (parking_lot's fair lock), so an operand that
        // shares storage with an earlier one is read from a copy (`where(x > 0, x, x)`).
        let a = if a.shares_storage(&c) {
            a.copy_dense()?
        } else {
            a
        };
        let b = if b.shares_storage(&c) || b.shares_storage(&a) {
            b.copy_dense()?
        } else {
            b
        };
        with_dtype!(dt, T => {
            read::<bool, _>(&c, |c| {
                read::<T, _>(&a, |a| {
                    read::<T, _>(&b, |b| {
                        fill::<T>(&dims, |out| {
                            const CHUNK: usize = 1 << 14;
                            let run = |(k, o): (usize, &mut [T])| {
                                let r = k * CHUNK..k * CHUNK + o.len();
                                let ins = c[r.clone()].iter().zip(&a[r.clone()]).zip(&b[r]);
                                with_simd(|| {
                                    for (o, ((&c, &a), &b)) in o.iter_mut().zip(ins) {
                                        *o = select_unpredictable(c, a, b);
                                    }
                                })
                            };
                            if parallel(out.len()) {
                                out.par_chunks_mut(CHUNK).enumerate().for_each(run);
                            } else {
                                out.chunks_mut(CHUNK).enumerate().for_each(run);
                            }
                            Ok(())
                        })
                    })
                })
            })???
        })
    }
}
