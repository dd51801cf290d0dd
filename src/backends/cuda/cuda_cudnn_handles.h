#pragma once
// What the cuDNN graphs share (cuda_cudnn_conv.cpp, cuda_cudnn_attention.cpp): the handles, the
// version check, the status check and the dtype mapping.

#include <cudnn.h>

#include <cudnn_frontend.h>

#include "locus/dtype.h"

namespace locus::cuda_backend {

/// The calling thread's cuDNN handle on `device` (Note [Library handles]).
cudnnHandle_t cudnn_handle(int device);

/// Whether the cuDNN loaded at run time has the major version the headers describe; the graphs
/// decline everything otherwise.
bool cudnn_runtime_matches();

/// Throws Error naming `what` unless `status` is CUDNN_STATUS_SUCCESS.
void check_cudnn(cudnnStatus_t status, const char* what);

/// The cuDNN type of a Locus floating dtype's elements (float32 for any other dtype).
cudnn_frontend::DataType_t cudnn_io_type(DType dtype);

}  // namespace locus::cuda_backend
