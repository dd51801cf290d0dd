#pragma once
// Vectorised float32 math for the CPU kernels that need exponentials: exp and erf eight lanes at
// a time with AVX2 (where the build targets it), with scalar forms that compute the same
// values. GCC leaves libm's expf and erff scalar (it vectorises them only with -ffast-math and
// libmvec), and in the transformer's GELU and attention they were a fifth of a training step.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define LOCUS_CPU_AVX2 1
#else
#define LOCUS_CPU_AVX2 0
#endif

namespace locus::cpu {

// Note [Vector loop bounds]
// A run of n elements is done `width` lanes at a time up to whole_vectors_end(n, width), then
// one at a time. Written as `for (; i + 8 <= n; i += 8)`, the vector loop's exit says nothing
// GCC can use about where i stopped (i + 8 may overflow for all it knows), so once such a run was
// inlined into write_run (streaming_store.h) GCC kept a copy of the scalar remainder loop whose
// start it could not relate to n, took its worst case (2^62 or 2^63 iterations) and warned
// "iteration 9223372036854775807 invokes undefined behavior" (-Waggressive-loop-optimizations):
// a path no call takes, since the remainder is always under `width` elements, but one the code
// did not rule out. With the bound n - n % width the remainder is visibly shorter than a vector.

/// Where the whole `width`-lane vectors of an n-element run end (Note [Vector loop bounds]).
constexpr int64_t whole_vectors_end(int64_t n, int64_t width) { return n - n % width; }

// exp(x) for float: Cephes' expf (range reduction by ln 2, degree-6 polynomial, ~1 ulp), exactly
// 0 below the smallest normal result (masked scores are -inf), NaN for NaN. GCC does not
// vectorise this scalar form either: it turns the range checks into branches.
inline constexpr float kExpLo = -87.33654f, kExpHi = 88.37626f;
inline constexpr float kLog2e = 1.44269504088896341f, kRound = 12582912.0f;  // 1.5 * 2^23: x + kRound rounds x
inline constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
inline constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

inline float exp_of(float x) {
  if (std::isnan(x)) return x;
  const float xc = std::min(std::max(x, kExpLo), kExpHi);
  const float shifted = std::fma(xc, kLog2e, kRound);
  const float n = shifted - kRound;
  const float r = std::fma(-n, kLn2Lo, std::fma(-n, kLn2Hi, xc));
  float p = kExpPoly[0];
  for (int i = 1; i < 6; ++i) p = std::fma(p, r, kExpPoly[i]);
  const float y = std::fma(p * r, r, r + 1.0f);
  const int32_t ni = std::bit_cast<int32_t>(shifted) - 0x4B400000;
  return x < kExpLo ? 0.0f : y * std::bit_cast<float>((ni + 127) << 23);
}
inline double exp_of(double x) { return std::exp(x); }

#if LOCUS_CPU_AVX2
inline __m256 exp8(__m256 x) {
  const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLo)), _mm256_set1_ps(kExpHi));
  const __m256 shifted = _mm256_fmadd_ps(xc, _mm256_set1_ps(kLog2e), _mm256_set1_ps(kRound));
  const __m256 n = _mm256_sub_ps(shifted, _mm256_set1_ps(kRound));
  const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), xc));
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[i]));
  const __m256 y = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_set1_epi32(0x4B400000));
  const __m256 two_n = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(ni, _mm256_set1_epi32(127)), 23));
  const __m256 result = _mm256_and_ps(_mm256_mul_ps(y, two_n), _mm256_cmp_ps(x, _mm256_set1_ps(kExpLo), _CMP_GE_OQ));
  return _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
#endif

// erf(x) as Abramowitz and Stegun's 7.1.26, sign(x) (1 - t (p1 + p2 t + ... + p5 t^4)
// exp(-x^2)) with t = 1 / (1 + p |x|): absolute error below 1.5e-7, PyTorch's vectorised erf.
inline constexpr float kErfP = 0.3275911f;
inline constexpr float kErfA[5] = {0.254829592f, -0.284496736f, 1.421413741f, -1.453152027f, 1.061405429f};

inline float erf_of(float x) {
  const float ax = std::fabs(x);
  const float t = 1.0f / std::fma(kErfP, ax, 1.0f);
  float r = kErfA[4];
  for (int i = 3; i >= 0; --i) r = std::fma(r, t, kErfA[i]);
  const float e = std::fma(-exp_of(-x * x) * t, r, 1.0f);
  return std::copysign(e, x);
}

#if LOCUS_CPU_AVX2
inline __m256 erf8(__m256 x) {
  const __m256 sign = _mm256_and_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 ax = _mm256_xor_ps(sign, x);
  const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_set1_ps(kErfP), ax, _mm256_set1_ps(1.0f)));
  __m256 r = _mm256_set1_ps(kErfA[4]);
  for (int i = 3; i >= 0; --i) r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(kErfA[i]));
  const __m256 e = exp8(_mm256_xor_ps(_mm256_set1_ps(-0.0f), _mm256_mul_ps(x, x)));
  const __m256 one_minus = _mm256_fnmadd_ps(_mm256_mul_ps(e, t), r, _mm256_set1_ps(1.0f));
  return _mm256_xor_ps(sign, one_minus);
}
#endif

inline constexpr float kSqrtHalf = 0.70710678118654752440f, kInvSqrt2Pi = 0.39894228040143267794f;

/// y = x Phi(x), GELU's exact form, over n contiguous floats.
inline void gelu_row(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#if LOCUS_CPU_AVX2
  for (; i < whole_vectors_end(n, 8); i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 cdf = _mm256_fmadd_ps(erf8(_mm256_mul_ps(v, _mm256_set1_ps(kSqrtHalf))), _mm256_set1_ps(0.5f), _mm256_set1_ps(0.5f));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(v, cdf));
  }
#endif
  for (; i < n; ++i) y[i] = x[i] * std::fma(erf_of(x[i] * kSqrtHalf), 0.5f, 0.5f);
}

/// out = g (Phi(x) + x phi(x)), GELU's gradient, over n contiguous floats.
inline void gelu_backward_row(const float* g, const float* x, float* out, int64_t n) {
  int64_t i = 0;
#if LOCUS_CPU_AVX2
  for (; i < whole_vectors_end(n, 8); i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 cdf = _mm256_fmadd_ps(erf8(_mm256_mul_ps(v, _mm256_set1_ps(kSqrtHalf))), _mm256_set1_ps(0.5f), _mm256_set1_ps(0.5f));
    const __m256 pdf = _mm256_mul_ps(exp8(_mm256_mul_ps(_mm256_mul_ps(v, v), _mm256_set1_ps(-0.5f))), _mm256_set1_ps(kInvSqrt2Pi));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(g + i), _mm256_fmadd_ps(v, pdf, cdf)));
  }
#endif
  for (; i < n; ++i) {
    const float cdf = std::fma(erf_of(x[i] * kSqrtHalf), 0.5f, 0.5f);
    const float pdf = exp_of(-0.5f * x[i] * x[i]) * kInvSqrt2Pi;
    out[i] = g[i] * std::fma(x[i], pdf, cdf);
  }
}

// Note [Vectorised sigmoid and tanh]
// sigmoid and tanh in float32 were libm calls the compiler leaves scalar (expf; tanhf, which
// calls expm1f): 4 and 10 ns an element, most of an LSTM's forward step beside its product. The
// rows below compute them eight lanes at a time: sigmoid as the functor's formula 1 / (1 +
// exp(-x)) with exp8, tanh as Cephes' tanhf (x + x^3 P(x^2) below |x| = 0.625, relative error
// ~2e-7; 1 - 2 / (exp(2|x|) + 1) with x's sign above). Lanes where exp8 and libm's expf part ways
// (sigmoid beyond |x| = 80, where the result is 0, a subnormal or 1, and NaN) take the scalar
// formula, so those results stay libm's.
inline constexpr float kSigmoidVectorBound = 80.0f, kTanhSmall = 0.625f;
inline constexpr float kTanhPoly[5] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f, 1.33314422036e-1f,
                                       -3.33332819422e-1f};

#if LOCUS_CPU_AVX2
inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_and_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 ax = _mm256_xor_ps(sign, x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(kTanhPoly[0]);
  for (int i = 1; i < 5; ++i) p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(kTanhPoly[i]));
  // Both branches on |x|, x's sign put back last: tanh is odd, and -0.0 stays -0.0.
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), ax, ax);
  const __m256 e = exp8(_mm256_add_ps(ax, ax));  // clamps at exp(88.4): 2 / (e + 1) is then 0
  const __m256 large = _mm256_sub_ps(_mm256_set1_ps(1.0f),
                                     _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  const __m256 is_small = _mm256_cmp_ps(ax, _mm256_set1_ps(kTanhSmall), _CMP_LT_OQ);
  return _mm256_xor_ps(sign, _mm256_blendv_ps(large, small, is_small));
}
#endif

/// y = 1 / (1 + exp(-x)) over n contiguous floats (Note [Vectorised sigmoid and tanh]).
inline void sigmoid_row(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#if LOCUS_CPU_AVX2
  for (; i < whole_vectors_end(n, 8); i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 inside = _mm256_and_ps(_mm256_cmp_ps(v, _mm256_set1_ps(-kSigmoidVectorBound), _CMP_GT_OQ),
                                        _mm256_cmp_ps(v, _mm256_set1_ps(kSigmoidVectorBound), _CMP_LT_OQ));
    if (_mm256_movemask_ps(inside) != 0xFF) {
      for (int64_t k = i; k < i + 8; ++k) y[k] = 1.0f / (1.0f + std::exp(-x[k]));
      continue;
    }
    const __m256 e = exp8(_mm256_xor_ps(_mm256_set1_ps(-0.0f), v));
    _mm256_storeu_ps(y + i, _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e)));
  }
#endif
  for (; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

/// y = tanh(x) over n contiguous floats (Note [Vectorised sigmoid and tanh]).
inline void tanh_row(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#if LOCUS_CPU_AVX2
  for (; i < whole_vectors_end(n, 8); i += 8) _mm256_storeu_ps(y + i, tanh8(_mm256_loadu_ps(x + i)));
#endif
  for (; i < n; ++i) y[i] = std::tanh(x[i]);
}

}  // namespace locus::cpu
