#pragma once
// Device-side element types: storage type, compute type (half and bfloat16 compute in float,
// as PyTorch's opmath does), conversions, the packed strided description with its offset walk,
// and the dtype switch.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/cuda_launchers.h"

namespace locus::cuda_backend {

template <class T>
struct Compute {
  using type = T;
};
template <>
struct Compute<__half> {
  using type = float;
};
template <>
struct Compute<__nv_bfloat16> {
  using type = float;
};
/// The type arithmetic on T happens in.
template <class T>
using compute_t = typename Compute<T>::type;

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<compute_t<T>>;

/// Reads a T as its compute type.
template <class T>
__device__ __forceinline__ compute_t<T> load(const T* p) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(*p);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(*p);
  else return *p;
}

/// Converts an arithmetic value of the same kind (floating to floating, integer to integer) to
/// T, rounding to nearest; the 16-bit floats round through float32, as on the CPU and in
/// PyTorch, so float64 -> float16 agrees bit for bit with the CPU. Floating to integer goes
/// through ops::float_to_int (cuda_copy.cu).
template <class T, class V>
__host__ __device__ __forceinline__ T convert(V v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V(0);
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
__device__ __forceinline__ void store(T* p, compute_t<T> v) {
  *p = convert<T>(v);
}

/// The DType of a device storage type.
template <class T>
constexpr DType device_dtype() {
  if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::UInt8;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::Int8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::Int16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::Int64;
  else if constexpr (std::is_same_v<T, __half>) return DType::Float16;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return DType::BFloat16;
  else if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else return DType::Float64;
}

/// Most dims an elementwise launch takes after coalescing.
inline constexpr int kMaxDims = 16;
inline constexpr int kMaxOperands = ops::StridedIter::kMaxOperands;

/// An ops::StridedIter packed into fixed arrays: a kernel argument must be trivially copyable
/// and of fixed size, which Shape is not. pack() is the only place that builds one.
struct PackedIter {
  int ndim = 0;
  int noperands = 0;
  int64_t numel = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
  char* data[kMaxOperands] = {};
  DType dtype[kMaxOperands] = {};
};

/// The packed form of `it`; NotImplementedError for more than kMaxDims dims left after
/// coalescing (a tensor viewed in a very odd way: .contiguous() fixes it).
PackedIter pack(const ops::StridedIter& it);

/// Byte offsets of each operand for a linear index over a row-major shape.
template <int N>
struct Offsets {
  int64_t off[N];
};

template <int N>
__device__ __forceinline__ Offsets<N> offsets_of(const PackedIter& p, int64_t linear) {
  Offsets<N> o;
  if (p.ndim == 1) {  // the common broadcast case: no division at all
#pragma unroll
    for (int k = 0; k < N; ++k) o.off[k] = linear * p.strides[k][0];
    return o;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) o.off[k] = 0;
  for (int d = p.ndim - 1; d >= 0; --d) {
    const int64_t size = p.shape[d];
    const int64_t i = linear % size;
    linear /= size;
#pragma unroll
    for (int k = 0; k < N; ++k) o.off[k] += i * p.strides[k][d];
  }
  return o;
}

/// Threads per block for elementwise kernels and elements each thread handles.
inline constexpr int kBlock = 256;
inline constexpr int kPerThread = 4;

inline unsigned blocks_for(int64_t n, int64_t per_block) {
  const int64_t b = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 0x7fffffff ? 0x7fffffff : b));
}

/// True when `p` is aligned for a vector of kPerThread elements of T.
template <class T>
inline bool vector_aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * kPerThread) == 0;
}

/// kPerThread elements loaded or stored as one memory transaction.
template <class T>
struct alignas(sizeof(T) * kPerThread) Pack {
  T v[kPerThread];
};

}  // namespace locus::cuda_backend

/// Runs BODY with `scalar_t` bound to the device storage type of the DType `dt`.
#define LOCUS_CUDA_DISPATCH(dt, ...)                                                              \
  switch (dt) {                                                                                   \
    case ::locus::DType::Bool: { using scalar_t = bool; __VA_ARGS__; } break;                     \
    case ::locus::DType::UInt8: { using scalar_t = uint8_t; __VA_ARGS__; } break;                 \
    case ::locus::DType::Int8: { using scalar_t = int8_t; __VA_ARGS__; } break;                   \
    case ::locus::DType::Int16: { using scalar_t = int16_t; __VA_ARGS__; } break;                 \
    case ::locus::DType::Int32: { using scalar_t = int32_t; __VA_ARGS__; } break;                 \
    case ::locus::DType::Int64: { using scalar_t = int64_t; __VA_ARGS__; } break;                 \
    case ::locus::DType::Float16: { using scalar_t = __half; __VA_ARGS__; } break;                \
    case ::locus::DType::BFloat16: { using scalar_t = __nv_bfloat16; __VA_ARGS__; } break;        \
    case ::locus::DType::Float32: { using scalar_t = float; __VA_ARGS__; } break;                 \
    case ::locus::DType::Float64: { using scalar_t = double; __VA_ARGS__; } break;                \
  }

/// The floating types only.
#define LOCUS_CUDA_DISPATCH_FLOAT(dt, ...)                                                        \
  switch (dt) {                                                                                   \
    case ::locus::DType::Float16: { using scalar_t = __half; __VA_ARGS__; } break;                \
    case ::locus::DType::BFloat16: { using scalar_t = __nv_bfloat16; __VA_ARGS__; } break;        \
    case ::locus::DType::Float32: { using scalar_t = float; __VA_ARGS__; } break;                 \
    case ::locus::DType::Float64: { using scalar_t = double; __VA_ARGS__; } break;                \
    default: break;                                                                               \
  }
