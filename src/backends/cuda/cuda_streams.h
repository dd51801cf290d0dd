#pragma once
// CUDA streams and events behind runtime::StreamRuntime. See Note [CUDA stream ids].

#include <cuda_runtime_api.h>

#include "src/runtime/stream_runtime.h"

namespace locus::cuda_backend {

/// Devices a process can address (the per-thread current-stream table has this many slots).
inline constexpr int kMaxDevices = 64;

/// The StreamId of device `device`'s default stream.
runtime::StreamId default_stream_id(int device) noexcept;
/// The cudaStream_t of a StreamId (nullptr, the legacy default stream, for default streams:
/// valid once the stream's device is current).
cudaStream_t native_stream(runtime::StreamId id) noexcept;
/// The device a StreamId belongs to.
int stream_device_of(runtime::StreamId id) noexcept;
/// The calling thread's current stream on `device`, as a StreamId and as a native handle.
runtime::StreamId current_stream_id(int device) noexcept;
cudaStream_t current_native_stream(int device) noexcept;

/// The process-wide StreamRuntime of the CUDA backend.
runtime::StreamRuntime& cuda_streams();

}  // namespace locus::cuda_backend
