#include "src/backends/cuda/cuda_blas.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "locus/errors.h"
#include "locus/precision.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_memory.h"
#include "src/backends/cuda/cuda_streams.h"
#include "src/backends/cuda/handle_pool.h"
#include "src/backends/cuda/cuda_launchers.h"

namespace locus::cuda_backend {
namespace {

void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error during ") + what + ": " + cublasGetStatusString(status));
}

cublasHandle_t create_blas_handle(int) {
  cublasHandle_t h = nullptr;
  check_blas(cublasCreate(&h), "cublasCreate");
  return h;
}

// One per thread and device (Note [Library handles]).
cublasHandle_t handle_for(int device) { return ThreadHandlePool<cublasHandle_t, &create_blas_handle>::get(device); }

// What the calling thread's handle was last given, so that a product on the same stream with
// the same workspace block (the usual case: the allocator hands the freed block back) skips both
// setters. Each costs host time per call, and cublasSetStream also drops the workspace.
struct HandleBinding {
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  bool bound = false;
};

HandleBinding& binding_for(int device) {
  thread_local HandleBinding bindings[kMaxDevices];
  return bindings[device];
}

// What cuBLAS asks for on Hopper (NVIDIA's guidance; PyTorch's default there too).
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

cudaDataType_t data_type(DType dtype) {
  switch (dtype) {
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    case DType::Float64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

// One operand as cuBLAS sees it: a column-major matrix, transposed or not, with its leading
// dimension. Row-major Locus matrices are transposed column-major ones, so C = A @ B is
// computed as C^T = B^T @ A^T with B as cuBLAS's first operand.
struct BlasOperand {
  const char* data;
  cublasOperation_t op;
  int64_t ld;
  int64_t batch_stride;
};

// A row-major rows x cols matrix with element strides (row, col), as the column-major
// cols x rows operand cuBLAS multiplies; false when neither stride is unit or the leading
// dimension would be too small (broadcast rows), in which case the caller copies it first.
bool as_operand(const char* data, int64_t batch_stride, int64_t row, int64_t col, int64_t rows, int64_t cols,
                BlasOperand& out) {
  if (col == 1 && (rows == 1 || row >= std::max<int64_t>(cols, 1))) {
    out = {data, CUBLAS_OP_N, rows == 1 ? std::max<int64_t>(cols, 1) : row, batch_stride};
    return true;
  }
  if (row == 1 && (cols == 1 || col >= std::max<int64_t>(rows, 1))) {
    out = {data, CUBLAS_OP_T, cols == 1 ? std::max<int64_t>(rows, 1) : col, batch_stride};
    return true;
  }
  return false;
}

// Lays a strided [batch, rows, cols] operand out contiguously in `buffer`.
BlasOperand make_contiguous(const ops::MatmulArgs& g, const char* data, int64_t batch, int64_t batch_stride, int64_t row,
                            int64_t col, int64_t rows, int64_t cols, detail::DataPtr& buffer, cudaStream_t stream) {
  const auto item = static_cast<int64_t>(itemsize(g.dtype));
  buffer = device_scratch(g.device, static_cast<size_t>(batch * rows * cols * item));
  ops::StridedIter it;
  it.noperands = 2, it.numel = batch * rows * cols, it.device = g.device;
  it.shape = Shape{batch, rows, cols};
  it.strides[0] = Shape{rows * cols * item, cols * item, item};
  it.strides[1] = Shape{batch_stride * item, row * item, col * item};
  it.data[0] = static_cast<char*>(buffer.get());
  it.data[1] = const_cast<char*>(data);
  it.dtypes[0] = it.dtypes[1] = g.dtype;
  check(launch_copy(it, stream), "matmul operand copy");
  return {static_cast<const char*>(buffer.get()), CUBLAS_OP_N, std::max<int64_t>(cols, 1), batch > 1 ? rows * cols : 0};
}

void int_matmul(const ops::MatmulArgs& g, cudaStream_t stream) { check(launch_int_matmul(g, stream), "matmul"); }

}  // namespace

void matmul(const ops::MatmulArgs& g) {
  activate(g.device);
  cudaStream_t stream = current_native_stream(g.device);
  if (!is_floating_point(g.dtype)) return int_matmul(g, stream);
  const auto item = static_cast<int64_t>(itemsize(g.dtype));
  if (g.k == 0 && g.beta == 0) {  // an empty sum: zeros (all-zero bits are 0.0 in every float type)
    check(cudaMemsetAsync(g.c, 0, static_cast<size_t>(g.batch * g.m * g.n * item), stream), "matmul");
    return;
  }
  const bool batched = g.batch > 1;
  BlasOperand first{}, second{};  // B^T and A^T
  detail::DataPtr b_copy, a_copy;
  if (g.k > 0 && !as_operand(g.b, batched ? g.b_batch_stride : 0, g.b_row, g.b_col, g.k, g.n, first))
    first = make_contiguous(g, g.b, g.b_batch_stride ? g.batch : 1, g.b_batch_stride, g.b_row, g.b_col, g.k, g.n, b_copy,
                            stream);
  if (g.k > 0 && !as_operand(g.a, batched ? g.a_batch_stride : 0, g.a_row, g.a_col, g.m, g.k, second))
    second = make_contiguous(g, g.a, g.a_batch_stride ? g.batch : 1, g.a_batch_stride, g.a_row, g.a_col, g.m, g.k, a_copy,
                             stream);
  cublasHandle_t handle = handle_for(g.device);
  // cuBLAS's workspace comes from Locus's allocator, so it is counted in the statistics and
  // cannot fail while the cache holds the memory. It is freed right after the launch: the
  // block belongs to this stream, so only later work on the stream can reuse it.
  const detail::DataPtr workspace = device_scratch(g.device, kCublasWorkspaceBytes);
  HandleBinding& binding = binding_for(g.device);
  if (!binding.bound || binding.stream != stream || binding.workspace != workspace.get()) {
    binding.bound = false;
    check_blas(cublasSetStream(handle, stream), "cublasSetStream");
    check_blas(cublasSetWorkspace(handle, workspace.get(), kCublasWorkspaceBytes), "cublasSetWorkspace");
    binding = {stream, workspace.get(), true};
  }
  const cudaDataType_t type = data_type(g.dtype);
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (g.dtype == DType::Float64) compute = CUBLAS_COMPUTE_64F;
  else if (g.dtype == DType::Float32 && cuda::allow_tf32()) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  // Note [Product scaling]: addmm's alpha and beta ride in the call (cuBLAS does not read C
  // when beta is 0), in the compute type's precision.
  const float alpha_f = static_cast<float>(g.alpha), beta_f = static_cast<float>(g.beta);
  const double alpha_d = g.alpha, beta_d = g.beta;
  const void* alpha = g.dtype == DType::Float64 ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = g.dtype == DType::Float64 ? static_cast<const void*>(&beta_d) : &beta_f;
  if (g.k == 0) {  // an empty sum with beta != 0: C = beta C over the contiguous batch of C
    check_blas(cublasScalEx_64(handle, g.batch * g.m * g.n, beta, g.dtype == DType::Float64 ? CUDA_R_64F : CUDA_R_32F,
                               g.c, type, 1, g.dtype == DType::Float64 ? CUDA_R_64F : CUDA_R_32F),
               "matmul (cublasScalEx_64)");
    return;
  }
  // The 64-bit entry points: sizes, leading dimensions and batch counts past 2^31 are not cut.
  if (!batched) {
    check_blas(cublasGemmEx_64(handle, first.op, second.op, g.n, g.m, g.k, alpha, first.data, type, first.ld, second.data,
                               type, second.ld, beta, g.c, type, g.n, compute, CUBLAS_GEMM_DEFAULT),
               "matmul (cublasGemmEx_64)");
    return;
  }
  check_blas(cublasGemmStridedBatchedEx_64(handle, first.op, second.op, g.n, g.m, g.k, alpha, first.data, type, first.ld,
                                           first.batch_stride, second.data, type, second.ld, second.batch_stride, beta,
                                           g.c, type, g.n, g.m * g.n, g.batch, compute, CUBLAS_GEMM_DEFAULT),
             "matmul (cublasGemmStridedBatchedEx_64)");
}

}  // namespace locus::cuda_backend
