#pragma once
// Turning CUDA status codes into Locus errors, and making a device current for a call.

#include <cuda_runtime_api.h>

#include <string>

namespace locus::cuda_backend {

/// Throws locus::Error "CUDA error during <what>: <message>" unless `err` is cudaSuccess; an
/// out-of-memory status becomes the plain text too (the allocator raises OutOfMemoryError
/// itself with the full story). Clears the runtime's sticky last error.
void check(cudaError_t err, const char* what);

/// Makes `device` the CUDA runtime's current device for this thread, if it is not already.
/// The runtime creates a device's context here, on first real use, never at discovery.
void activate(int device);

/// Number of SMs of `device` (cached).
int sm_count(int device);

}  // namespace locus::cuda_backend
