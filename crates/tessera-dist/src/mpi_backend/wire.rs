//! What MPI moves and how it is counted (a leaf of the MPI backend: it imports no other part
//! of it): `i32` counts, the dtype each Tessera dtype travels as, reduction ops, dtype dispatch
//! over the dtypes MPI has datatypes for, and return-code checks.

use mpi::collective::SystemOperation;
use tessera::DType;

use crate::error::{DistError, Result};
use crate::sbp::PartialOp;

/// Dispatch over the dtypes MPI has datatypes for (the others are staged first, [`wire`]).
macro_rules! with_mpi_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            tessera::DType::U8 => {
                type $T = u8;
                $body
            }
            tessera::DType::I8 => {
                type $T = i8;
                $body
            }
            tessera::DType::U16 => {
                type $T = u16;
                $body
            }
            tessera::DType::I16 => {
                type $T = i16;
                $body
            }
            tessera::DType::U32 => {
                type $T = u32;
                $body
            }
            tessera::DType::U64 => {
                type $T = u64;
                $body
            }
            tessera::DType::I32 => {
                type $T = i32;
                $body
            }
            tessera::DType::I64 => {
                type $T = i64;
                $body
            }
            tessera::DType::F32 => {
                type $T = f32;
                $body
            }
            tessera::DType::F64 => {
                type $T = f64;
                $body
            }
            d => Err($crate::error::DistError::Comm(format!(
                "dtype {d} must be staged before MPI"
            ))),
        }
    };
}
pub(crate) use with_mpi_dtype;

/// `n` as an MPI count.
pub(crate) fn count(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| {
        DistError::Comm(format!(
            "{n} elements exceed MPI's i32 counts (not chunked yet)"
        ))
    })
}

/// MPI counts and displacements (in elements) of consecutive parts of `counts` elements.
pub(crate) fn counts_displs(counts: &[usize]) -> Result<(Vec<i32>, Vec<i32>)> {
    let c = counts
        .iter()
        .map(|&n| count(n))
        .collect::<Result<Vec<_>>>()?;
    let mut d = Vec::with_capacity(c.len());
    let mut at = 0usize;
    for &n in counts {
        d.push(count(at)?);
        at += n;
    }
    count(at)?;
    Ok((c, d))
}

/// The dtype MPI moves `d` as: MPI has no bool, f16 or bf16 datatypes.
pub(crate) fn wire(d: DType) -> DType {
    match d {
        DType::Bool => DType::U8,
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// MPI's reduction for `o`.
pub(crate) fn op(o: PartialOp) -> SystemOperation {
    match o {
        PartialOp::Sum => SystemOperation::sum(),
        PartialOp::Max => SystemOperation::max(),
        PartialOp::Min => SystemOperation::min(),
    }
}

/// An error unless an MPI call named `what` returned `MPI_SUCCESS` (0).
pub(crate) fn check(what: &str, code: i32) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(DistError::Comm(format!("{what} returned {code}")))
    }
}

/// The dims of a view that matter, innermost first, as (size, stride in elements): size-1
/// dims dropped, and a dim merged into its inner neighbour when the two are contiguous
/// together (so a row-major block of whole rows is one run).
pub(crate) fn runs(shape: &[usize], strides: &[isize]) -> Vec<(usize, isize)> {
    let mut out: Vec<(usize, isize)> = Vec::new();
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n == 1 {
            continue;
        }
        match out.last_mut() {
            Some((m, st)) if s == *st * *m as isize => *m *= n,
            _ => out.push((n, s)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{counts_displs, runs};

    #[test]
    fn runs_merge_contiguous_dims_and_drop_size_one() {
        // A row-major [4, 6] block of whole rows is one run.
        assert_eq!(runs(&[4, 6], &[6, 1]), vec![(24, 1)]);
        // Columns 2..5 of a [4, 6]: 4 runs of 3, 6 apart.
        assert_eq!(runs(&[4, 3], &[6, 1]), vec![(3, 1), (4, 6)]);
        assert_eq!(runs(&[1, 3, 1], &[9, 2, 1]), vec![(3, 2)]);
        assert_eq!(runs(&[2, 1, 3, 4], &[12, 99, 4, 1]), vec![(24, 1)]);
        assert_eq!(runs(&[2, 1, 3, 4], &[24, 12, 4, 1]), vec![(12, 1), (2, 24)]);
        assert_eq!(runs(&[5], &[-1]), vec![(5, -1)]);
        assert_eq!(runs(&[], &[]), vec![]);
    }

    #[test]
    fn counts_and_displacements() {
        assert_eq!(
            counts_displs(&[3, 0, 2]).unwrap(),
            (vec![3, 0, 2], vec![0, 3, 3])
        );
        assert!(counts_displs(&[1 << 31]).is_err());
        assert!(counts_displs(&[1 << 30, 1 << 30]).is_err());
    }
}
