#pragma once
// Turning CUDA status codes into Locus errors, and making a device current for a call.

#include <cuda_runtime_api.h>

#include <string>

namespace locus::cuda_backend {

/// Throws locus::Error "CUDA error during <what>: <message>", clearing the runtime's sticky
/// last error. An out-of-memory status becomes plain text too (the allocator raises
/// OutOfMemoryError itself with the full story).
[[noreturn]] void throw_cuda_error(cudaError_t err, const std::string& what);

/// Throws (see throw_cuda_error) unless `err` is cudaSuccess.
inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw_cuda_error(err, what);
}

/// Same, with the description built only on failure: launch and copy paths build no strings.
template <class Describe>
inline void check_lazy(cudaError_t err, Describe describe) {
  if (err != cudaSuccess) throw_cuda_error(err, describe());
}

/// Makes `device` the CUDA runtime's current device for this thread, if it is not already.
/// The runtime creates a device's context here, on first real use, never at discovery.
void activate(int device);
/// True when some thread has activated `device` (its context exists).
bool was_activated(int device) noexcept;
/// The device activated last by any thread, or -1.
int last_activated() noexcept;

/// Number of SMs of `device` (cached).
int sm_count(int device);

}  // namespace locus::cuda_backend
