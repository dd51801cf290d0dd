// The cuDNN handles and checks the graphs share (cuda_cudnn_handles.h).

#include "src/backends/cuda/cuda_cudnn_handles.h"

#include <string>

#include "locus/errors.h"
#include "src/backends/cuda/handle_pool.h"

namespace locus::cuda_backend {
namespace {

cudnnHandle_t create_cudnn_handle(int) {
  cudnnHandle_t h = nullptr;
  check_cudnn(cudnnCreate(&h), "cudnnCreate");
  return h;
}

}  // namespace

void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw Error(std::string("cuDNN error during ") + what + ": " + cudnnGetErrorString(status));
}

cudnnHandle_t cudnn_handle(int device) { return ThreadHandlePool<cudnnHandle_t, &create_cudnn_handle>::get(device); }

bool cudnn_runtime_matches() {
  static const bool matches = cudnnGetVersion() / 10000 == CUDNN_MAJOR;
  return matches;
}

cudnn_frontend::DataType_t cudnn_io_type(DType dtype) {
  switch (dtype) {
    case DType::Float16: return cudnn_frontend::DataType_t::HALF;
    case DType::BFloat16: return cudnn_frontend::DataType_t::BFLOAT16;
    case DType::Float64: return cudnn_frontend::DataType_t::DOUBLE;
    default: return cudnn_frontend::DataType_t::FLOAT;
  }
}

}  // namespace locus::cuda_backend
