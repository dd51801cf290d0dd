#pragma once
// What the host side of the CUDA backend hands to its .cu launchers: plain structs with no
// Locus types, so nvcc never compiles the public headers (half.h uses the host compiler's
// _Float16, which device code does not have). cuda_kernel_table.cpp builds these from the
// op front ends' descriptions; see Note [CUDA launchers].

#include <cuda_runtime_api.h>

#include <cstdint>

#include "src/ops/op_id.h"

namespace locus::cuda_backend {

/// Element types, numbered as locus::DType (checked by a static_assert in the kernel table).
enum class DT : uint8_t { Bool, UInt8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64 };

/// Most dims an elementwise or reduction launch takes after coalescing.
inline constexpr int kMaxDims = 16;
inline constexpr int kMaxOperands = 4;

/// The elementwise description: operand 0 is the output; byte strides, 0 where broadcast.
struct IterParams {
  int ndim = 0;
  int noperands = 0;
  int64_t numel = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
  char* data[kMaxOperands] = {};
  DT dtype[kMaxOperands] = {};
};

/// One scalar argument, both as a floating and as an integer value; the kernel reads the one
/// that matches its compute type.
struct ScalarArg {
  double f = 0;
  int64_t i = 0;
};

/// Sum or mean over some dims. `in_strides` are bytes; `out_strides` are output elements, 0 on
/// reduced dims.
struct SumParams {
  bool mean = false;
  DT in = DT::Float32, out = DT::Float32;
  const char* in_ptr = nullptr;
  char* out_ptr = nullptr;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};
  int64_t out_strides[kMaxDims] = {};
  int64_t out_numel = 0, reduce_numel = 0;
};

/// Max, min or argmax along the middle dim of a contiguous [outer, dim, inner] input.
struct ExtremeParams {
  ops::OpId op = ops::OpId::Max;
  DT dtype = DT::Float32;
  const char* in = nullptr;
  char* values = nullptr;          ///< null for argmax
  int64_t* indices = nullptr;      ///< null when only values are wanted
  int64_t outer = 0, dim = 0, inner = 0;
};

/// Softmax or log-softmax along the middle dim of a contiguous [outer, dim, inner] block.
struct SoftmaxParams {
  bool log = false;
  DT dtype = DT::Float32;
  const char* in = nullptr;
  char* out = nullptr;
  int64_t outer = 0, dim = 0, inner = 0;
};

/// index_select / gather over contiguous tensors (see ops::IndexArgs).
struct IndexParams {
  bool gather = false;
  int item = 4;  ///< element bytes
  const char* in = nullptr;
  char* out = nullptr;
  const int64_t* index = nullptr;
  int64_t outer = 0, in_dim = 0, out_dim = 0, inner = 0;
};

/// rand / randn / randint / arange into a contiguous buffer (Philox, as on the CPU).
struct RandomParams {
  ops::OpId op = ops::OpId::Rand;
  DT dtype = DT::Float32;
  char* out = nullptr;
  int64_t numel = 0;
  uint64_t seed = 0, offset = 0;
  double low = 0, high = 1;
};

/// Integer matrix product (cuBLAS has none): C[b] = A[b] @ B[b], element strides, C contiguous.
struct IntMatmulParams {
  DT dtype = DT::Int32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const char* a = nullptr;
  int64_t a_batch = 0, a_row = 0, a_col = 0;
  const char* b = nullptr;
  int64_t b_batch = 0, b_row = 0, b_col = 0;
  char* c = nullptr;
};

// The launchers. Each enqueues its kernels on `stream` and returns the launch status; none
// synchronises.
cudaError_t launch_binary(ops::OpId op, const IterParams& it, const ScalarArg* b_scalar, ScalarArg alpha,
                          cudaStream_t stream);
cudaError_t launch_unary(ops::OpId op, const IterParams& it, ScalarArg lo, ScalarArg hi, bool has_lo, bool has_hi,
                         cudaStream_t stream);
cudaError_t launch_where(const IterParams& it, cudaStream_t stream);
cudaError_t launch_copy(const IterParams& it, cudaStream_t stream);
cudaError_t launch_fill(const IterParams& it, ScalarArg value, cudaStream_t stream);
/// Bytes of scratch launch_sum needs for `p` (0 when it writes the output directly).
size_t sum_workspace_bytes(const SumParams& p, int sm_count);
cudaError_t launch_sum(const SumParams& p, void* workspace, int sm_count, cudaStream_t stream);
size_t extreme_workspace_bytes(const ExtremeParams& p, int sm_count);
cudaError_t launch_extreme(const ExtremeParams& p, void* workspace, int sm_count, cudaStream_t stream);
cudaError_t launch_softmax(const SoftmaxParams& p, cudaStream_t stream);
/// Checks every index lies in [-size, size); writes the first offending value (or keeps
/// `*status` at 0) into the device int64 pair status = {found, value}.
cudaError_t launch_check_indices(const int64_t* index, int64_t n, int64_t size, int64_t* status, cudaStream_t stream);
cudaError_t launch_index(const IndexParams& p, cudaStream_t stream);
cudaError_t launch_random(const RandomParams& p, cudaStream_t stream);
cudaError_t launch_int_matmul(const IntMatmulParams& p, cudaStream_t stream);

}  // namespace locus::cuda_backend
