//! One body of vector code for three widths (docs/design.md P2): a function written once
//! against [`Lanes`] (of `f32`, or of `f64` with [`Lanes<f64>`]) runs on one lane
//! ([`Scalar`], the portable loop and the fallback for special values), on an AVX2 vector
//! ([`Avx2`]: eight `f32`, four `f64`) or on an AVX-512 one ([`Avx512`]: sixteen, eight).
//! Every width does the same
//! operations in the same order, each rounding as IEEE 754 says, so a result never depends
//! on the path that computed it; the loops' tests check it bit for bit.
//!
//! What the compiler does not vectorise by itself is the reason for this: a lookup in a
//! 16-entry table, which becomes one register permute on AVX-512 (`vpermps`; `vpermt2pd`
//! over two registers for `f64`) and two and a blend on AVX2 for `f32`, instead of a gather
//! (AVX2's `f64` lookup is one gather: four 64-bit lanes have no cheaper permute to 16
//! entries); and a test per vector that sends the rare block with a special input to the
//! scalar function ([`map_blocks`]), so the vector code carries no selects for it (the
//! hyperbolic functions, `hyperbolic.rs`).
//!
//! The x86 widths are tokens: a value of [`Avx2`] or [`Avx512`] exists only where the CPU
//! has the features its intrinsics need ([`Avx2::detect`], [`Avx512::detect`]). Their
//! methods are `#[inline(always)]`, so that a loop compiled with those features enabled
//! (`#[target_feature]`) inlines them into single instructions.

/// A float that lanes hold: `f32` or `f64`, with its bit-sized signed integer.
pub(crate) trait Elem: Copy + 'static {
    type Int: Copy;
}

impl Elem for f32 {
    type Int = i32;
}

impl Elem for f64 {
    type Int = i64;
}

/// The operations of lanes of `E` (`f32` unless said) that the vector functions use. `F`
/// holds `N` floats, `I` the same lanes as `E::Int` bits, `M` a mask of lanes, `T` a
/// 16-entry table ready for [`lookup`](Lanes::lookup).
pub(crate) trait Lanes<E: Elem = f32>: Copy {
    type F: Copy;
    type I: Copy;
    type M: Copy;
    type T: Copy;
    /// Lanes per vector.
    const N: usize;

    /// The first `N` elements of `x` (which has at least `N`).
    fn load(self, x: &[E]) -> Self::F;
    /// Writes `v` to the first `N` elements of `out` (which has at least `N`).
    fn store(self, out: &mut [E], v: Self::F);
    fn splat(self, x: E) -> Self::F;
    fn splat_i(self, x: E::Int) -> Self::I;
    fn add(self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(self, a: Self::F, b: Self::F) -> Self::F;
    fn div(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a b + c`, rounded once.
    fn fma(self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    fn sqrt(self, a: Self::F) -> Self::F;
    /// `a` where `a < b`, else `b` (so `b` where either is NaN): x86's `min` instruction.
    fn min(self, a: Self::F, b: Self::F) -> Self::F;
    fn abs(self, a: Self::F) -> Self::F;
    /// The magnitude of `mag` with the sign of `sign`.
    fn copysign(self, mag: Self::F, sign: Self::F) -> Self::F;
    fn bits(self, a: Self::F) -> Self::I;
    fn float_of_bits(self, a: Self::I) -> Self::F;
    /// Wrapping.
    fn add_i(self, a: Self::I, b: Self::I) -> Self::I;
    /// Wrapping.
    fn sub_i(self, a: Self::I, b: Self::I) -> Self::I;
    fn and_i(self, a: Self::I, b: Self::I) -> Self::I;
    fn min_i(self, a: Self::I, b: Self::I) -> Self::I;
    /// Logical shift right.
    fn srl<const S: u32>(self, a: Self::I) -> Self::I;
    /// Arithmetic shift right.
    fn sra<const S: u32>(self, a: Self::I) -> Self::I;
    fn sll<const S: u32>(self, a: Self::I) -> Self::I;
    /// The integer lanes converted to floats: exact for magnitudes below `2^24` (`f32`) or
    /// `2^51` (`f64`), which is all that the functions ask (larger ones are unspecified).
    fn to_float(self, a: Self::I) -> Self::F;
    fn table(self, t: &[E; 16]) -> Self::T;
    /// `t[i & 15]` in each lane.
    fn lookup(self, t: Self::T, i: Self::I) -> Self::F;
    /// `a == b` (false where either is NaN).
    fn eq(self, a: Self::F, b: Self::F) -> Self::M;
    /// `a > b` (false where either is NaN).
    fn gt(self, a: Self::F, b: Self::F) -> Self::M;
    /// `a` where `m` is set, `b` elsewhere.
    fn select(self, m: Self::M, a: Self::F, b: Self::F) -> Self::F;
    /// Whether any lane of `m` is set.
    fn any(self, m: Self::M) -> bool;
    /// Whether every lane of `m` is set.
    fn all(self, m: Self::M) -> bool;
    /// Whether every lane is positive, normal and finite (`false` if any lane is a zero, a
    /// subnormal, negative, infinite or NaN).
    fn all_positive_normal(self, a: Self::F) -> bool;
}

/// One lane: plain arithmetic (`mul_add` is one rounding on every CPU).
#[derive(Clone, Copy)]
pub(crate) struct Scalar;

/// [`Scalar`]'s lanes of `$t`, with `$i`/`$u` its signed and unsigned bits.
macro_rules! scalar_lanes {
    ($t:ident, $i:ident, $u:ident) => {
        impl Lanes<$t> for Scalar {
            type F = $t;
            type I = $i;
            type M = bool;
            type T = [$t; 16];
            const N: usize = 1;

            #[inline(always)]
            fn load(self, x: &[$t]) -> $t {
                x[0]
            }
            #[inline(always)]
            fn store(self, out: &mut [$t], v: $t) {
                out[0] = v;
            }
            #[inline(always)]
            fn splat(self, x: $t) -> $t {
                x
            }
            #[inline(always)]
            fn splat_i(self, x: $i) -> $i {
                x
            }
            #[inline(always)]
            fn add(self, a: $t, b: $t) -> $t {
                a + b
            }
            #[inline(always)]
            fn sub(self, a: $t, b: $t) -> $t {
                a - b
            }
            #[inline(always)]
            fn mul(self, a: $t, b: $t) -> $t {
                a * b
            }
            #[inline(always)]
            fn div(self, a: $t, b: $t) -> $t {
                a / b
            }
            #[inline(always)]
            fn fma(self, a: $t, b: $t, c: $t) -> $t {
                a.mul_add(b, c)
            }
            #[inline(always)]
            fn sqrt(self, a: $t) -> $t {
                a.sqrt()
            }
            #[inline(always)]
            fn min(self, a: $t, b: $t) -> $t {
                if a < b {
                    a
                } else {
                    b
                }
            }
            #[inline(always)]
            fn abs(self, a: $t) -> $t {
                a.abs()
            }
            #[inline(always)]
            fn copysign(self, mag: $t, sign: $t) -> $t {
                mag.copysign(sign)
            }
            #[inline(always)]
            fn bits(self, a: $t) -> $i {
                a.to_bits() as $i
            }
            #[inline(always)]
            fn float_of_bits(self, a: $i) -> $t {
                <$t>::from_bits(a as $u)
            }
            #[inline(always)]
            fn add_i(self, a: $i, b: $i) -> $i {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn sub_i(self, a: $i, b: $i) -> $i {
                a.wrapping_sub(b)
            }
            #[inline(always)]
            fn and_i(self, a: $i, b: $i) -> $i {
                a & b
            }
            #[inline(always)]
            fn min_i(self, a: $i, b: $i) -> $i {
                a.min(b)
            }
            #[inline(always)]
            fn srl<const S: u32>(self, a: $i) -> $i {
                ((a as $u) >> S) as $i
            }
            #[inline(always)]
            fn sra<const S: u32>(self, a: $i) -> $i {
                a >> S
            }
            #[inline(always)]
            fn sll<const S: u32>(self, a: $i) -> $i {
                a << S
            }
            #[inline(always)]
            fn to_float(self, a: $i) -> $t {
                a as $t
            }
            #[inline(always)]
            fn table(self, t: &[$t; 16]) -> [$t; 16] {
                *t
            }
            #[inline(always)]
            fn lookup(self, t: [$t; 16], i: $i) -> $t {
                t[(i & 15) as usize]
            }
            #[inline(always)]
            fn eq(self, a: $t, b: $t) -> bool {
                a == b
            }
            #[inline(always)]
            fn gt(self, a: $t, b: $t) -> bool {
                a > b
            }
            #[inline(always)]
            fn select(self, m: bool, a: $t, b: $t) -> $t {
                if m {
                    a
                } else {
                    b
                }
            }
            #[inline(always)]
            fn any(self, m: bool) -> bool {
                m
            }
            #[inline(always)]
            fn all(self, m: bool) -> bool {
                m
            }
            #[inline(always)]
            fn all_positive_normal(self, a: $t) -> bool {
                let min = <$t>::MIN_POSITIVE.to_bits();
                a.to_bits().wrapping_sub(min) < <$t>::INFINITY.to_bits() - min
            }
        }
    };
}

scalar_lanes!(f32, i32, u32);
scalar_lanes!(f64, i64, u64);

/// `out[i] = f(a[i])` over equal-length slices: `vector` on each block of `L::N` inputs,
/// which returns `None` (for the rare block with a special input) to send that block through
/// `scalar`, as it does the last `a.len() % L::N` inputs.
#[inline(always)]
pub(crate) fn map_blocks<E: Elem, L: Lanes<E>>(
    l: L,
    out: &mut [E],
    a: &[E],
    vector: impl Fn(L, L::F) -> Option<L::F>,
    scalar: impl Fn(E) -> E,
) {
    map_blocks_each(l, out, a, vector, |o, x| map_each(o, x, &scalar))
}

/// `out[i] = f(a[i])` over equal-length slices, one element at a time: the fallback loop of
/// [`map_blocks`] and of [`lanes_loop`]'s widths (inlined into each, with its features).
#[inline(always)]
pub(crate) fn map_each<E: Copy>(out: &mut [E], a: &[E], f: &impl Fn(E) -> E) {
    out.iter_mut().zip(a).for_each(|(o, &x)| *o = f(x));
}

/// [`map_blocks`] with the fallback as a loop, `each(out, a)`, which the vector loops of
/// [`lanes_loop`] compile out of line: inlined, the scalar function's constants took the upper
/// registers for the whole loop and pushed a vector of the `f64` `exp` loop to the stack,
/// which ran at one of two speeds with the stack's address (docs/performance.md,
/// forty-eighth session).
#[inline(always)]
pub(crate) fn map_blocks_each<E: Elem, L: Lanes<E>>(
    l: L,
    out: &mut [E],
    a: &[E],
    vector: impl Fn(L, L::F) -> Option<L::F>,
    each: impl Fn(&mut [E], &[E]),
) {
    let n = a.len().min(out.len());
    let (out, a) = (&mut out[..n], &a[..n]);
    let whole = n - n % L::N;
    for (o, x) in out[..whole]
        .chunks_exact_mut(L::N)
        .zip(a[..whole].chunks_exact(L::N))
    {
        match vector(l, l.load(x)) {
            Some(y) => l.store(o, y),
            None => each(o, x),
        }
    }
    if whole < n {
        each(&mut out[whole..], &a[whole..]);
    }
}

/// `pub(crate) fn $name(out, a)`: `out[i] = $scalar(a[i])` over equal-length slices of `$t`,
/// with `$lanes(l, &tables, x)` on one AVX-512 vector (16 `f32` or 8 `f64` lanes) or one AVX2
/// vector (8 or 4) where the CPU runs them, one lane elsewhere (the same body and bits);
/// `tables: |l| expr` builds the tables for width `l` once per call. Each vector width runs
/// the scalar function in its own loop out of line ([`map_blocks_each`]), compiled with the
/// width's features so that `mul_add` stays one instruction.
macro_rules! lanes_loop {
    ($(#[$doc:meta])* $name:ident, $t:ty, tables: |$l:ident| $tables:expr, $lanes:ident,
     $scalar:ident) => {
        $(#[$doc])*
        pub(crate) fn $name(out: &mut [$t], a: &[$t]) {
            use $crate::kernels::vmath::lanes::{map_blocks, map_blocks_each, map_each, Scalar};
            #[cfg(target_arch = "x86_64")]
            {
                use $crate::kernels::vmath::lanes::{Avx2, Avx512};
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
                #[cold]
                #[inline(never)]
                fn widest_each(out: &mut [$t], a: &[$t]) {
                    map_each(out, a, &$scalar)
                }
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
                fn widest($l: Avx512, out: &mut [$t], a: &[$t]) {
                    let t = $tables;
                    // A safe call: the closure has `widest`'s features, which are `widest_each`'s.
                    let each = |o: &mut [$t], x: &[$t]| widest_each(o, x);
                    map_blocks_each($l, out, a, |l, x| $lanes(l, &t, x), each)
                }
                #[target_feature(enable = "avx2,fma")]
                #[cold]
                #[inline(never)]
                fn wide_each(out: &mut [$t], a: &[$t]) {
                    map_each(out, a, &$scalar)
                }
                #[target_feature(enable = "avx2,fma")]
                fn wide($l: Avx2, out: &mut [$t], a: &[$t]) {
                    let t = $tables;
                    let each = |o: &mut [$t], x: &[$t]| wide_each(o, x);
                    map_blocks_each($l, out, a, |l, x| $lanes(l, &t, x), each)
                }
                if let Some(l) = Avx512::detect() {
                    // SAFETY: the token proves the features `widest` enables.
                    return unsafe { widest(l, out, a) };
                }
                if let Some(l) = Avx2::detect() {
                    // SAFETY: the token proves the features `wide` enables.
                    return unsafe { wide(l, out, a) };
                }
            }
            let $l = Scalar;
            let t = $tables;
            map_blocks($l, out, a, |l, x| $lanes(l, &t, x), $scalar)
        }
    };
}
pub(super) use lanes_loop;

/// `$body` in an `unsafe` block whose only obligation is the CPU's features.
#[cfg(target_arch = "x86_64")]
macro_rules! featured {
    ($body:expr) => {
        // SAFETY: a token of this width exists only where `detect` found the features
        // its intrinsics need; `load` and `store` assert the length they access, and
        // `lookup`'s gathers read `i & 15` of a 16-entry table.
        unsafe { $body }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) use {avx2::Avx2, avx512::Avx512};

#[cfg(test)]
mod tests {
    use super::*;

    /// `all_positive_normal` on `l` against `x > 0 && x.is_normal()`, with each of
    /// `specials` alone among normal lanes, in every lane position (so a width that missed
    /// one class, or one lane, fails), and filling every lane.
    fn check<E, L>(l: L, specials: &[E], normal: E, reference: impl Fn(E) -> bool)
    where
        E: Elem + std::fmt::Debug,
        L: Lanes<E>,
    {
        let mut lanes = vec![normal; L::N];
        assert!(l.all_positive_normal(l.load(&lanes)));
        for &x in specials {
            for at in 0..L::N {
                lanes.fill(normal);
                lanes[at] = x;
                let got = l.all_positive_normal(l.load(&lanes));
                assert_eq!(got, reference(x), "{x:?} in lane {at} of {}", L::N);
            }
            let got = l.all_positive_normal(l.load(&vec![x; L::N]));
            assert_eq!(got, reference(x), "{x:?} in every lane of {}", L::N);
        }
    }

    macro_rules! specials {
        ($t:ident, $sign:expr, $quiet:expr) => {{
            let top = $t::MIN_POSITIVE.to_bits() - 1;
            let mut v = Vec::new();
            for x in [
                0.0,
                $t::from_bits(1),
                $t::from_bits(top),
                $t::MIN_POSITIVE,
                $t::from_bits($t::MIN_POSITIVE.to_bits() + 1),
                1.0,
                $t::MAX,
                $t::INFINITY,
                $t::NAN,
                $t::from_bits($t::INFINITY.to_bits() | 1),
                $t::from_bits($t::INFINITY.to_bits() | $quiet),
            ] {
                v.push(x);
                v.push($t::from_bits(x.to_bits() ^ $sign));
            }
            v
        }};
    }

    fn f32_cases() -> Vec<f32> {
        specials!(f32, 1 << 31, 1 << 22)
    }

    fn f64_cases() -> Vec<f64> {
        specials!(f64, 1 << 63, 1 << 51)
    }

    #[test]
    fn all_positive_normal_flags_each_class_in_each_lane() {
        let reference32 = |x: f32| x > 0.0 && x.is_normal();
        let reference64 = |x: f64| x > 0.0 && x.is_normal();
        check::<f32, _>(Scalar, &f32_cases(), 1.5, reference32);
        check::<f64, _>(Scalar, &f64_cases(), 1.5, reference64);
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(l) = Avx2::detect() {
                check::<f32, _>(l, &f32_cases(), 1.5, reference32);
                check::<f64, _>(l, &f64_cases(), 1.5, reference64);
            }
            if let Some(l) = Avx512::detect() {
                check::<f32, _>(l, &f32_cases(), 1.5, reference32);
                check::<f64, _>(l, &f64_cases(), 1.5, reference64);
            }
        }
    }
}
