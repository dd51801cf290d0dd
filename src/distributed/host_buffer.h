#pragma once
// A tensor's values where the host engines (Gloo, MPI) read and write them: contiguous host
// memory of the tensor's dtype.

#include <cstddef>

#include "locus/tensor.h"

namespace locus::distributed {

/// `host` is the tensor itself when it is a contiguous CPU tensor, else a host copy that
/// write_back() copies into the original (any device, any layout).
struct HostBuffer {
  Tensor host;      ///< what the engine reads and writes
  Tensor original;  ///< where the result goes back, when it is not `host` itself

  /// The buffer of `t`, its pending device work finished.
  static HostBuffer of(const Tensor& t) {
    HostBuffer b{t, t};
    if (!t.is_cpu() || !t.is_contiguous()) b.host = t.detach().to(Device(DeviceType::CPU), false, /*copy=*/true).contiguous();
    b.host.impl()->storage()->wait_for_pending_work();
    return b;
  }
  void* data() const { return host.data_ptr(); }
  size_t count() const { return static_cast<size_t>(host.numel()); }
  /// Copies the result into the original tensor when the engine worked on a copy.
  void write_back() {
    if (!host.is_same(original)) original.detach().copy_(host);
  }
};

}  // namespace locus::distributed
