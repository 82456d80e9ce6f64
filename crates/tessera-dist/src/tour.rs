//! The distributed section of the tour: 4 in-process ranks.

use tessera::{DType, Tensor};

use crate::error::Result;
use crate::global::GlobalTensor;
use crate::mesh::Mesh;
use crate::ops;
use crate::sbp::{fmt_nd, Sbp};
use crate::thread::run_ranks;

/// Runs 4 in-process ranks: expands a split `[5, 1]` tensor to `[5, 3]` (D4: ranks 1–3 hold
/// `[1, 3]`), sums it to a Partial, boxes back to Broadcast, and prints each step.
pub fn tour_section() -> tessera::Result<()> {
    let results = run_ranks(4, |comm| -> Result<Vec<String>> {
        let mesh = Mesh::line(comm);
        let mut lines = Vec::new();
        let full = Tensor::arange(0, 5, 1, DType::F32)?.reshape(&[5, 1])?;
        let x = GlobalTensor::from_logical(&full, &[Sbp::Split(0)], &mesh)?;
        let y = ops::expand(&x, &[5, 3])?;
        lines.push(format!(
            "expand {:?} {} -> {:?} {}: local {:?} -> {:?}",
            x.logical_shape(),
            fmt_nd(x.sbp()),
            y.logical_shape(),
            fmt_nd(y.sbp()),
            x.local().shape(),
            y.local().shape()
        ));
        let s = ops::reduce(&y, "sum", Some(&[0]), false)?;
        lines.push(format!(
            "sum over the split axis -> {} local {:?}",
            fmt_nd(s.sbp()),
            s.local().to_vec::<f32>()?
        ));
        let b = s.to_sbp(&[Sbp::Broadcast])?;
        lines.push(format!(
            "boxed to {}: {:?}",
            fmt_nd(b.sbp()),
            b.local().to_vec::<f32>()?
        ));
        Ok(lines)
    });
    println!("== distributed: 4 in-process ranks");
    for (rank, r) in results.into_iter().enumerate() {
        let lines = r
            .map_err(|e| {
                tessera::TesseraError::from(tessera::ErrorKind::InvalidArgument(e.to_string()))
            })?
            .map_err(|e| {
                tessera::TesseraError::from(tessera::ErrorKind::InvalidArgument(e.to_string()))
            })?;
        for l in lines {
            println!("rank {rank}: {l}");
        }
    }
    Ok(())
}
