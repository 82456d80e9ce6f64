//! The AVX2 width (with FMA): eight `f32` or four `f64` lanes a vector.

use super::Lanes;
use crate::kernels::simd::has_avx2;
use std::arch::x86_64::*;

/// The span of bits from the smallest positive normal to infinity, for `all_positive_normal`.
const F32_SPAN: i32 = (f32::INFINITY.to_bits() - f32::MIN_POSITIVE.to_bits()) as i32;
const F64_SPAN: i64 = (f64::INFINITY.to_bits() - f64::MIN_POSITIVE.to_bits()) as i64;

/// One AVX2 vector (with FMA): eight `f32` or four `f64` lanes. Exists only where the CPU
/// has both.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// The token, where the CPU runs AVX2 and FMA.
    pub(crate) fn detect() -> Option<Self> {
        has_avx2().then_some(Avx2(()))
    }
}

impl Lanes<f32> for Avx2 {
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
    fn min(self, a: __m256, b: __m256) -> __m256 {
        featured!(_mm256_min_ps(a, b))
    }
    #[inline(always)]
    fn abs(self, a: __m256) -> __m256 {
        let mag = Lanes::<f32>::splat_i(self, i32::MAX);
        featured!(_mm256_castsi256_ps(_mm256_and_si256(
            _mm256_castps_si256(a),
            mag
        )))
    }
    #[inline(always)]
    fn copysign(self, mag: __m256, sign: __m256) -> __m256 {
        let s = Lanes::<f32>::splat(self, -0.0);
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
        (Lanes::<f32>::load(self, lo), Lanes::<f32>::load(self, hi))
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
    #[inline(always)]
    fn all(self, m: __m256) -> bool {
        featured!(_mm256_movemask_ps(m)) == 0xff
    }
    /// The unsigned comparison made of two signed ones (the span is below `2^31`):
    /// `0 <= v < span`.
    #[inline(always)]
    fn all_positive_normal(self, a: __m256) -> bool {
        let v = Lanes::<f32>::sub_i(
            self,
            Lanes::<f32>::bits(self, a),
            Lanes::<f32>::splat_i(self, f32::MIN_POSITIVE.to_bits() as i32),
        );
        let span = Lanes::<f32>::splat_i(self, F32_SPAN);
        featured!({
            let ok = _mm256_andnot_si256(
                _mm256_cmpgt_epi32(_mm256_setzero_si256(), v),
                _mm256_cmpgt_epi32(span, v),
            );
            _mm256_movemask_epi8(ok) == -1
        })
    }
}

impl Lanes<f64> for Avx2 {
    type F = __m256d;
    type I = __m256i;
    type M = __m256d;
    /// AVX2 has no permute across four 64-bit lanes by a vector of indices that reaches
    /// 16 entries in fewer instructions than a gather; the table stays in memory.
    type T = [f64; 16];
    const N: usize = 4;

    #[inline(always)]
    fn load(self, x: &[f64]) -> __m256d {
        assert!(x.len() >= 4);
        featured!(_mm256_loadu_pd(x.as_ptr()))
    }
    #[inline(always)]
    fn store(self, out: &mut [f64], v: __m256d) {
        assert!(out.len() >= 4);
        featured!(_mm256_storeu_pd(out.as_mut_ptr(), v))
    }
    #[inline(always)]
    fn splat(self, x: f64) -> __m256d {
        featured!(_mm256_set1_pd(x))
    }
    #[inline(always)]
    fn splat_i(self, x: i64) -> __m256i {
        featured!(_mm256_set1_epi64x(x))
    }
    #[inline(always)]
    fn add(self, a: __m256d, b: __m256d) -> __m256d {
        featured!(_mm256_add_pd(a, b))
    }
    #[inline(always)]
    fn sub(self, a: __m256d, b: __m256d) -> __m256d {
        featured!(_mm256_sub_pd(a, b))
    }
    #[inline(always)]
    fn mul(self, a: __m256d, b: __m256d) -> __m256d {
        featured!(_mm256_mul_pd(a, b))
    }
    #[inline(always)]
    fn div(self, a: __m256d, b: __m256d) -> __m256d {
        featured!(_mm256_div_pd(a, b))
    }
    #[inline(always)]
    fn fma(self, a: __m256d, b: __m256d, c: __m256d) -> __m256d {
        featured!(_mm256_fmadd_pd(a, b, c))
    }
    #[inline(always)]
    fn sqrt(self, a: __m256d) -> __m256d {
        featured!(_mm256_sqrt_pd(a))
    }
    #[inline(always)]
    fn min(self, a: __m256d, b: __m256d) -> __m256d {
        featured!(_mm256_min_pd(a, b))
    }
    #[inline(always)]
    fn abs(self, a: __m256d) -> __m256d {
        let s = Lanes::<f64>::splat(self, -0.0);
        featured!(_mm256_andnot_pd(s, a))
    }
    #[inline(always)]
    fn copysign(self, mag: __m256d, sign: __m256d) -> __m256d {
        let s = Lanes::<f64>::splat(self, -0.0);
        featured!(_mm256_or_pd(
            _mm256_andnot_pd(s, mag),
            _mm256_and_pd(s, sign)
        ))
    }
    #[inline(always)]
    fn bits(self, a: __m256d) -> __m256i {
        featured!(_mm256_castpd_si256(a))
    }
    #[inline(always)]
    fn float_of_bits(self, a: __m256i) -> __m256d {
        featured!(_mm256_castsi256_pd(a))
    }
    #[inline(always)]
    fn add_i(self, a: __m256i, b: __m256i) -> __m256i {
        featured!(_mm256_add_epi64(a, b))
    }
    #[inline(always)]
    fn sub_i(self, a: __m256i, b: __m256i) -> __m256i {
        featured!(_mm256_sub_epi64(a, b))
    }
    #[inline(always)]
    fn and_i(self, a: __m256i, b: __m256i) -> __m256i {
        featured!(_mm256_and_si256(a, b))
    }
    /// AVX2 has no 64-bit minimum: a comparison and a blend.
    #[inline(always)]
    fn min_i(self, a: __m256i, b: __m256i) -> __m256i {
        featured!(_mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b)))
    }
    #[inline(always)]
    fn srl<const S: u32>(self, a: __m256i) -> __m256i {
        featured!(_mm256_srl_epi64(a, _mm_cvtsi32_si128(S as i32)))
    }
    /// AVX2 has no 64-bit arithmetic shift: the logical one, with the sign bit (now at bit
    /// `63 - S`) extended by `(v ^ m) - m`.
    #[inline(always)]
    fn sra<const S: u32>(self, a: __m256i) -> __m256i {
        let m = Lanes::<f64>::splat_i(self, ((1u64 << 63) >> S) as i64);
        Lanes::<f64>::sub_i(
            self,
            featured!(_mm256_xor_si256(Lanes::<f64>::srl::<S>(self, a), m)),
            m,
        )
    }
    #[inline(always)]
    fn sll<const S: u32>(self, a: __m256i) -> __m256i {
        featured!(_mm256_sll_epi64(a, _mm_cvtsi32_si128(S as i32)))
    }
    /// AVX2 has no 64-bit conversion: `a` added to the bits of `1.5 2^52`, whose ulp is 1,
    /// then `1.5 2^52` subtracted (exact for `|a| < 2^51`).
    #[inline(always)]
    fn to_float(self, a: __m256i) -> __m256d {
        let magic = Lanes::<f64>::splat(self, 1.5 * (1u64 << 52) as f64);
        Lanes::<f64>::sub(
            self,
            Lanes::<f64>::float_of_bits(
                self,
                Lanes::<f64>::add_i(self, a, Lanes::<f64>::bits(self, magic)),
            ),
            magic,
        )
    }
    #[inline(always)]
    fn table(self, t: &[f64; 16]) -> [f64; 16] {
        *t
    }
    /// One gather of `t[i & 15]`.
    #[inline(always)]
    fn lookup(self, t: [f64; 16], i: __m256i) -> __m256d {
        let i = Lanes::<f64>::and_i(self, i, Lanes::<f64>::splat_i(self, 15));
        featured!(_mm256_i64gather_pd::<8>(t.as_ptr(), i))
    }
    #[inline(always)]
    fn eq(self, a: __m256d, b: __m256d) -> __m256d {
        featured!(_mm256_cmp_pd::<_CMP_EQ_OQ>(a, b))
    }
    #[inline(always)]
    fn gt(self, a: __m256d, b: __m256d) -> __m256d {
        featured!(_mm256_cmp_pd::<_CMP_GT_OQ>(a, b))
    }
    #[inline(always)]
    fn select(self, m: __m256d, a: __m256d, b: __m256d) -> __m256d {
        featured!(_mm256_blendv_pd(b, a, m))
    }
    #[inline(always)]
    fn any(self, m: __m256d) -> bool {
        featured!(_mm256_movemask_pd(m)) != 0
    }
    #[inline(always)]
    fn all(self, m: __m256d) -> bool {
        featured!(_mm256_movemask_pd(m)) == 0xf
    }
    /// As for `f32`, from two signed comparisons (the span is below `2^63`).
    #[inline(always)]
    fn all_positive_normal(self, a: __m256d) -> bool {
        let v = Lanes::<f64>::sub_i(
            self,
            Lanes::<f64>::bits(self, a),
            Lanes::<f64>::splat_i(self, f64::MIN_POSITIVE.to_bits() as i64),
        );
        let span = Lanes::<f64>::splat_i(self, F64_SPAN);
        featured!({
            let ok = _mm256_andnot_si256(
                _mm256_cmpgt_epi64(_mm256_setzero_si256(), v),
                _mm256_cmpgt_epi64(span, v),
            );
            _mm256_movemask_epi8(ok) == -1
        })
    }
}
