//! The ring-buffer operator (seed 000, docs/design.md O5): remember the last `B` positions seen along
//! an axis.
//!
//! One step takes an `input` with `N <= B` positions along `axis` and a `buffer` with `B`; every
//! other dim must agree. After the step the buffer equals the seed's two loops: shift left by
//! `N` along the axis, then write the input into the last `N` positions (oldest first).
//!
//! # Design: O(N) per step
//!
//! The literal shift moves `B - N` positions per step. Here the state is a C-contiguous storage
//! with `2B` positions along the axis, kept *double written*: logical ring slot `j` (`0 <= j <
//! B`) is stored at physical positions `j` and `j + B`. With window start `w`, the physical range
//! `[w, w + B)` is the buffer oldest-first, a zero-copy strided view of the state. A step writes
//! `input[k]` into slot `(w + k) mod B` at both physical positions (at most two
//! [`Tensor::assign`] calls, one per contiguous run of slots, each writing both copies through a
//! view with a size-2 dim of stride `B`), then moves `w` to `(w + N) mod B`. The step costs
//! O(N) along the axis; the state holds `2 B × rest` elements.
//!
//! # Windows are views
//!
//! A window ([`RingBuffer::push`], [`RingBuffer::window`], [`ring_buffer_step`] on a ring) is a
//! view of the state, like a NumPy view of an array that is later written: a later step
//! overwrites the slots it sees, so an old window handle shows a mix of old and new data. Use
//! `window.copy()` for a snapshot. Do not write through a window (e.g. `assign`, `fill_`): that
//! writes only one of the two copies of a slot and corrupts later windows.
//!
//! # Where the ring lives
//!
//! A ring's geometry and window start are owned by its state: they are the state storage's
//! attachment (the tensor layer's `Attachment`), which every view of the state carries and
//! which is dropped with the last of them. So [`ring_buffer_step`] recognises a window from the
//! buffer handle itself (no global table keyed by storage address, nothing to purge), and a
//! copy of a window, which has new storage, is an ordinary dense buffer.
//!
//! Forward only: the operator has no gradient (the registry declares none).

use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::autograd;
use crate::dtype::DType;
use crate::error::{DTypeFacts, ErrorKind, Result};
use crate::layout::{normalize_axis, Layout};
use crate::shape::Shape;
use crate::tensor::Tensor;

/// Geometry and position of one ring: the attachment of its state storage (see the module
/// docs). Holds no reference to the storage, so there is no reference cycle.
struct Ring {
    /// Normalised axis.
    axis: usize,
    /// Buffer length `B` along the axis.
    len: usize,
    /// Window start `w` (`0 <= w < B`, or 0 when `B == 0`).
    start: usize,
    /// Element stride of the state along the axis.
    axis_stride: usize,
    /// The window's shape: buffer dims with the state's strides.
    window: Shape,
}

impl Ring {
    fn window_layout(&self, start: usize) -> Layout {
        Layout::new(self.window.clone(), start * self.axis_stride)
    }

    /// The current window as a view of `state` (any tensor on the state storage, which is
    /// dense). In bounds by construction: `start + B <= 2B` positions along the axis.
    fn window_of(&self, state: &Tensor) -> Result<Tensor> {
        state.with_layout(self.window_layout(self.start))
    }

    /// True when `layout` is a window of this ring (for any start).
    fn is_window(&self, layout: &Layout) -> bool {
        let (off, s) = (layout.offset(), self.axis_stride);
        *layout.shape() == self.window
            && off % s == 0
            && (off / s < self.len || (self.len == 0 && off == 0))
    }

    /// One O(N) step: `input[k]` goes to slot `(w + k) mod B` at both physical positions.
    fn step(&mut self, state: &Tensor, input: &Tensor) -> Result<Tensor> {
        let n = check_input(input, self.window.dims(), self.axis, state.dtype())?;
        if n > 0 {
            // V7: an input that is itself a view of this state is read before any write.
            let input = if input.shares_storage(state) {
                input.copy_dense()?
            } else {
                input.clone()
            };
            let first = n.min(self.len - self.start);
            self.write_slots(state, self.start, &input, 0, first)?;
            self.write_slots(state, 0, &input, first, n - first)?;
            self.start = (self.start + n) % self.len;
        }
        self.window_of(state)
    }

    /// Writes `input[from..from + count]` (along the axis) into slots `[slot, slot + count)`,
    /// both copies at once: the destination view has a size-2 dim of stride `B` (in positions)
    /// just before the axis and the source is broadcast along it. `slot + count <= B`.
    fn write_slots(
        &self,
        state: &Tensor,
        slot: usize,
        input: &Tensor,
        from: usize,
        count: usize,
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        let rank = self.window.rank();
        let mut dims = Vec::with_capacity(rank + 1);
        let mut strides = Vec::with_capacity(rank + 1);
        for (i, (&d, &s)) in self
            .window
            .dims()
            .iter()
            .zip(self.window.strides())
            .enumerate()
        {
            if i == self.axis {
                dims.extend([2, count]);
                strides.extend([(self.len * self.axis_stride) as isize, s]);
            } else {
                dims.push(d);
                strides.push(s);
            }
        }
        let dst = state.as_strided_dense(&dims, &strides, slot * self.axis_stride)?;
        let src = input
            .narrow_dense(self.axis as isize, from, count)?
            .unsqueeze_dense(self.axis as isize)?;
        dst.assign(&src)
    }
}

/// Creates a zero state for a buffer of `buffer_dims` along `axis` (normalised) and returns
/// the state tensor (all `2B` positions), which owns its ring as its storage's attachment.
fn create(buffer_dims: &[usize], axis: usize, dtype: DType) -> Result<(Tensor, Arc<Mutex<Ring>>)> {
    let len = buffer_dims[axis];
    let mut state_dims = buffer_dims.to_vec();
    state_dims[axis] = len.checked_mul(2).ok_or_else(|| {
        ErrorKind::ShapeOverflow(format!("ring_buffer: 2 x {len} positions overflow"))
    })?;
    let state = Tensor::zeros(&state_dims, dtype)?;
    let strides = state.strides().to_vec();
    let ring = Arc::new(Mutex::new(Ring {
        axis,
        len,
        start: 0,
        axis_stride: strides[axis] as usize,
        window: Shape::new(buffer_dims, &strides)?,
    }));
    let state = state.with_attachment(ring.clone())?;
    Ok((state, ring))
}

/// The ring whose state `t` is a view of, if any.
fn ring_of(t: &Tensor) -> Option<&Mutex<Ring>> {
    t.attachment()?.downcast_ref::<Mutex<Ring>>()
}

/// Checks `input` against a buffer of `buffer_dims` along `axis` and returns `N`.
fn check_input(input: &Tensor, buffer_dims: &[usize], axis: usize, dtype: DType) -> Result<usize> {
    if input.dtype() != dtype {
        return Err(ErrorKind::DType(DTypeFacts::Differ {
            op: "ring_buffer".into(),
            what: "input",
            expected: dtype,
            got: input.dtype(),
        })
        .into());
    }
    let dims = input.shape();
    let others_agree = dims.len() == buffer_dims.len()
        && dims
            .iter()
            .zip(buffer_dims)
            .enumerate()
            .all(|(i, (a, b))| i == axis || a == b);
    if !others_agree {
        return Err(ErrorKind::ShapeMismatch(format!(
            "ring_buffer: input shape {dims:?} and buffer shape {buffer_dims:?} must agree on every dim but axis {axis}"
        ).into()).into());
    }
    let (n, b) = (dims[axis], buffer_dims[axis]);
    if n > b {
        return Err(ErrorKind::ShapeMismatch(format!(
            "ring_buffer: input has N = {n} positions along axis {axis}, more than the buffer length B = {b}"
        ).into()).into());
    }
    Ok(n)
}

/// A ring buffer of the last `len` positions seen along an axis (seed 000, docs/design.md O5), with an
/// O(N) step (see the [module docs](self)). Starts zero-filled, like MXNet's buffer.
///
/// [`push`](RingBuffer::push) returns the window: the buffer after the step, oldest first, as a
/// zero-copy view of the state. A later push overwrites the memory an earlier window sees (like
/// a NumPy view of an array that is later written): take `window.copy()` for a snapshot, and do
/// not write through a window.
///
/// ```
/// use tessera::{DType, RingBuffer, Tensor};
/// // Remember the last 3 rows of width 2 (axis 0).
/// let mut rb = RingBuffer::new(&[1, 2], 0, 3, DType::I64).unwrap();
/// let w = rb.push(&Tensor::from_slice(&[1i64, 1, 2, 2], &[2, 2]).unwrap()).unwrap();
/// assert_eq!(w.to_vec::<i64>().unwrap(), vec![0, 0, 1, 1, 2, 2]);
/// let snapshot = w.copy().unwrap();
/// let w = rb.push(&Tensor::from_slice(&[3i64, 3], &[1, 2]).unwrap()).unwrap();
/// assert_eq!(w.shape(), &[3, 2]);
/// assert_eq!(w.to_vec::<i64>().unwrap(), vec![1, 1, 2, 2, 3, 3]);
/// assert_eq!(snapshot.to_vec::<i64>().unwrap(), vec![0, 0, 1, 1, 2, 2]);
/// // N > B is an error, not a panic.
/// assert!(rb.push(&Tensor::zeros(&[4, 2], DType::I64).unwrap()).is_err());
/// ```
pub struct RingBuffer {
    /// The state (dense, all `2B` positions); its storage's attachment is `ring`.
    state: Tensor,
    ring: Arc<Mutex<Ring>>,
}

impl RingBuffer {
    /// A zero-filled ring buffer of `len` positions along `axis` (negative counts from the end).
    ///
    /// `shape` is the shape of the inputs (or of the buffer): its entry at `axis` is ignored and
    /// replaced by `len`, so the buffer has shape `shape` with `len` on the axis. `len = 0` is
    /// allowed (every input must then have `N = 0`).
    ///
    /// Errors: `Index` if `axis` is out of range for `shape` (a rank-0 shape has none),
    /// `ShapeOverflow`/`Allocation` if the state (`2 × len` positions) is too large.
    pub fn new(shape: &[usize], axis: isize, len: usize, dtype: DType) -> Result<RingBuffer> {
        let axis = normalize_axis(axis, shape.len())?;
        let mut dims = shape.to_vec();
        dims[axis] = len;
        let (state, ring) = create(&dims, axis, dtype)?;
        Ok(RingBuffer { state, ring })
    }

    /// One step: the `N` positions of `x` along the axis become the newest; returns the window
    /// (the buffer after the step, oldest first, a view). O(N) along the axis.
    ///
    /// Errors (nothing is written): `DType` if `x` has another dtype, `ShapeMismatch` if its
    /// rank or any dim but the axis differs from the buffer's or if `N > len`.
    ///
    /// The ring buffer is forward only by design: when `x` requires a gradient the window is
    /// recorded as an output of `ring_buffer`, and backward through it is an error naming the
    /// op (docs/design.md G1), as for the registry op.
    pub fn push(&mut self, x: &Tensor) -> Result<Tensor> {
        let recorded = autograd::wants_record(std::slice::from_ref(x));
        let window = self.ring.lock().step(&self.state, x)?;
        let inputs = [x.clone(), self.state.clone()];
        let out = autograd::record(
            recorded,
            "ring_buffer",
            &(),
            &autograd::GradRule::ForwardOnly,
            &inputs,
            vec![window],
        )?;
        Ok(out.into_iter().next().expect("one output"))
    }

    /// The current window (the buffer, oldest first) as a zero-copy view of the state.
    pub fn window(&self) -> Tensor {
        self.ring
            .lock()
            .window_of(&self.state)
            .expect("the ring state is dense by construction")
    }

    /// The buffer length `B` along the axis.
    pub fn len(&self) -> usize {
        self.ring.lock().len
    }

    /// True when the buffer length is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The (normalised, non-negative) axis.
    pub fn axis(&self) -> usize {
        self.ring.lock().axis
    }

    /// The buffer's shape (`len` on the axis).
    pub fn shape(&self) -> Vec<usize> {
        self.ring.lock().window.dims().to_vec()
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.state.dtype()
    }
}

impl fmt::Debug for RingBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ring = self.ring.lock();
        f.debug_struct("RingBuffer")
            .field("shape", &ring.window.dims())
            .field("axis", &ring.axis)
            .field("len", &ring.len)
            .field("dtype", &self.dtype())
            .finish()
    }
}

/// A zero-filled buffer of `buffer_shape` (`B = buffer_shape[axis]`) for the O(N) path of
/// [`ring_buffer_step`]: a window of a fresh ring state. The state lives as long as any window
/// of it.
///
/// ```
/// use tessera::{DType, Tensor};
/// use tessera::ring::{ring_buffer_state, ring_buffer_step};
/// let buf = ring_buffer_state(&[4], 0, DType::F32).unwrap();
/// let x = Tensor::from_slice(&[1f32, 2.], &[2]).unwrap();
/// let buf = ring_buffer_step(&x, &buf, 0).unwrap(); // O(N): pass the returned buffer on
/// let buf = ring_buffer_step(&x, &buf, 0).unwrap();
/// assert_eq!(buf.to_vec::<f32>().unwrap(), vec![1., 2., 1., 2.]);
/// ```
///
/// Errors: `Index` for a bad axis, `ShapeOverflow`/`Allocation` for a too-large state.
pub fn ring_buffer_state(buffer_shape: &[usize], axis: isize, dtype: DType) -> Result<Tensor> {
    let axis = normalize_axis(axis, buffer_shape.len())?;
    let (state, ring) = create(buffer_shape, axis, dtype)?;
    let window = ring.lock().window_of(&state);
    window
}

/// The ring-buffer operator (seed 000, docs/design.md O5), forward only: mutates `buffer` in place and
/// returns the buffer after the step (shift left by `N` along `axis`, then the input in the
/// last `N` positions).
///
/// Two paths:
/// - `buffer` is a window from [`ring_buffer_state`], [`RingBuffer`] or an earlier call of this
///   function on one: O(N). The ring's state advances and the **returned** tensor is the new
///   window; the handle passed in keeps showing its old window (a stale view, partly
///   overwritten). Pass the returned tensor to the next step. Passing an older window of the
///   same ring still advances the ring's current state (the ring, not the stale view, is what
///   steps).
/// - any other dense tensor: the seed's literal semantics in place with the copy engine (one
///   `assign` of the overlapping shifted view, copy-first by V7, then one `assign` of the
///   input), O(B); returns a handle to the same buffer. An input sharing storage with the
///   buffer is read before the buffer is written.
///
/// Errors (nothing is written): `Index` for an axis out of range for `buffer`, `DType` for a
/// dtype mismatch, `ShapeMismatch` for a rank or non-axis dim mismatch or `N > B`,
/// `OverlappingWrite` for a buffer with stride 0 on a dim of size > 1, `InvalidArgument` for a
/// view of a ring state that is not a window, or a window stepped along another axis than its
/// ring's. (A hand-made `as_strided` buffer whose elements overlap without a zero stride is
/// rejected by the second `assign`, after the shift has been written.)
pub fn ring_buffer_step(input: &Tensor, buffer: &Tensor, axis: isize) -> Result<Tensor> {
    let axis = normalize_axis(axis, buffer.rank())?;
    if let Some(ring) = ring_of(buffer) {
        let mut ring = ring.lock();
        if !ring.is_window(buffer.layout()) {
            return Err(ErrorKind::InvalidArgument(format!(
                "ring_buffer: buffer (dims {:?}, strides {:?}) is a view of a ring-buffer state but not one of its windows",
                buffer.shape(),
                buffer.strides()
            )).into());
        }
        if ring.axis != axis {
            return Err(ErrorKind::InvalidArgument(format!(
                "ring_buffer: buffer is a ring-buffer window along axis {}, stepped along axis {axis}",
                ring.axis
            )).into());
        }
        return ring.step(buffer, input);
    }
    shift_in_place(input, buffer, axis)
}

/// The seed's two loops, in place, through the copy engine: O(B).
fn shift_in_place(input: &Tensor, buffer: &Tensor, axis: usize) -> Result<Tensor> {
    let n = check_input(input, buffer.shape(), axis, buffer.dtype())?;
    let b = buffer.shape()[axis];
    if buffer.numel() > 1
        && buffer
            .shape()
            .iter()
            .zip(buffer.strides())
            .any(|(&d, &s)| d > 1 && s == 0)
    {
        return Err(ErrorKind::OverlappingWrite(format!(
            "ring_buffer: buffer with dims {:?} and strides {:?} overlaps itself",
            buffer.shape(),
            buffer.strides()
        ))
        .into());
    }
    if n > 0 {
        let input = if input.shares_storage(buffer) {
            input.copy_dense()?
        } else {
            input.clone()
        };
        if n < b {
            let ax = axis as isize;
            buffer
                .narrow_dense(ax, 0, b - n)?
                .assign(&buffer.narrow_dense(ax, n, b - n)?)?;
        }
        buffer
            .narrow_dense(axis as isize, b - n, n)?
            .assign(&input)?;
    }
    Ok(buffer.clone())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn the_ring_lives_exactly_as_long_as_a_view_of_its_state() {
        let w = ring_buffer_state(&[3, 2], 0, DType::F32).unwrap();
        let ring = Arc::downgrade(w.attachment().unwrap());
        let view = w.narrow(1, 0, 1).unwrap();
        assert!(ring_of(&view).is_some(), "views carry the ring");
        assert!(ring_of(&w.copy().unwrap()).is_none(), "copies do not");
        drop(w);
        assert!(ring.upgrade().is_some());
        drop(view);
        assert!(ring.upgrade().is_none(), "dropped with the last view");
        let rb = RingBuffer::new(&[1], 0, 2, DType::I32).unwrap();
        let ring = Arc::downgrade(&rb.ring);
        let window = rb.window();
        drop(rb);
        assert!(ring.upgrade().is_some());
        drop(window);
        assert!(ring.upgrade().is_none());
    }
}
