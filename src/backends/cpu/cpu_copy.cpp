// Copy with dtype conversion, and fill. Large contiguous results are written with streaming
// stores (Note [Streaming stores]); a transposing copy goes tile by tile.

#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__AVX__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/loops.h"
#include "src/backends/cpu/streaming_store.h"
#include "src/backends/cpu/vec_math.h"
#include "src/ops/float_to_int.h"

namespace locus::cpu {
namespace {

// Every pair of dtypes, as the CUDA copy converts them: floats to integers by
// ops::float_to_int (Note [Float to int]), float64 to the 16-bit floats through float32 (as
// PyTorch), anything to bool as "not zero".
template <class Out, class In>
Out convert(In v) {
  using C = compute_t<In>;
  if constexpr (std::is_same_v<Out, bool>) return static_cast<C>(v) != C(0);
  else if constexpr (std::is_same_v<Out, Half> || std::is_same_v<Out, BFloat16>) return Out(static_cast<float>(C(v)));
  else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<C>) return ops::float_to_int<Out>(C(v));
  else return static_cast<Out>(C(v));
}

// dst[i] = convert<Out>(src[i]) for a contiguous run; float <-> float16 eight at a time with F16C
// (the compiler converts one element per instruction otherwise, and that, not memory, bounded
// the conversion at about 40 GB/s).
template <class Out, class In>
void convert_run(Out* dst, const In* src, int64_t count) {
  int64_t i = 0;
#if defined(__F16C__)
  if constexpr (std::is_same_v<Out, Half> && std::is_same_v<In, float>) {
    for (; i < whole_vectors_end(count, 8); i += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  } else if constexpr (std::is_same_v<Out, float> && std::is_same_v<In, Half>) {
    for (; i < whole_vectors_end(count, 8); i += 8)
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
#endif
  for (; i < count; ++i) dst[i] = convert<Out>(src[i]);
}

#if defined(__AVX__)
// out[c][r] = in[r][c] for an 8x8 block of 4-byte elements, in registers.
inline void transpose8x8(const float* in, int64_t in_ld, float* out, int64_t out_ld) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * in_ld);
  for (int i = 0; i < 8; i += 2) t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44), r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44), r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(out + i * out_ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(out + (i + 4) * out_ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}
#endif

// A 2-D copy whose input walks memory along the output's outer dim (x.t().contiguous()): done
// in small tiles, so both sides touch whole cache lines instead of one element per line of the
// input. The tiles are 8x8 (4-byte elements: transposed in AVX registers): a square matrix's rows
// are a power of two apart, so taller tiles map every row to the same L1 set and thrash it
// (4096^2 floats, 2 threads: 32x32 scalar tiles 2.3 GB/s, 8x8 11 GB/s, 8x8 in registers 20 GB/s).
// Returns false for any other layout.
template <class Out, class In>
bool copy_transposed(const ops::StridedIter& it) {
  constexpr int64_t kTile = 8, kBlock = 32;
  if (it.shape.size() != 2 || it.numel < kBlock * kBlock) return false;
  const int64_t rows = it.shape[0], cols = it.shape[1];
  const int64_t out_row = it.strides[0][0], out_col = it.strides[0][1];
  const int64_t in_row = it.strides[1][0], in_col = it.strides[1][1];
  if (out_col != sizeof(Out) || out_row != cols * static_cast<int64_t>(sizeof(Out)) || in_row != sizeof(In) ||
      in_col % static_cast<int64_t>(sizeof(In)) != 0 || in_col == sizeof(In))
    return false;
  Out* out = reinterpret_cast<Out*>(it.data[0]);
  const In* in = reinterpret_cast<const In*>(it.data[1]);
  const int64_t in_ld = in_col / static_cast<int64_t>(sizeof(In));  // out[r][c] = in[c * in_ld + r]
  auto tile = [&](int64_t r0, int64_t c0) {
    const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
#if defined(__AVX__)
    if constexpr (std::is_same_v<Out, In> && sizeof(Out) == 4) {
      if (r1 - r0 == kTile && c1 - c0 == kTile) {
        transpose8x8(reinterpret_cast<const float*>(in + c0 * in_ld + r0), in_ld, reinterpret_cast<float*>(out + r0 * cols + c0), cols);
        return;
      }
    }
#endif
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) out[r * cols + c] = convert<Out>(in[c * in_ld + r]);
  };
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock;
  const bool parallel = it.numel * static_cast<int64_t>(sizeof(Out) + sizeof(In)) >= kParallelBytes;
  parallel_for(row_blocks, parallel, [&](int64_t b0, int64_t b1) {
    for (int64_t rb = b0; rb < b1; ++rb)
      for (int64_t cb = 0; cb < cols; cb += kBlock)
        for (int64_t r0 = rb * kBlock; r0 < std::min(rows, (rb + 1) * kBlock); r0 += kTile)
          for (int64_t c0 = cb; c0 < std::min(cols, cb + kBlock); c0 += kTile) tile(r0, c0);
  }, 1);
  return true;
}

template <class Out, class In>
void copy_typed(const ops::StridedIter& it) {
  if (copy_transposed<Out, In>(it)) return;
  const bool stream = streams_output(it);
  for_each_run<2>(it, sizeof(Out) + sizeof(In), [stream](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      auto* out = reinterpret_cast<Out*>(p[0]);
      const auto* in = reinterpret_cast<const In*>(p[1]);
      if constexpr (std::is_same_v<Out, In>) {
        if (stream && reinterpret_cast<uintptr_t>(out) % 32 == 0) {
          stream_copy(out, in, static_cast<size_t>(n) * sizeof(Out));
          stream_fence();
        } else {
          std::memcpy(out, in, static_cast<size_t>(n) * sizeof(Out));
        }
        return;
      }
      write_run(out, n, stream, [&](Out* dst, int64_t first, int64_t count) { convert_run(dst, in + first, count); });
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = convert<Out>(*reinterpret_cast<const In*>(p[1] + i * s[1]));
    }
  });
}

template <class Out>
void copy_to(const ops::StridedIter& it) {
  LOCUS_DISPATCH_ALL(it.dtypes[1], copy_typed<Out, scalar_t>(it));
}

}  // namespace

void copy_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars&) {
  LOCUS_DISPATCH_ALL(it.dtypes[0], copy_to<scalar_t>(it));
}

void fill_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars& scalars) {
  LOCUS_DISPATCH_ALL(it.dtypes[0], {
    const scalar_t v = scalars.other.to<scalar_t>();
    for_each_run<1>(it, sizeof(scalar_t), [v](char* const* p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(scalar_t)) {
        auto* out = reinterpret_cast<scalar_t*>(p[0]);
        for (int64_t i = 0; i < n; ++i) out[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

}  // namespace locus::cpu
