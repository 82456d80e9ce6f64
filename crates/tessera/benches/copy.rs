//! Copy-engine benchmark (docs/performance.md). Run: `cargo bench --bench copy`.
//!
//! Times, in one run, a plain memcpy (`copy_from_slice`) and a plain `fill` of the same byte
//! counts, then the copy engine, and prints a table followed by one `ratio NAME VALUE` line per
//! figure (best of `REPEATS`):
//! - `transpose_copy_bw_fraction`: memcpy time / `contiguous()` of a transposed 4096² f32.
//!   Goal >= 0.5.
//! - `expand_materialise_bw_fraction`: fill time / `contiguous()` of 1×4096 expanded to
//!   4096×4096 f32 (stride 0). Goal >= 0.8.
//! - `tile_bw_fraction`: fill time / 512×512 f32 tiled (8, 8). Goal >= 0.8.
//! - `column_block_bw_fraction`: memcpy time of 32 MiB / `assign` of the middle half of the
//!   columns of a 4096² f32 (8 KiB runs every 16 KiB) into a preallocated 4096×2048. Not a
//!   goal; it shows the streaming copy of large runs (`kernels::stream`).
//!
//! `contiguous()`/`tile()` allocate their output (fresh pages fault in on first write). The
//! `*_prealloc_*` lines time the same kernel through `assign` into an existing tensor, which
//! isolates the kernel from allocation (`*_alloc_vs_fresh_memcpy` compares the allocating
//! calls with a memcpy into a freshly allocated `Vec`, which pays the same page faults);
//! ndarray's `a.t().as_standard_layout()` is printed for
//! comparison.

use std::hint::black_box;
use std::time::{Duration, Instant};

use tessera::{DType, Tensor};

const REPEATS: usize = 7;
const N: usize = 4096;

fn best(mut f: impl FnMut()) -> Duration {
    f(); // warm up
    (0..REPEATS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

fn row(name: &str, bytes: usize, t: Duration) {
    let gbs = bytes as f64 / t.as_secs_f64() / 1e9;
    println!(
        "{name:<44} {:>10.3} ms {gbs:>8.2} GB/s",
        t.as_secs_f64() * 1e3
    );
}

fn main() {
    let n2 = N * N;
    let bytes = n2 * 4;
    let src_data: Vec<f32> = (0..n2).map(|i| i as f32).collect();
    let mut dst_data = vec![0f32; n2];

    println!(
        "{:<44} {:>13} {:>13}",
        "case (f32)", "best time", "bandwidth"
    );
    let memcpy = best(|| {
        dst_data.copy_from_slice(black_box(&src_data));
        black_box(&mut dst_data);
    });
    row("memcpy 64 MiB (copy_from_slice)", bytes, memcpy);
    let fill = best(|| {
        dst_data.fill(black_box(1.5));
        black_box(&mut dst_data);
    });
    row("fill 64 MiB (slice::fill)", bytes, fill);
    let fresh_memcpy = best(|| {
        let mut v = vec![0f32; n2];
        v.copy_from_slice(black_box(&src_data));
        black_box(v);
    });
    row(
        "memcpy into a fresh Vec (alloc + faults)",
        bytes,
        fresh_memcpy,
    );

    // Transpose: contiguous() of a.T.
    let a = Tensor::from_slice(&src_data, &[N, N]).unwrap();
    let at = a.as_strided(&[N, N], &[1, N as isize], 0).unwrap();
    let transpose = best(|| {
        black_box(at.contiguous().unwrap());
    });
    row("tessera contiguous(a.T) 4096²", bytes, transpose);
    let out = Tensor::zeros(&[N, N], DType::F32).unwrap();
    let transpose_pre = best(|| out.assign(black_box(&at)).unwrap());
    row(
        "tessera assign(a.T) into preallocated",
        bytes,
        transpose_pre,
    );
    let nd = ndarray::Array2::from_shape_vec((N, N), src_data.clone()).unwrap();
    let nd_t = best(|| {
        black_box(nd.t().as_standard_layout());
    });
    row("ndarray a.t().as_standard_layout()", bytes, nd_t);
    let check = at.contiguous().unwrap().to_vec::<f32>().unwrap();
    assert_eq!(check[1], N as f32);

    // Expand materialisation: [1, N] -> [N, N] with stride 0.
    let r = Tensor::from_slice(&src_data[..N], &[1, N]).unwrap();
    let ex = r.as_strided(&[N, N], &[0, 1], 0).unwrap();
    let expand = best(|| {
        black_box(ex.contiguous().unwrap());
    });
    row("tessera contiguous(expand 1x4096 -> 4096²)", bytes, expand);
    let expand_pre = best(|| out.assign(black_box(&r)).unwrap());
    row(
        "tessera assign(1x4096) broadcast, prealloc",
        bytes,
        expand_pre,
    );
    let col = Tensor::from_slice(&src_data[..N], &[N, 1]).unwrap();
    let ex_col = col.as_strided(&[N, N], &[1, 0], 0).unwrap();
    let expand_col = best(|| {
        black_box(ex_col.contiguous().unwrap());
    });
    row(
        "tessera contiguous(expand 4096x1 -> 4096²)",
        bytes,
        expand_col,
    );
    let flipped = a.as_strided(&[N, N], &[-(N as isize), -1], n2 - 1).unwrap();
    let flip = best(|| {
        black_box(flipped.contiguous().unwrap());
    });
    row("tessera contiguous(a[::-1, ::-1])", bytes, flip);

    // A column block: the middle half of every row (8 KiB runs), against a memcpy of its
    // 32 MiB.
    let block = a.as_strided(&[N, N / 2], &[N as isize, 1], N / 4).unwrap();
    let block_out = Tensor::zeros(&[N, N / 2], DType::F32).unwrap();
    let half = n2 / 2;
    let memcpy_half = best(|| {
        dst_data[..half].copy_from_slice(black_box(&src_data[..half]));
        black_box(&mut dst_data);
    });
    row("memcpy 32 MiB (copy_from_slice)", bytes / 2, memcpy_half);
    let column_block = best(|| block_out.assign(black_box(&block)).unwrap());
    row(
        "tessera assign(a[:, 1024:3072]), prealloc",
        bytes / 2,
        column_block,
    );
    let got = block_out.to_vec::<f32>().unwrap();
    assert_eq!((got[0], got[N / 2]), ((N / 4) as f32, (N + N / 4) as f32));

    // Tile 512x512 by (8, 8) -> 4096².
    let small = Tensor::from_slice(&src_data[..512 * 512], &[512, 512]).unwrap();
    let tile = best(|| {
        black_box(small.tile(&[8, 8]).unwrap());
    });
    row("tessera tile(512², (8, 8))", bytes, tile);
    // The same plan as tile's, through assign into the preallocated output.
    let tile_dst = out
        .as_strided(&[8, 512, 8, 512], &[8 * 512 * 512, 4096, 512, 1], 0)
        .unwrap();
    let tile_src = small
        .as_strided(&[8, 512, 8, 512], &[0, 512, 0, 1], 0)
        .unwrap();
    let tile_pre = best(|| tile_dst.assign(black_box(&tile_src)).unwrap());
    row("tessera tile plan via assign, prealloc", bytes, tile_pre);

    println!();
    let frac = |base: Duration, ours: Duration| base.as_secs_f64() / ours.as_secs_f64();
    println!(
        "ratio transpose_copy_bw_fraction {:.3}",
        frac(memcpy, transpose)
    );
    println!(
        "ratio expand_materialise_bw_fraction {:.3}",
        frac(fill, expand)
    );
    println!("ratio tile_bw_fraction {:.3}", frac(fill, tile));
    println!(
        "ratio column_block_bw_fraction {:.3}",
        frac(memcpy_half, column_block)
    );
    println!(
        "ratio transpose_prealloc_bw_fraction {:.3}",
        frac(memcpy, transpose_pre)
    );
    println!(
        "ratio expand_prealloc_bw_fraction {:.3}",
        frac(fill, expand_pre)
    );
    println!(
        "ratio tile_prealloc_bw_fraction {:.3}",
        frac(fill, tile_pre)
    );
    println!(
        "ratio transpose_alloc_vs_fresh_memcpy {:.3}",
        frac(fresh_memcpy, transpose)
    );
    println!(
        "ratio expand_alloc_vs_fresh_memcpy {:.3}",
        frac(fresh_memcpy, expand)
    );
    println!(
        "ratio tile_alloc_vs_fresh_memcpy {:.3}",
        frac(fresh_memcpy, tile)
    );
    println!(
        "ratio transpose_copy_speedup_vs_ndarray {:.3}",
        frac(nd_t, transpose)
    );
}
