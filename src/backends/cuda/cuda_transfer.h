#pragma once
// Copies between the host and CUDA devices, and between CUDA devices.

#include <memory>

#include "src/runtime/device_runtime.h"

namespace locus::cuda_backend {

/// Enqueues the copy on the current stream of the device involved (the source's for
/// device-to-device), following SPEC section 2's rules: with `non_blocking` and a pinned host
/// side it returns at once with the work the host side must wait for; otherwise host copies
/// wait for the stream. Device-to-device copies never block the host.
std::unique_ptr<detail::PendingWork> copy(const runtime::CopyRequest& request);

}  // namespace locus::cuda_backend
