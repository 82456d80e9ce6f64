//! Cache-blocked 2-D transpose, the inner loop the copy kernel picks when the destination walks
//! its innermost dim contiguously while the source walks the next-outer dim contiguously
//! (e.g. `contiguous()` of `a.T`). Outer dims (a batch of 2-D slabs) come from
//! [`Plan::for_each_run`] over the plan without its innermost dim.

use super::plan::Plan;
use crate::dtype::Element;

/// Tile edge, in elements (32×32 f32 = 4 KiB buffer). Measured on 4096² f32 with
/// `cargo bench --bench copy`: 32 beat 8, 16 and 64 (64 thrashes L1 at power-of-two strides).
pub(crate) const TILE: usize = 32;

/// Macro-block edge, in elements: a 256² block touches at most 512 pages, which stay in the
/// TLB. Measured: 256 beat 64, 128, 512 and no macro-blocking (0.56 vs 0.22 of memcpy).
const MACRO: usize = 256;

/// Smallest slab edge worth blocking; thinner slabs use the gather loop.
const MIN_EDGE: usize = 8;

/// True when the plan's last two dims form a transpose worth blocking: destination strides
/// `[_, 1]` and source strides `[±1, S]` with `|S| > 1` (a source stride of -1 is a
/// transpose of a flipped view, `flip(a.T, 0)`).
pub(crate) fn is_transpose(plan: &Plan<2>) -> bool {
    let r = plan.rank();
    r >= 2
        && plan.numel > 0
        && plan.strides[0][r - 1] == 1
        && plan.strides[1][r - 2].unsigned_abs() == 1
        && plan.strides[1][r - 1].unsigned_abs() > 1
        && plan.dims[r - 1] >= MIN_EDGE
        && plan.dims[r - 2] >= MIN_EDGE
}

/// Transposes every 2-D slab of `plan` (which must satisfy [`is_transpose`]).
pub(crate) fn transpose_slabs<T: Element>(plan: &Plan<2>, dst: &mut [T], src: &[T]) {
    let r = plan.rank();
    let (rows, cols) = (plan.dims[r - 2], plan.dims[r - 1]);
    let dst_row = plan.strides[0][r - 2] as usize;
    let src_col = plan.strides[1][r - 1];
    let reversed = plan.strides[1][r - 2] < 0;
    // The plan without its innermost dim: its runs are the slabs' first rows.
    let slabs = Plan {
        dims: plan.dims[..r - 1].into(),
        strides: plan.strides.clone().map(|s| s[..r - 1].into()),
        offsets: plan.offsets,
        numel: plan.numel / cols,
    };
    slabs.for_each_run(0..slabs.runs(), |[d, s]| {
        let d = d as usize;
        match reversed {
            false => transpose_2d::<T, false>(dst, d, dst_row, src, s, src_col, rows, cols),
            true => transpose_2d::<T, true>(dst, d, dst_row, src, s, src_col, rows, cols),
        }
    });
}

/// `dst[d + i*dst_row + j] = src[s + i + j*src_col]` for `i < rows`, `j < cols`; with
/// `REVERSED`, `src[s - i + j*src_col]` (the source's segments run backwards, and each is
/// read forwards from its low end and stored into the tile reversed).
///
/// Two levels of blocking: [`MACRO`]² blocks keep the pages they touch in the TLB, and inside
/// them [`TILE`]² tiles go through an L1 buffer: `TILE` contiguous source segments are read
/// into the buffer transposed, then written out as `TILE` contiguous destination segments, so
/// every cache line is touched once per tile even with power-of-two strides (which alias in
/// L1 when a tile is walked column-wise in place).
///
/// The tile loops index with constant bounds (`0..TILE`) on purpose: the compiler then drops
/// the bounds checks; the iterator forms measured 2-4x slower here.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
fn transpose_2d<T: Element, const REVERSED: bool>(
    dst: &mut [T],
    d: usize,
    dst_row: usize,
    src: &[T],
    s: isize,
    src_col: isize,
    rows: usize,
    cols: usize,
) {
    let mut buf = [[T::default(); TILE]; TILE];
    for ib in (0..rows).step_by(MACRO) {
        for jb in (0..cols).step_by(MACRO) {
            for i0 in (ib..(ib + MACRO).min(rows)).step_by(TILE) {
                let i1 = (i0 + TILE).min(rows);
                for j0 in (jb..(jb + MACRO).min(cols)).step_by(TILE) {
                    let j1 = (j0 + TILE).min(cols);
                    if i1 - i0 == TILE && j1 - j0 == TILE {
                        for j in 0..TILE {
                            let col = j0 + j;
                            let top = col as isize * src_col;
                            if REVERSED {
                                // The segment of rows i0..i0 + TILE, lowest address first.
                                let at = (s - (i0 + TILE - 1) as isize + top) as usize;
                                let seg: &[T; TILE] = src[at..at + TILE].try_into().unwrap();
                                for i in 0..TILE {
                                    buf[i][j] = seg[TILE - 1 - i];
                                }
                            } else {
                                let at = (s + i0 as isize + top) as usize;
                                let seg: &[T; TILE] = src[at..at + TILE].try_into().unwrap();
                                for i in 0..TILE {
                                    buf[i][j] = seg[i];
                                }
                            }
                        }
                        for (i, row) in buf.iter().enumerate() {
                            let at = d + (i0 + i) * dst_row + j0;
                            dst[at..at + TILE].copy_from_slice(row);
                        }
                    } else {
                        // Edge tile: direct strided reads.
                        for i in i0..i1 {
                            let start = d + i * dst_row;
                            let row = if REVERSED { -(i as isize) } else { i as isize };
                            let base = s + row + j0 as isize * src_col;
                            for (k, x) in dst[start + j0..start + j1].iter_mut().enumerate() {
                                *x = src[(base + k as isize * src_col) as usize];
                            }
                        }
                    }
                }
            }
        }
    }
}
