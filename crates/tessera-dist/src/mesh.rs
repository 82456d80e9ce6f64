//! Device meshes (docs/design.md D1): ranks arranged as a 1-D or 2-D grid, row-major, with one
//! sub-communicator per mesh axis for the collectives of that axis.

use std::sync::Arc;

use crate::comm::Comm;
use crate::error::{DistError, Result};

/// A 1-D or 2-D arrangement of the ranks of a communicator.
pub struct Mesh {
    shape: Vec<usize>,
    coords: Vec<usize>,
    world: Comm,
    axis_comms: Vec<Comm>,
}

impl std::fmt::Debug for Mesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mesh{:?} at {:?}", self.shape, self.coords)
    }
}

impl Mesh {
    /// A 1-D mesh over every rank of `comm`.
    pub fn line(comm: Comm) -> Arc<Mesh> {
        let n = comm.size();
        Arc::new(Mesh {
            shape: vec![n],
            coords: vec![comm.rank()],
            axis_comms: vec![comm.clone()],
            world: comm,
        })
    }

    /// A mesh of `shape` (1 or 2 axes, product = `comm.size()`), rank `r` at row-major
    /// coordinates. Collective: every rank must call it (2-D meshes split the communicator).
    pub fn new(comm: Comm, shape: &[usize]) -> Result<Arc<Mesh>> {
        let n: usize = shape.iter().product();
        if shape.is_empty() || shape.len() > 2 || n != comm.size() {
            return Err(DistError::Placement(format!(
                "mesh {shape:?} for {} ranks (need 1 or 2 axes whose product is the size)",
                comm.size()
            )));
        }
        if shape.len() == 1 {
            return Ok(Mesh::line(comm));
        }
        let (r, cols) = (comm.rank(), shape[1]);
        let coords = vec![r / cols, r % cols];
        // Axis 0 groups ranks with the same column, axis 1 those with the same row.
        let axis0 = comm.split(coords[1], coords[0])?;
        let axis1 = comm.split(coords[0], coords[1])?;
        Ok(Arc::new(Mesh {
            shape: shape.to_vec(),
            coords,
            world: comm,
            axis_comms: vec![axis0, axis1],
        }))
    }

    /// Ranks along each mesh axis.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// This rank's coordinates.
    pub fn coords(&self) -> &[usize] {
        &self.coords
    }

    /// The communicator of all ranks.
    pub fn world(&self) -> &Comm {
        &self.world
    }

    /// The communicator of the ranks that differ from this one only along mesh axis `axis`.
    pub fn axis_comm(&self, axis: usize) -> &Comm {
        &self.axis_comms[axis]
    }

    /// True when `other` is the same arrangement of the same ranks.
    pub fn same_as(&self, other: &Mesh) -> bool {
        self.shape == other.shape && Arc::ptr_eq(&self.world, &other.world)
    }
}
