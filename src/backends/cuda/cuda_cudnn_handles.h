#pragma once
// What the cuDNN graphs share (cuda_cudnn_conv.cpp, cuda_cudnn_attention.cpp): the handles, the
// version check, the status check and the dtype mapping.

#include <cudnn.h>

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <utility>

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

/// Whether `p` (null counts) is 16-byte aligned, as cuDNN reads every operand of a graph whose
/// tensors leave the frontend's default alignment. A view can start anywhere (narrow(0, 1, ...),
/// a DLPack import): the graphs decline such an operand, and the next path runs, rather than let
/// cuDNN compute garbage or fault on it.
inline bool cudnn_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

/// Whether every one of `operands` is cudnn_aligned.
inline bool cudnn_aligned(std::initializer_list<const void*> operands) {
  for (const void* p : operands)
    if (!cudnn_aligned(p)) return false;
  return true;
}

/// The calling thread's graph for `key`, which `build()` makes the first time. cudnn-frontend
/// refuses some graphs by throwing: that caches an empty `Built`, whose null graph the caller
/// declines, so the next path runs. Never destroyed, as the handles: the main thread's would
/// otherwise be torn down at exit, after the CUDA context.
template <class Key, class Built, class Build>
const Built& cached_graph(const Key& key, Build&& build) {
  thread_local std::map<Key, Built>& cache = *new std::map<Key, Built>;
  auto it = cache.find(key);
  if (it == cache.end()) {
    Built built;
    try {
      built = build();
    } catch (const std::exception&) {
      built = Built{};
    }
    it = cache.emplace(key, std::move(built)).first;
  }
  return it->second;
}

}  // namespace locus::cuda_backend
