// Copy with dtype conversion, fill and where on CUDA.
//
// Copy converts between any two of the ten dtypes. Instead of 100 kernels, one kernel reads
// through a dtype switch into a wide value (double for floating sources, int64 for integral
// ones, so no integer loses precision) and writes through a second switch; both switches are
// uniform across the grid, so they cost a few instructions in a memory-bound loop.

#include "src/backends/cuda/elementwise.cuh"
#include "src/ops/float_to_int.h"

namespace locus::cuda_backend {
namespace {

struct Wide {
  double f;
  int64_t i;
  bool is_float;
};

__device__ __forceinline__ Wide load_wide(const char* p, DType dt) {
  Wide w{0, 0, false};
  switch (dt) {
    case DType::Bool: w.i = *reinterpret_cast<const bool*>(p); break;
    case DType::UInt8: w.i = *reinterpret_cast<const uint8_t*>(p); break;
    case DType::Int8: w.i = *reinterpret_cast<const int8_t*>(p); break;
    case DType::Int16: w.i = *reinterpret_cast<const int16_t*>(p); break;
    case DType::Int32: w.i = *reinterpret_cast<const int32_t*>(p); break;
    case DType::Int64: w.i = *reinterpret_cast<const int64_t*>(p); break;
    case DType::Float16: w.f = __half2float(*reinterpret_cast<const __half*>(p)), w.is_float = true; break;
    case DType::BFloat16: w.f = __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p)), w.is_float = true; break;
    case DType::Float32: w.f = *reinterpret_cast<const float*>(p), w.is_float = true; break;
    case DType::Float64: w.f = *reinterpret_cast<const double*>(p), w.is_float = true; break;
  }
  return w;
}

template <class T>
__device__ __forceinline__ void store_as(char* p, const Wide& w) {
  T* out = reinterpret_cast<T*>(p);
  if constexpr (std::is_same_v<T, bool>) *out = w.is_float ? w.f != 0 : w.i != 0;
  // Integers convert to float32 (or float64) directly, as on the CPU: through double, an int64
  // beyond 2^53 would round twice.
  else if constexpr (is_float_v<T>)
    *out = w.is_float ? convert<T>(w.f) : convert<T>(static_cast<std::conditional_t<std::is_same_v<T, double>, double, float>>(w.i));
  else *out = w.is_float ? ops::float_to_int<T>(w.f) : static_cast<T>(w.i);  // Note [Float to int]
}

__device__ __forceinline__ void store_wide(char* p, DType dt, const Wide& w) {
  LOCUS_CUDA_DISPATCH(dt, store_as<scalar_t>(p, w));
}

__global__ void __launch_bounds__(kBlock) copy_kernel(PackedIter p, bool contiguous, int in_item, int out_item) {
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerThread;
  Wide w[kPerThread];
  int64_t out_off[kPerThread];
  // Loads first, stores after: four independent reads in flight per thread.
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int64_t i = base + j;
    if (i >= p.numel) break;
    int64_t in_off;
    if (contiguous) {
      in_off = i * in_item;
      out_off[j] = i * out_item;
    } else {
      const Offsets<2> o = offsets_of<2>(p, i);
      in_off = o.off[1];
      out_off[j] = o.off[0];
    }
    w[j] = load_wide(p.data[1] + in_off, p.dtype[1]);
  }
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    if (base + j >= p.numel) break;
    store_wide(p.data[0] + out_off[j], p.dtype[0], w[j]);
  }
}

// Same-dtype copies between float types and the common narrowing/widening pairs get a typed,
// vectorised kernel: these are the conversions training loops run every step.
template <class In>
struct ConvertFn {
  using value_type = compute_t<In>;
  __device__ value_type operator()(const value_type (&v)[1]) const { return v[0]; }
};

template <class Out, class In>
cudaError_t typed_copy(const PackedIter& p, cudaStream_t stream) {
  return launch_packed<Out, In, 1>(p, PerElement<ConvertFn<In>>{}, stream);
}

template <class T>
__global__ void __launch_bounds__(kBlock) fill_kernel(PackedIter p, bool contiguous, T value) {
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerThread;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int64_t i = base + j;
    if (i >= p.numel) break;
    const int64_t off = contiguous ? i * static_cast<int64_t>(sizeof(T)) : offsets_of<1>(p, i).off[0];
    *reinterpret_cast<T*>(p.data[0] + off) = value;
  }
}

template <class T>
__global__ void __launch_bounds__(kBlock) where_kernel(PackedIter p) {
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerThread;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int64_t i = base + j;
    if (i >= p.numel) break;
    const Offsets<4> o = offsets_of<4>(p, i);
    const bool c = *reinterpret_cast<const bool*>(p.data[1] + o.off[1]);
    *reinterpret_cast<T*>(p.data[0] + o.off[0]) = *reinterpret_cast<const T*>(p.data[c ? 2 : 3] + o.off[c ? 2 : 3]);
  }
}

}  // namespace

cudaError_t launch_copy(const ops::StridedIter& iter, cudaStream_t stream) {
  if (iter.numel == 0) return cudaSuccess;
  const PackedIter it = pack(iter);
  const int out_item = static_cast<int>(itemsize(it.dtype[0])), in_item = static_cast<int>(itemsize(it.dtype[1]));
  const int sizes[2] = {out_item, in_item};
  const bool contiguous = is_contiguous(it, sizes);
  if (contiguous && it.dtype[0] == it.dtype[1])
    return cudaMemcpyAsync(it.data[0], it.data[1], static_cast<size_t>(it.numel) * out_item, cudaMemcpyDeviceToDevice, stream);
  const DType out = it.dtype[0], in = it.dtype[1];
  if (out == DType::BFloat16 && in == DType::Float32) return typed_copy<__nv_bfloat16, float>(it, stream);
  if (out == DType::Float16 && in == DType::Float32) return typed_copy<__half, float>(it, stream);
  if (out == DType::Float32 && in == DType::BFloat16) return typed_copy<float, __nv_bfloat16>(it, stream);
  if (out == DType::Float32 && in == DType::Float16) return typed_copy<float, __half>(it, stream);
  if (out == in) {
    cudaError_t err = cudaErrorInvalidValue;
    LOCUS_CUDA_DISPATCH(out, err = typed_copy<scalar_t, scalar_t>(it, stream));
    return err;
  }
  copy_kernel<<<blocks_for(it.numel, int64_t{kBlock} * kPerThread), kBlock, 0, stream>>>(it, contiguous, in_item, out_item);
  return cudaGetLastError();
}

cudaError_t launch_fill(const ops::StridedIter& iter, const Scalar& value, cudaStream_t stream) {
  if (iter.numel == 0) return cudaSuccess;
  const PackedIter it = pack(iter);
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(it.dtype[0], {
    const int sizes[1] = {static_cast<int>(sizeof(scalar_t))};
    const scalar_t v = convert<scalar_t>(value.to<compute_t<scalar_t>>());
    fill_kernel<scalar_t><<<blocks_for(it.numel, int64_t{kBlock} * kPerThread), kBlock, 0, stream>>>(
        it, is_contiguous(it, sizes), v);
    err = cudaGetLastError();
  });
  return err;
}

cudaError_t launch_where(const ops::StridedIter& iter, cudaStream_t stream) {
  if (iter.numel == 0) return cudaSuccess;
  const PackedIter it = pack(iter);
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(it.dtype[0], {
    where_kernel<scalar_t><<<blocks_for(it.numel, int64_t{kBlock} * kPerThread), kBlock, 0, stream>>>(it);
    err = cudaGetLastError();
  });
  return err;
}

}  // namespace locus::cuda_backend
