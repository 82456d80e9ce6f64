//! One body of `f32` vector code for three widths (docs/design.md P2): a function written
//! once against [`Lanes`] runs on one lane ([`Scalar`], the portable loop and the fallback
//! for special values), eight ([`Avx2`]) or sixteen ([`Avx512`]). Every width does the same
//! operations in the same order, each rounding as IEEE 754 says, so a result never depends
//! on the path that computed it; the loops' tests check it bit for bit.
//!
//! What the compiler does not vectorise by itself is the reason for this: a lookup in a
//! 16-entry table, which becomes one register permute on AVX-512 (two and a blend on AVX2)
//! instead of a gather.
//!
//! The x86 widths are tokens: a value of [`Avx2`] or [`Avx512`] exists only where the CPU
//! has the features its intrinsics need ([`Avx2::detect`], [`Avx512::detect`]). Their
//! methods are `#[inline(always)]`, so that a loop compiled with those features enabled
//! (`#[target_feature]`) inlines them into single instructions.

/// The operations of `f32` lanes that the vector functions use. `F` holds `N` floats, `I`
/// the same lanes as `i32` bits, `M` a mask of lanes, `T` a 16-entry table ready for
/// [`lookup`](Lanes::lookup).
pub(crate) trait Lanes: Copy {
    type F: Copy;
    type I: Copy;
    type M: Copy;
    type T: Copy;
    /// Lanes per vector.
    const N: usize;

    /// The first `N` elements of `x` (which has at least `N`).
    fn load(self, x: &[f32]) -> Self::F;
    /// Writes `v` to the first `N` elements of `out` (which has at least `N`).
    fn store(self, out: &mut [f32], v: Self::F);
    fn splat(self, x: f32) -> Self::F;
    fn splat_i(self, x: i32) -> Self::I;
    fn add(self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(self, a: Self::F, b: Self::F) -> Self::F;
    fn div(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a b + c`, rounded once.
    fn fma(self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    fn sqrt(self, a: Self::F) -> Self::F;
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
    /// The integer lanes converted to `f32` (exact below `2^24`).
    fn to_float(self, a: Self::I) -> Self::F;
    fn table(self, t: &[f32; 16]) -> Self::T;
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
    /// Whether every lane is positive, normal and finite: its bits minus the smallest normal's
    /// (wrapping) are below the span up to infinity's, unsigned (zeros, subnormals and
    /// negatives wrap to the top; infinities and NaNs are above).
    fn all_positive_normal(self, a: Self::F) -> bool;
}

/// The bits of the smallest positive normal `f32`, and the span from them to infinity's.
const MIN_BITS: u32 = f32::MIN_POSITIVE.to_bits();
const SPAN: u32 = f32::INFINITY.to_bits() - MIN_BITS;

/// One lane: plain `f32` arithmetic (`mul_add` is one rounding on every CPU).
#[derive(Clone, Copy)]
pub(crate) struct Scalar;

impl Lanes for Scalar {
    type F = f32;
    type I = i32;
    type M = bool;
    type T = [f32; 16];
    const N: usize = 1;

    #[inline(always)]
    fn load(self, x: &[f32]) -> f32 {
        x[0]
    }
    #[inline(always)]
    fn store(self, out: &mut [f32], v: f32) {
        out[0] = v;
    }
    #[inline(always)]
    fn splat(self, x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn splat_i(self, x: i32) -> i32 {
        x
    }
    #[inline(always)]
    fn add(self, a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    fn sub(self, a: f32, b: f32) -> f32 {
        a - b
    }
    #[inline(always)]
    fn mul(self, a: f32, b: f32) -> f32 {
        a * b
    }
    #[inline(always)]
    fn div(self, a: f32, b: f32) -> f32 {
        a / b
    }
    #[inline(always)]
    fn fma(self, a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    #[inline(always)]
    fn sqrt(self, a: f32) -> f32 {
        a.sqrt()
    }
    #[inline(always)]
    fn abs(self, a: f32) -> f32 {
        a.abs()
    }
    #[inline(always)]
    fn copysign(self, mag: f32, sign: f32) -> f32 {
        mag.copysign(sign)
    }
    #[inline(always)]
    fn bits(self, a: f32) -> i32 {
        a.to_bits() as i32
    }
    #[inline(always)]
    fn float_of_bits(self, a: i32) -> f32 {
        f32::from_bits(a as u32)
    }
    #[inline(always)]
    fn add_i(self, a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn sub_i(self, a: i32, b: i32) -> i32 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    fn and_i(self, a: i32, b: i32) -> i32 {
        a & b
    }
    #[inline(always)]
    fn min_i(self, a: i32, b: i32) -> i32 {
        a.min(b)
    }
    #[inline(always)]
    fn srl<const S: u32>(self, a: i32) -> i32 {
        ((a as u32) >> S) as i32
    }
    #[inline(always)]
    fn sra<const S: u32>(self, a: i32) -> i32 {
        a >> S
    }
    #[inline(always)]
    fn sll<const S: u32>(self, a: i32) -> i32 {
        a << S
    }
    #[inline(always)]
    fn to_float(self, a: i32) -> f32 {
        a as f32
    }
    #[inline(always)]
    fn table(self, t: &[f32; 16]) -> [f32; 16] {
        *t
    }
    #[inline(always)]
    fn lookup(self, t: [f32; 16], i: i32) -> f32 {
        t[(i & 15) as usize]
    }
    #[inline(always)]
    fn eq(self, a: f32, b: f32) -> bool {
        a == b
    }
    #[inline(always)]
    fn gt(self, a: f32, b: f32) -> bool {
        a > b
    }
    #[inline(always)]
    fn select(self, m: bool, a: f32, b: f32) -> f32 {
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
    fn all_positive_normal(self, a: f32) -> bool {
        a.to_bits().wrapping_sub(MIN_BITS) < SPAN
    }
}

/// `out[i] = f(a[i])` over equal-length slices: `vector` on each block of `L::N` inputs,
/// which returns `None` (for the rare block with a special input) to send that block through
/// `scalar`, as it does the last `a.len() % L::N` inputs.
#[inline(always)]
pub(crate) fn map_blocks<L: Lanes>(
    l: L,
    out: &mut [f32],
    a: &[f32],
    vector: impl Fn(L, L::F) -> Option<L::F>,
    scalar: impl Fn(f32) -> f32,
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
            None => o.iter_mut().zip(x).for_each(|(o, &x)| *o = scalar(x)),
        }
    }
    for (o, &x) in out[whole..].iter_mut().zip(&a[whole..]) {
        *o = scalar(x);
    }
}

/// `pub(crate) fn $name(out, a)`: `out[i] = $scalar(a[i])` over equal-length slices, with
/// `$lanes(l, &tables, x)` on 16 lanes (AVX-512) or 8 (AVX2) where the CPU runs them, one
/// lane elsewhere (the same body and bits); `tables: |l| expr` builds the tables for width
/// `l` once per call.
macro_rules! lanes_loop {
    ($(#[$doc:meta])* $name:ident, tables: |$l:ident| $tables:expr, $lanes:ident,
     $scalar:ident) => {
        $(#[$doc])*
        pub(crate) fn $name(out: &mut [f32], a: &[f32]) {
            use $crate::kernels::vmath::lanes::{map_blocks, Scalar};
            #[cfg(target_arch = "x86_64")]
            {
                use $crate::kernels::vmath::lanes::{Avx2, Avx512};
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
                fn widest($l: Avx512, out: &mut [f32], a: &[f32]) {
                    let t = $tables;
                    map_blocks($l, out, a, |l, x| $lanes(l, &t, x), $scalar)
                }
                #[target_feature(enable = "avx2,fma")]
                fn wide($l: Avx2, out: &mut [f32], a: &[f32]) {
                    let t = $tables;
                    map_blocks($l, out, a, |l, x| $lanes(l, &t, x), $scalar)
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

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The AVX2 and AVX-512 widths.

    use super::{Lanes, MIN_BITS, SPAN};
    use crate::kernels::simd::{has_avx2, has_avx512};
    use std::arch::x86_64::*;

    /// Eight lanes of AVX2 with FMA. Exists only where the CPU has both.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx2(());

    impl Avx2 {
        /// The token, where the CPU runs AVX2 and FMA.
        pub(crate) fn detect() -> Option<Self> {
            has_avx2().then_some(Avx2(()))
        }
    }

    /// Sixteen lanes of AVX-512 (F, VL, DQ, BW, with AVX2 and FMA). Exists only where the
    /// CPU has them.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx512(());

    impl Avx512 {
        /// The token, where the CPU runs AVX-512 F, VL, DQ and BW, AVX2 and FMA.
        pub(crate) fn detect() -> Option<Self> {
            has_avx512().then_some(Avx512(()))
        }
    }

    /// `$body` in an `unsafe` block whose only obligation is the CPU's features.
    macro_rules! featured {
        ($body:expr) => {
            // SAFETY: a token of this width exists only where `detect` found the features
            // its intrinsics need; `load` and `store` assert the length they access.
            unsafe { $body }
        };
    }

    impl Lanes for Avx2 {
        type F = __m256;
        type I = __m256i;
        type M = __m256;
        type T = (__m256, __m256);
        const N: usize = 8;

        #[inline(always)]
        fn load(self, x: &[f32]) -> __m256 {
            assert!(x.len() >= 8);
            featured!(_mm256_loadu_ps(x.as_ptr()))
        }
        #[inline(always)]
        fn store(self, out: &mut [f32], v: __m256) {
            assert!(out.len() >= 8);
            featured!(_mm256_storeu_ps(out.as_mut_ptr(), v))
        }
        #[inline(always)]
        fn splat(self, x: f32) -> __m256 {
            featured!(_mm256_set1_ps(x))
        }
        #[inline(always)]
        fn splat_i(self, x: i32) -> __m256i {
            featured!(_mm256_set1_epi32(x))
        }
        #[inline(always)]
        fn add(self, a: __m256, b: __m256) -> __m256 {
            featured!(_mm256_add_ps(a, b))
        }
        #[inline(always)]
        fn sub(self, a: __m256, b: __m256) -> __m256 {
            featured!(_mm256_sub_ps(a, b))
        }
        #[inline(always)]
        fn mul(self, a: __m256, b: __m256) -> __m256 {
            featured!(_mm256_mul_ps(a, b))
        }
        #[inline(always)]
        fn div(self, a: __m256, b: __m256) -> __m256 {
            featured!(_mm256_div_ps(a, b))
        }
        #[inline(always)]
        fn fma(self, a: __m256, b: __m256, c: __m256) -> __m256 {
            featured!(_mm256_fmadd_ps(a, b, c))
        }
        #[inline(always)]
        fn sqrt(self, a: __m256) -> __m256 {
            featured!(_mm256_sqrt_ps(a))
        }
        #[inline(always)]
        fn abs(self, a: __m256) -> __m256 {
            let mag = self.splat_i(i32::MAX);
            featured!(_mm256_castsi256_ps(_mm256_and_si256(
                _mm256_castps_si256(a),
                mag
            )))
        }
        #[inline(always)]
        fn copysign(self, mag: __m256, sign: __m256) -> __m256 {
            let s = self.splat(-0.0);
            featured!(_mm256_or_ps(
                _mm256_andnot_ps(s, mag),
                _mm256_and_ps(s, sign)
            ))
        }
        #[inline(always)]
        fn bits(self, a: __m256) -> __m256i {
            featured!(_mm256_castps_si256(a))
        }
        #[inline(always)]
        fn float_of_bits(self, a: __m256i) -> __m256 {
            featured!(_mm256_castsi256_ps(a))
        }
        #[inline(always)]
        fn add_i(self, a: __m256i, b: __m256i) -> __m256i {
            featured!(_mm256_add_epi32(a, b))
        }
        #[inline(always)]
        fn sub_i(self, a: __m256i, b: __m256i) -> __m256i {
            featured!(_mm256_sub_epi32(a, b))
        }
        #[inline(always)]
        fn and_i(self, a: __m256i, b: __m256i) -> __m256i {
            featured!(_mm256_and_si256(a, b))
        }
        #[inline(always)]
        fn min_i(self, a: __m256i, b: __m256i) -> __m256i {
            featured!(_mm256_min_epi32(a, b))
        }
        // The shifts take their count in a register: AVX2's immediate forms want an `i32`
        // constant, which the `u32` parameter cannot become on stable Rust. LLVM folds the
        // constant count back into the immediate form.
        #[inline(always)]
        fn srl<const S: u32>(self, a: __m256i) -> __m256i {
            featured!(_mm256_srl_epi32(a, _mm_cvtsi32_si128(S as i32)))
        }
        #[inline(always)]
        fn sra<const S: u32>(self, a: __m256i) -> __m256i {
            featured!(_mm256_sra_epi32(a, _mm_cvtsi32_si128(S as i32)))
        }
        #[inline(always)]
        fn sll<const S: u32>(self, a: __m256i) -> __m256i {
            featured!(_mm256_sll_epi32(a, _mm_cvtsi32_si128(S as i32)))
        }
        #[inline(always)]
        fn to_float(self, a: __m256i) -> __m256 {
            featured!(_mm256_cvtepi32_ps(a))
        }
        #[inline(always)]
        fn table(self, t: &[f32; 16]) -> (__m256, __m256) {
            let (lo, hi) = t.split_at(8);
            (self.load(lo), self.load(hi))
        }
        /// The two halves permuted by `i & 7`, the upper taken where bit 3 of `i` is set
        /// (moved to the sign bit, which `blendv` reads).
        #[inline(always)]
        fn lookup(self, t: (__m256, __m256), i: __m256i) -> __m256 {
            featured!(_mm256_blendv_ps(
                _mm256_permutevar8x32_ps(t.0, i),
                _mm256_permutevar8x32_ps(t.1, i),
                _mm256_castsi256_ps(_mm256_slli_epi32::<28>(i)),
            ))
        }
        #[inline(always)]
        fn eq(self, a: __m256, b: __m256) -> __m256 {
            featured!(_mm256_cmp_ps::<_CMP_EQ_OQ>(a, b))
        }
        #[inline(always)]
        fn gt(self, a: __m256, b: __m256) -> __m256 {
            featured!(_mm256_cmp_ps::<_CMP_GT_OQ>(a, b))
        }
        #[inline(always)]
        fn select(self, m: __m256, a: __m256, b: __m256) -> __m256 {
            featured!(_mm256_blendv_ps(b, a, m))
        }
        #[inline(always)]
        fn any(self, m: __m256) -> bool {
            featured!(_mm256_movemask_ps(m)) != 0
        }
        /// The unsigned comparison made of two signed ones (`SPAN` is below `2^31`):
        /// `0 <= v < SPAN`.
        #[inline(always)]
        fn all_positive_normal(self, a: __m256) -> bool {
            let v = self.sub_i(self.bits(a), self.splat_i(MIN_BITS as i32));
            let span = self.splat_i(SPAN as i32);
            featured!({
                let ok = _mm256_andnot_si256(
                    _mm256_cmpgt_epi32(_mm256_setzero_si256(), v),
                    _mm256_cmpgt_epi32(span, v),
                );
                _mm256_movemask_epi8(ok) == -1
            })
        }
    }

    impl Lanes for Avx512 {
        type F = __m512;
        type I = __m512i;
        type M = __mmask16;
        type T = __m512;
        const N: usize = 16;

        #[inline(always)]
        fn load(self, x: &[f32]) -> __m512 {
            assert!(x.len() >= 16);
            featured!(_mm512_loadu_ps(x.as_ptr()))
        }
        #[inline(always)]
        fn store(self, out: &mut [f32], v: __m512) {
            assert!(out.len() >= 16);
            featured!(_mm512_storeu_ps(out.as_mut_ptr(), v))
        }
        #[inline(always)]
        fn splat(self, x: f32) -> __m512 {
            featured!(_mm512_set1_ps(x))
        }
        #[inline(always)]
        fn splat_i(self, x: i32) -> __m512i {
            featured!(_mm512_set1_epi32(x))
        }
        #[inline(always)]
        fn add(self, a: __m512, b: __m512) -> __m512 {
            featured!(_mm512_add_ps(a, b))
        }
        #[inline(always)]
        fn sub(self, a: __m512, b: __m512) -> __m512 {
            featured!(_mm512_sub_ps(a, b))
        }
        #[inline(always)]
        fn mul(self, a: __m512, b: __m512) -> __m512 {
            featured!(_mm512_mul_ps(a, b))
        }
        #[inline(always)]
        fn div(self, a: __m512, b: __m512) -> __m512 {
            featured!(_mm512_div_ps(a, b))
        }
        #[inline(always)]
        fn fma(self, a: __m512, b: __m512, c: __m512) -> __m512 {
            featured!(_mm512_fmadd_ps(a, b, c))
        }
        #[inline(always)]
        fn sqrt(self, a: __m512) -> __m512 {
            featured!(_mm512_sqrt_ps(a))
        }
        #[inline(always)]
        fn abs(self, a: __m512) -> __m512 {
            featured!(_mm512_abs_ps(a))
        }
        /// One ternary-logic instruction (`0xca`: `a ? b : c` bit by bit): the sign bit from
        /// `sign`, the rest from `mag`.
        #[inline(always)]
        fn copysign(self, mag: __m512, sign: __m512) -> __m512 {
            let m = self.splat_i(i32::MAX);
            featured!(_mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0xca>(
                m,
                _mm512_castps_si512(mag),
                _mm512_castps_si512(sign),
            )))
        }
        #[inline(always)]
        fn bits(self, a: __m512) -> __m512i {
            featured!(_mm512_castps_si512(a))
        }
        #[inline(always)]
        fn float_of_bits(self, a: __m512i) -> __m512 {
            featured!(_mm512_castsi512_ps(a))
        }
        #[inline(always)]
        fn add_i(self, a: __m512i, b: __m512i) -> __m512i {
            featured!(_mm512_add_epi32(a, b))
        }
        #[inline(always)]
        fn sub_i(self, a: __m512i, b: __m512i) -> __m512i {
            featured!(_mm512_sub_epi32(a, b))
        }
        #[inline(always)]
        fn and_i(self, a: __m512i, b: __m512i) -> __m512i {
            featured!(_mm512_and_si512(a, b))
        }
        #[inline(always)]
        fn min_i(self, a: __m512i, b: __m512i) -> __m512i {
            featured!(_mm512_min_epi32(a, b))
        }
        #[inline(always)]
        fn srl<const S: u32>(self, a: __m512i) -> __m512i {
            featured!(_mm512_srli_epi32::<S>(a))
        }
        #[inline(always)]
        fn sra<const S: u32>(self, a: __m512i) -> __m512i {
            featured!(_mm512_srai_epi32::<S>(a))
        }
        #[inline(always)]
        fn sll<const S: u32>(self, a: __m512i) -> __m512i {
            featured!(_mm512_slli_epi32::<S>(a))
        }
        #[inline(always)]
        fn to_float(self, a: __m512i) -> __m512 {
            featured!(_mm512_cvtepi32_ps(a))
        }
        #[inline(always)]
        fn table(self, t: &[f32; 16]) -> __m512 {
            self.load(t)
        }
        /// One `vpermps`, which reads the low four bits of each index lane.
        #[inline(always)]
        fn lookup(self, t: __m512, i: __m512i) -> __m512 {
            featured!(_mm512_permutexvar_ps(i, t))
        }
        #[inline(always)]
        fn eq(self, a: __m512, b: __m512) -> __mmask16 {
            featured!(_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b))
        }
        #[inline(always)]
        fn gt(self, a: __m512, b: __m512) -> __mmask16 {
            featured!(_mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b))
        }
        #[inline(always)]
        fn select(self, m: __mmask16, a: __m512, b: __m512) -> __m512 {
            featured!(_mm512_mask_blend_ps(m, b, a))
        }
        #[inline(always)]
        fn any(self, m: __mmask16) -> bool {
            m != 0
        }
        #[inline(always)]
        fn all_positive_normal(self, a: __m512) -> bool {
            let v = self.sub_i(self.bits(a), self.splat_i(MIN_BITS as i32));
            let span = self.splat_i(SPAN as i32);
            featured!(_mm512_cmplt_epu32_mask(v, span)) == u16::MAX
        }
    }
}
