//! The sorting network's tests: its column networks, and its sorts against the standard
//! library's.

use super::*;

/// A small deterministic generator (the test needs no crate for it).
fn keys(n: usize, seed: u64, spread: u64) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match (s >> 60) % 4 {
                0 => u64::MAX,
                _ => (s >> 17) % spread,
            }
        })
        .collect()
}

/// Batcher's column networks have their known sizes, and sort every 0/1 input of up to
/// 16 keys (so, by the 0-1 principle, every input), and random inputs of 32.
#[test]
fn column_networks_sort() {
    let run = |n: usize, v: &mut [u64]| {
        let (pairs, len) = columns(n);
        for &(a, b) in &pairs[..len] {
            let (a, b) = (a as usize, b as usize);
            assert!(a < b && b < n);
            if v[a] > v[b] {
                v.swap(a, b);
            }
        }
    };
    for (n, size) in [(1, 0), (2, 1), (4, 5), (8, 19), (16, 63), (32, 191)] {
        assert_eq!(columns(n).1, size, "{n} inputs");
    }
    for n in [2, 4, 8, 16] {
        for bits in 0u32..1 << n {
            let mut v: Vec<u64> = (0..n).map(|i| (bits >> i & 1) as u64).collect();
            run(n, &mut v);
            assert!(v.is_sorted(), "{n} inputs, bits {bits:b}");
        }
    }
    for seed in 0..200 {
        let mut v = keys(32, seed, 1000);
        run(32, &mut v);
        assert!(v.is_sorted());
    }
}

#[test]
fn sorts_every_length_like_the_standard_sort() {
    if !crate::kernels::simd::has_avx512() {
        // The network is not used on this CPU: `sort` must leave the input alone.
        let mut v = vec![3u64, 1, 2];
        assert!(!sort(&mut v));
        assert_eq!(v, [3, 1, 2]);
        let mut v32 = vec![3u32, 1, 2];
        assert!(!sort(&mut v32));
        assert_eq!(v32, [3, 1, 2]);
        return;
    }
    for n in 0..=NET_MAX {
        for (seed, spread) in [(1, 5), (2, 1000), (3, u64::MAX)] {
            let mut v = keys(n, seed + n as u64, spread);
            let mut want = v.clone();
            want.sort_unstable();
            let mut v32: Vec<u32> = v.iter().map(|&k| (k >> 32) as u32 ^ k as u32).collect();
            let mut want32 = v32.clone();
            want32.sort_unstable();
            assert!(sort(&mut v));
            assert_eq!(v, want, "n = {n}, spread {spread}");
            assert!(sort(&mut v32));
            assert_eq!(v32, want32, "u32, n = {n}, spread {spread}");
            // The signed types by value: the same bits as `i64`/`i32` span both signs and
            // both ends (`u64::MAX` is -1; a spread of `u64::MAX` reaches `i64::MIN`).
            let mut signed: Vec<i64> = want.iter().map(|&k| k.rotate_right(1) as i64).collect();
            let mut want_signed = signed.clone();
            want_signed.sort_unstable();
            assert!(sort(&mut signed));
            assert_eq!(signed, want_signed, "i64, n = {n}, spread {spread}");
            let mut signed32: Vec<i32> = want32.iter().map(|&k| k.rotate_right(1) as i32).collect();
            let mut want_signed32 = signed32.clone();
            want_signed32.sort_unstable();
            assert!(sort(&mut signed32));
            assert_eq!(signed32, want_signed32, "i32, n = {n}, spread {spread}");
        }
    }
    // The padding is each type's largest value: a lane of it, with the smallest among it.
    for n in [2, 5, 8, 9, 64, NET_MAX] {
        let mut v = vec![i64::MAX; n];
        v[n / 2] = i64::MIN;
        assert!(sort(&mut v));
        assert_eq!((v[0], v[n - 1]), (i64::MIN, i64::MAX));
        let mut v32 = vec![i32::MAX; n];
        v32[n - 1] = i32::MIN;
        assert!(sort(&mut v32));
        assert_eq!((v32[0], v32[n - 1]), (i32::MIN, i32::MAX));
    }
    for n in [0, 1, 7, 8, 100, NET_MAX] {
        let mut sorted: Vec<u64> = (0..n as u64).map(|i| i / 3).collect();
        let want = sorted.clone();
        assert!(sort(&mut sorted));
        assert_eq!(sorted, want);
        let mut reversed: Vec<u64> = want.iter().rev().copied().collect();
        assert!(sort(&mut reversed));
        assert_eq!(reversed, want);
        let mut reversed32: Vec<u32> = want.iter().rev().map(|&k| k as u32).collect();
        assert!(sort(&mut reversed32));
        assert!(reversed32.is_sorted());
    }
    let mut long = vec![0u64; NET_MAX + 1];
    assert!(!sort_untied_into(&long.clone(), &mut long));
    assert!(!sort(&mut long));
    assert!(!sort(&mut vec![0u32; NET_MAX + 1]));
}

#[test]
fn sorts_floats_of_every_length_like_the_standard_sort() {
    if !crate::kernels::simd::has_avx512() {
        assert!(!sort(&mut [2.0f64, 1.0]));
        assert!(!sort(&mut [2.0f32, 1.0]));
        return;
    }
    // Ties, signed zeros, both infinities and values of every magnitude (no NaN: the
    // caller keeps them out).
    let value = |k: u64| match k % 7 {
        0 => f64::INFINITY,
        1 => f64::NEG_INFINITY,
        2 => -0.0,
        3 => 0.0,
        4 => (k % 5) as f64 - 2.0,
        _ => f64::from_bits(k >> 2) * if k & 1 == 0 { -1.0 } else { 1.0 },
    };
    for n in 0..=NET_MAX {
        for seed in [4, 5] {
            let v: Vec<f64> = keys(n, seed + n as u64, u64::MAX)
                .into_iter()
                .map(value)
                .collect();
            let v: Vec<f64> = v
                .into_iter()
                .map(|x| if x.is_nan() { 1.5 } else { x })
                .collect();
            let mut want = v.clone();
            want.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let mut got = v.clone();
            assert!(sort(&mut got));
            assert_eq!(got, want, "f64, n = {n}");
            let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            let mut want32 = v32.clone();
            want32.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let mut got32 = v32.clone();
            assert!(sort(&mut got32));
            assert_eq!(got32, want32, "f32, n = {n}");
        }
    }
}

/// The sort into another slice: the ascending sort where the lane holds no zero or NaN,
/// `false` with the destination untouched where it does (except for a lane sorted already,
/// which is its own sorted copy), and every integer lane sorted.
#[test]
fn sorts_untied_floats_into_another_slice() {
    if !crate::kernels::simd::has_avx512() {
        assert!(!sort_untied_into(&[2.0f64, 1.0], &mut [0.0; 2]));
        return;
    }
    for n in 0..=NET_MAX {
        for seed in [6, 7, 8] {
            let k = keys(n, seed + n as u64, 1000);
            // Odd values: no zeros, some repeated; one tie at a position that moves with n.
            let v: Vec<f64> = k.iter().map(|&x| (x % 1000) as f64 * 2.0 - 999.0).collect();
            let mut want = v.clone();
            want.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let mut got = vec![f64::NAN; n];
            assert!(sort_untied_into(&v, &mut got), "f64, n = {n}");
            assert_eq!(got, want, "f64, n = {n}");
            let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            let want32: Vec<f32> = want.iter().map(|&x| x as f32).collect();
            let mut got32 = vec![f32::NAN; n];
            assert!(sort_untied_into(&v32, &mut got32), "f32, n = {n}");
            assert_eq!(got32, want32, "f32, n = {n}");
            let mut got_u64 = vec![0; n];
            assert!(sort_untied_into(&k, &mut got_u64));
            let mut want_u64 = k.clone();
            want_u64.sort_unstable();
            assert_eq!(got_u64, want_u64);
            // Signed integers are never ties either (`u64::MAX` keys become -1).
            let signed: Vec<i64> = k.iter().map(|&x| x as i64 - 500).collect();
            let mut got_i64 = vec![7; n];
            assert!(sort_untied_into(&signed, &mut got_i64));
            let mut want_i64 = signed.clone();
            want_i64.sort_unstable();
            assert_eq!(got_i64, want_i64, "i64, n = {n}");
            let signed32: Vec<i32> = signed.iter().map(|&x| x as i32).collect();
            let mut got_i32 = vec![7; n];
            assert!(sort_untied_into(&signed32, &mut got_i32));
            let mut want_i32 = signed32.clone();
            want_i32.sort_unstable();
            assert_eq!(got_i32, want_i32, "i32, n = {n}");
            if n == 0 {
                continue;
            }
            let at = (seed as usize * 37 + n) % n;
            for tie in [0.0, -0.0, f64::NAN] {
                let mut tied = v.clone();
                tied[at] = tie;
                let mut dst = vec![5.5; n];
                assert!(!sort_untied_into(&tied, &mut dst), "{tie} at {at} of {n}");
                assert!(dst.iter().all(|&x| x == 5.5), "the destination untouched");
                let tied32: Vec<f32> = tied.iter().map(|&x| x as f32).collect();
                let mut dst32 = vec![5.5f32; n];
                assert!(
                    !sort_untied_into(&tied32, &mut dst32),
                    "f32 {tie} at {at} of {n}"
                );
                assert!(dst32.iter().all(|&x| x == 5.5));
            }
        }
    }
    // A sorted lane with ties is copied as it is (signed zeros in input order).
    let sorted: Vec<f64> = (0..100)
        .map(|i| match i {
            50 => -0.0,
            51 => 0.0,
            _ => i as f64 - 51.0,
        })
        .collect();
    let mut dst = vec![1.0; 100];
    assert!(sort_untied_into(&sorted, &mut dst));
    assert_eq!(
        dst.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        sorted.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert!(!sort_untied_into(
        &[1.0f64; NET_MAX + 1],
        &mut [0.0; NET_MAX + 1]
    ));
}
