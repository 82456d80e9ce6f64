//! Synthetic data sets built in the program (no downloads): bag-of-words documents with a
//! hidden linear rule, and interleaved spirals.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Documents as sparse rows: sorted unique feature ids with counts, and a label of ±1.
pub struct BagOfWords {
    /// Number of features (the vocabulary).
    pub features: usize,
    /// Per document: `(feature ids, counts)`, ids sorted and unique.
    pub docs: Vec<(Vec<i64>, Vec<f32>)>,
    /// Per document: +1 or -1.
    pub labels: Vec<f32>,
}

/// `n` documents over `features` words, about `words` words each. Word ids are drawn with a
/// heavy head (common words are frequent, as in text); hidden weights on half of the 5 000
/// most frequent words decide the label (rare words carry no signal, as in text), which is
/// flipped for 5% of documents.
pub fn bag_of_words(n: usize, features: usize, words: usize, seed: u64) -> BagOfWords {
    let mut rng = StdRng::seed_from_u64(seed);
    let hidden: Vec<f32> = (0..features)
        .map(|i| {
            if i < 5_000 && rng.random_bool(0.5) {
                rng.random_range(-1.0..1.0)
            } else {
                0.0
            }
        })
        .collect();
    let mut docs = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    for _ in 0..n {
        let mut ids: Vec<i64> = (0..words)
            .map(|_| {
                let u: f64 = rng.random();
                ((u * u) * features as f64) as i64
            })
            .collect();
        ids.sort_unstable();
        let mut uniq: Vec<i64> = Vec::new();
        let mut counts: Vec<f32> = Vec::new();
        for id in ids {
            if uniq.last() == Some(&id) {
                *counts.last_mut().expect("a count per id") += 1.0;
            } else {
                uniq.push(id);
                counts.push(1.0);
            }
        }
        let score: f32 = uniq
            .iter()
            .zip(&counts)
            .map(|(&i, &c)| hidden[i as usize] * c)
            .sum();
        let mut y = if score >= 0.0 { 1.0 } else { -1.0 };
        if rng.random_bool(0.05) {
            y = -y;
        }
        docs.push((uniq, counts));
        labels.push(y);
    }
    BagOfWords {
        features,
        docs,
        labels,
    }
}

/// Points of `classes` interleaved spiral arms in the plane, `per_class` each, with noise:
/// `(x, y)` pairs and class ids. No line separates them; a small MLP does.
pub fn spirals(per_class: usize, classes: usize, seed: u64) -> (Vec<[f32; 2]>, Vec<usize>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut points = Vec::with_capacity(per_class * classes);
    let mut labels = Vec::with_capacity(per_class * classes);
    for c in 0..classes {
        for i in 0..per_class {
            let r = i as f32 / per_class as f32;
            let t = c as f32 * 4.0 + r * 4.0 + rng.random_range(-0.2..0.2);
            points.push([r * t.sin(), r * t.cos()]);
            labels.push(c);
        }
    }
    (points, labels)
}

/// A shuffled split of `0..n` into a training and a held-out part (`held_out` of them).
pub fn split(n: usize, held_out: usize, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut idx: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        idx.swap(i, rng.random_range(0..=i));
    }
    let test = idx.split_off(n - held_out.min(n));
    (idx, test)
}

/// `n` draws from a normal distribution with standard deviation `std` (Box–Muller).
pub fn normal(rng: &mut StdRng, n: usize, std: f32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let u1: f32 = rng.random_range(f32::EPSILON..1.0);
            let u2: f32 = rng.random();
            std * (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
        })
        .collect()
}
