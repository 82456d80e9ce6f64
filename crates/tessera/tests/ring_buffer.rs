//! The ring-buffer operator (seed 000, docs/design.md O5): `RingBuffer::push` and both paths of
//! `ring_buffer_step` against a literal transcription of the seed's two pseudocode loops,
//! written here element by element on `Vec`s with index arithmetic.

use proptest::prelude::*;
use tessera::idx;
use tessera::ring::{ring_buffer_state, ring_buffer_step};
use tessera::{DType, ErrorKind, RingBuffer, Tensor};

/// Row-major linear position of the multi-index `i` in `dims`.
fn lin(i: &[usize], dims: &[usize]) -> usize {
    i.iter().zip(dims).fold(0, |acc, (&x, &d)| acc * d + x)
}

/// Every multi-index of the box `ranges[k] = (lo, hi)` (half-open), in row-major order.
fn box_indices(ranges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if ranges.iter().any(|&(lo, hi)| lo >= hi) {
        return out;
    }
    let mut i: Vec<usize> = ranges.iter().map(|r| r.0).collect();
    loop {
        out.push(i.clone());
        let mut k = ranges.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            i[k] += 1;
            if i[k] < ranges[k].1 {
                break;
            }
            i[k] = ranges[k].0;
        }
    }
}

/// The seed's pseudocode, literally: loop 1 shifts left by N along `axis`, loop 2 writes the
/// input into the last N positions.
fn seed_step(buffer: &mut [i64], bdims: &[usize], input: &[i64], idims: &[usize], axis: usize) {
    let (b, n) = (bdims[axis], idims[axis]);
    let shift: Vec<(usize, usize)> = bdims
        .iter()
        .enumerate()
        .map(|(k, &d)| if k == axis { (n, b) } else { (0, d) })
        .collect();
    for i in box_indices(&shift) {
        let mut dst = i.clone();
        dst[axis] -= n;
        buffer[lin(&dst, bdims)] = buffer[lin(&i, bdims)];
    }
    let all: Vec<(usize, usize)> = idims.iter().map(|&d| (0, d)).collect();
    for i in box_indices(&all) {
        let mut dst = i.clone();
        dst[axis] += b - n;
        buffer[lin(&dst, bdims)] = input[lin(&i, idims)];
    }
}

/// A tensor holding `vals` (row-major) as `dtype`; `strided` makes it a view with negative
/// strides (the reversed data, flipped on every axis).
fn make(vals: &[i64], dims: &[usize], dtype: DType, strided: bool) -> Tensor {
    let mut v = vals.to_vec();
    if strided {
        v.reverse();
    }
    let t = match dtype {
        DType::F32 => Tensor::from_vec(v.iter().map(|&x| x as f32).collect(), dims),
        _ => Tensor::from_vec(v, dims),
    }
    .unwrap();
    if strided {
        t.flip(None).unwrap()
    } else {
        t
    }
}

fn read(t: &Tensor) -> Vec<i64> {
    match t.dtype() {
        DType::F32 => t
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(|x| x as i64)
            .collect(),
        _ => t.to_vec::<i64>().unwrap(),
    }
}

fn dims_with(dims: &[usize], axis: usize, n: usize) -> Vec<usize> {
    let mut d = dims.to_vec();
    d[axis] = n;
    d
}

#[derive(Debug, Clone)]
struct Case {
    dims: Vec<usize>,
    axis: isize,
    len: usize,
    dtype: DType,
    strided_input: bool,
    strided_buffer: bool,
    steps: Vec<usize>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..=4)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(1usize..=3, rank),
                -(rank as isize)..rank as isize,
                1usize..=6,
                prop_oneof![Just(DType::F32), Just(DType::I64)],
                any::<bool>(),
                any::<bool>(),
            )
        })
        .prop_flat_map(|(dims, axis, len, dtype, si, sb)| {
            let steps = prop::collection::vec(0..=len, 1..8);
            (Just((dims, axis, len, dtype, si, sb)), steps)
        })
        .prop_map(
            |((dims, axis, len, dtype, strided_input, strided_buffer), steps)| Case {
                dims,
                axis,
                len,
                dtype,
                strided_input,
                strided_buffer,
                steps,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// O5: after every step, `RingBuffer::push`, the O(N) `ring_buffer_step` path and the
    /// in-place dense path all equal the seed's two loops.
    #[test]
    fn o5_all_paths_match_the_seed_loops(c in case()) {
        let axis = c.axis.rem_euclid(c.dims.len() as isize) as usize;
        let bdims = dims_with(&c.dims, axis, c.len);
        let mut reference = vec![0i64; bdims.iter().product()];
        // The entry at `axis` of `RingBuffer::new`'s shape is ignored.
        let mut rb = RingBuffer::new(&dims_with(&c.dims, axis, 7), c.axis, c.len, c.dtype).unwrap();
        let mut ring = ring_buffer_state(&bdims, c.axis, c.dtype).unwrap();
        let zeros = Tensor::zeros(&bdims, c.dtype).unwrap();
        let dense = if c.strided_buffer { zeros.flip(None).unwrap() } else { zeros };
        let mut next = 1i64;
        for &n in &c.steps {
            let idims = dims_with(&bdims, axis, n);
            let vals: Vec<i64> = (0..idims.iter().product::<usize>() as i64).map(|k| next + k).collect();
            next += vals.len() as i64;
            let x = make(&vals, &idims, c.dtype, c.strided_input);
            let before = rb.window().copy().unwrap();
            let old = reference.clone();
            seed_step(&mut reference, &bdims, &vals, &idims, axis);

            let w = rb.push(&x).unwrap();
            prop_assert_eq!(w.shape(), &bdims[..]);
            prop_assert_eq!(read(&w), reference.clone());
            prop_assert_eq!(read(&rb.window()), reference.clone());
            prop_assert_eq!(read(&before), old, "a copy() snapshot does not change");

            ring = ring_buffer_step(&x, &ring, c.axis).unwrap();
            prop_assert_eq!(read(&ring), reference.clone());

            let out = ring_buffer_step(&x, &dense, c.axis).unwrap();
            prop_assert!(out.shares_storage(&dense));
            prop_assert_eq!(read(&dense), reference.clone());
            prop_assert_eq!(read(&out), reference.clone());
        }
    }
}

/// The seed's Figure 2, 1-D: shift left by N, input at the end; N = 0 and N = B included.
#[test]
fn o5_rank1_sequence() {
    let mut rb = RingBuffer::new(&[0], -1, 5, DType::I64).unwrap();
    let mut buf = ring_buffer_state(&[5], 0, DType::I64).unwrap();
    let dense = Tensor::zeros(&[5], DType::I64).unwrap();
    let steps: [(&[i64], [i64; 5]); 5] = [
        (&[1, 2], [0, 0, 0, 1, 2]),
        (&[3], [0, 0, 1, 2, 3]),
        (&[], [0, 0, 1, 2, 3]),
        (&[4, 5, 6], [1, 2, 3, 4, 5, 6][1..].try_into().unwrap()),
        (&[7, 8, 9, 10, 11], [7, 8, 9, 10, 11]),
    ];
    for (input, want) in steps {
        let x = Tensor::from_slice(input, &[input.len()]).unwrap();
        assert_eq!(rb.push(&x).unwrap().to_vec::<i64>().unwrap(), want);
        buf = ring_buffer_step(&x, &buf, -1).unwrap();
        assert_eq!(buf.to_vec::<i64>().unwrap(), want);
        ring_buffer_step(&x, &dense, 0).unwrap();
        assert_eq!(dense.to_vec::<i64>().unwrap(), want);
    }
    assert_eq!((rb.len(), rb.axis(), rb.shape()), (5, 0, vec![5]));
    assert_eq!(rb.dtype(), DType::I64);
}

/// O5 errors: typed, no panic, and nothing is written.
#[test]
fn o5_errors_are_typed_and_write_nothing() {
    let mut rb = RingBuffer::new(&[2, 3], 1, 3, DType::F32).unwrap();
    rb.push(&Tensor::full(&[2, 2], 1.0, DType::F32).unwrap())
        .unwrap();
    let ring = ring_buffer_state(&[2, 3], 1, DType::F32).unwrap();
    let ring =
        ring_buffer_step(&Tensor::full(&[2, 1], 2.0, DType::F32).unwrap(), &ring, 1).unwrap();
    let dense = Tensor::full(&[2, 3], 3.0, DType::F32).unwrap();
    let snap = |t: &Tensor| t.to_vec::<f32>().unwrap();
    let (rb0, ring0, dense0) = (snap(&rb.window()), snap(&ring), snap(&dense));

    let too_long = Tensor::zeros(&[2, 4], DType::F32).unwrap();
    let other_dims = Tensor::zeros(&[3, 1], DType::F32).unwrap();
    let other_rank = Tensor::zeros(&[2, 1, 1], DType::F32).unwrap();
    let wrong_dtype = Tensor::zeros(&[2, 1], DType::I64).unwrap();
    for x in [&too_long, &other_dims, &other_rank] {
        assert!(matches!(
            rb.push(x).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::ShapeMismatch(_))
        ));
        for buf in [&ring, &dense] {
            assert!(matches!(
                ring_buffer_step(x, buf, 1).as_ref().map_err(|e| e.kind()),
                Err(ErrorKind::ShapeMismatch(_))
            ));
        }
    }
    assert!(matches!(
        rb.push(&wrong_dtype).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::DType(_))
    ));
    for buf in [&ring, &dense] {
        assert!(matches!(
            ring_buffer_step(&wrong_dtype, buf, 1)
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::DType(_))
        ));
        for axis in [2, -3] {
            let x = Tensor::zeros(&[2, 1], DType::F32).unwrap();
            assert!(matches!(
                ring_buffer_step(&x, buf, axis)
                    .as_ref()
                    .map_err(|e| e.kind()),
                Err(ErrorKind::Index(_))
            ));
        }
    }
    assert!(matches!(
        RingBuffer::new(&[2, 3], 2, 3, DType::F32)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        RingBuffer::new(&[], 0, 3, DType::F32)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    assert!(matches!(
        ring_buffer_state(&[2, 3], -3, DType::F32)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Index(_))
    ));
    // A ring window stepped along another axis, or a view of a ring that is not a window.
    let x = Tensor::zeros(&[1, 3], DType::F32).unwrap();
    assert!(matches!(
        ring_buffer_step(&x, &ring, 0)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    let sub = ring.index(&idx![.., 1..]).unwrap();
    let x = Tensor::zeros(&[2, 1], DType::F32).unwrap();
    assert!(matches!(
        ring_buffer_step(&x, &sub, 1).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    // A broadcast (stride-0) dense buffer cannot be written.
    let bcast = Tensor::zeros(&[1, 3], DType::F32)
        .unwrap()
        .expand(&[2, 3])
        .unwrap();
    assert!(matches!(
        ring_buffer_step(&x, &bcast, 1)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::OverlappingWrite(_))
    ));

    assert_eq!(snap(&rb.window()), rb0);
    assert_eq!(snap(&ring), ring0);
    assert_eq!(snap(&dense), dense0);
}

/// O5 cost: the state holds 2B × rest elements and a step with N = 1 writes exactly the two
/// physical copies of one slot; every other element stays bit-identical.
#[test]
fn o5_step_touches_only_n_slots() {
    let (b, rest) = (6usize, [2usize, 3]);
    let mut rb = RingBuffer::new(&[2, 1, 3], 1, b, DType::F32).unwrap();
    let mut next = 0.5f32;
    let mut row = |n: usize| {
        let v: Vec<f32> = (0..2 * n * 3)
            .map(|_| {
                next += 1.0;
                next
            })
            .collect();
        Tensor::from_vec(v, &[2, n, 3]).unwrap()
    };
    for n in [4, 3] {
        rb.push(&row(n)).unwrap(); // window start is now 7 mod 6 = 1
    }
    let storage_len = rb.window().storage().unwrap().len();
    assert_eq!(storage_len, 2 * b * rest[0] * rest[1]);
    let all = |rb: &RingBuffer| -> Vec<u32> {
        let t = rb.window().as_strided(&[storage_len], &[1], 0).unwrap();
        t.to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect()
    };
    let before = all(&rb);
    rb.push(&row(1)).unwrap();
    let after = all(&rb);
    let changed: Vec<usize> = (0..storage_len)
        .filter(|&i| before[i] != after[i])
        .collect();
    // Slot w = 1 at physical positions 1 and 1 + B, for each of the 2 × 3 other indices.
    let mut expected: Vec<usize> = Vec::new();
    for i0 in 0..2 {
        for p in [1, 1 + b] {
            for i2 in 0..3 {
                expected.push(i0 * 2 * b * 3 + p * 3 + i2);
            }
        }
    }
    assert_eq!(changed, expected);
}

/// A stale window passed back still advances the ring (the ring, not the view, steps); the
/// stale handle itself is a view of memory that later steps overwrite.
#[test]
fn o5_stale_window_advances_the_ring() {
    let x = |v: i64| Tensor::from_slice(&[v], &[1]).unwrap();
    let first = ring_buffer_state(&[3], 0, DType::I64).unwrap();
    let second = ring_buffer_step(&x(1), &first, 0).unwrap();
    assert_eq!(second.to_vec::<i64>().unwrap(), vec![0, 0, 1]);
    // The stale handle sees slot 0 rewritten: neither the old nor the new buffer.
    assert_eq!(first.to_vec::<i64>().unwrap(), vec![1, 0, 0]);
    let third = ring_buffer_step(&x(2), &first, 0).unwrap();
    assert_eq!(third.to_vec::<i64>().unwrap(), vec![0, 1, 2]);
    assert_eq!(second.to_vec::<i64>().unwrap(), vec![2, 0, 1]);
    assert!(third.shares_storage(&first));
    // A window from RingBuffer is recognised too: both handles drive one ring.
    let mut rb = RingBuffer::new(&[1], 0, 2, DType::I64).unwrap();
    let w = rb.push(&x(5)).unwrap();
    let w = ring_buffer_step(&x(6), &w, 0).unwrap();
    assert_eq!(w.to_vec::<i64>().unwrap(), vec![5, 6]);
    assert_eq!(rb.push(&x(7)).unwrap().to_vec::<i64>().unwrap(), vec![6, 7]);
}

/// V7: an input that aliases the buffer is read before the buffer is written (both paths).
#[test]
fn o5_input_aliasing_the_buffer() {
    let dense = Tensor::from_slice(&[1i64, 2, 3, 4], &[4]).unwrap();
    let head = dense.index(&idx![0..2]).unwrap();
    ring_buffer_step(&head, &dense, 0).unwrap();
    assert_eq!(dense.to_vec::<i64>().unwrap(), vec![3, 4, 1, 2]);

    let mut rb = RingBuffer::new(&[1], 0, 4, DType::I64).unwrap();
    rb.push(&Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap())
        .unwrap();
    let w = rb.window(); // [0, 1, 2, 3]
    let w = rb.push(&w.index(&idx![1..]).unwrap()).unwrap();
    assert_eq!(w.to_vec::<i64>().unwrap(), vec![3, 1, 2, 3]);
    let w = rb.push(&w.flip(None).unwrap()).unwrap();
    assert_eq!(w.to_vec::<i64>().unwrap(), vec![3, 2, 1, 3]);
}

/// Degenerate sizes: an empty other dim, B = 0.
#[test]
fn o5_empty_shapes() {
    let mut rb = RingBuffer::new(&[0, 5], 1, 3, DType::F32).unwrap();
    let w = rb
        .push(&Tensor::zeros(&[0, 2], DType::F32).unwrap())
        .unwrap();
    assert_eq!(w.shape(), &[0, 3]);
    let dense = Tensor::zeros(&[0, 3], DType::F32).unwrap();
    ring_buffer_step(&Tensor::zeros(&[0, 3], DType::F32).unwrap(), &dense, 1).unwrap();

    let mut rb = RingBuffer::new(&[2], 0, 0, DType::I64).unwrap();
    assert!(rb.is_empty());
    assert_eq!(
        rb.push(&Tensor::zeros(&[0], DType::I64).unwrap())
            .unwrap()
            .shape(),
        &[0]
    );
    assert!(rb.push(&Tensor::zeros(&[1], DType::I64).unwrap()).is_err());
    let buf = ring_buffer_state(&[0], 0, DType::I64).unwrap();
    let buf = ring_buffer_step(&Tensor::zeros(&[0], DType::I64).unwrap(), &buf, 0).unwrap();
    assert_eq!(buf.numel(), 0);
}

#[test]
fn ring_buffer_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<RingBuffer>();
    let rb = RingBuffer::new(&[2], 0, 2, DType::F32).unwrap();
    assert_eq!(
        format!("{rb:?}"),
        "RingBuffer { shape: [2], axis: 0, len: 2, dtype: F32 }"
    );
}
