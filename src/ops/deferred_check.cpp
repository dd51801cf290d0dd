// Note [Deferred checks]
// An index or a class target outside its range must not be read (it would fault the device or
// read another tensor), and must be reported. On cpu and sim the host reads the values and
// raises at once. On cuda, reading them would make every training step wait for the device
// (twice per step for cross_entropy), so the check runs on the device: a kernel records the
// first failure in host-mapped memory, the op itself stays in bounds (an out-of-range index
// reads element 0), and the host raises the IndexError at its next synchronization with the
// device (item(), a copy to the host, synchronize()). PyTorch uses a device-side assert, which
// ends the process's use of the GPU; here the process goes on, and results of the ops queued
// after the failed one are unspecified until the error is raised.

#include "src/ops/deferred_check.h"

#include <string>

#include "locus/errors.h"
#include "src/ops/dispatch.h"
#include "src/ops/kernel_operand.h"
#include "src/runtime/device_runtime.h"

namespace locus::ops {

void raise_failed_check(OpId op, CheckKind kind, int64_t value, int64_t bound, Device device, bool deferred) {
  // A deferred failure surfaces later, inside whatever runs then: it names the op it recorded.
  std::string message = deferred ? "[locus::" + std::string(op_name(op)) + "] " : op_prefix(op);
  if (kind == CheckKind::TargetOutOfBounds)
    message += "target " + std::to_string(value) + " is out of bounds for " + std::to_string(bound) + " classes";
  else
    message += "index " + std::to_string(value) + " is out of bounds for dimension of size " + std::to_string(bound);
  if (deferred)
    message += " (checked on " + device.str() +
               " without waiting for it, and raised at the next synchronization; results of operations queued after "
               "it are unspecified)";
  throw IndexError(message);
}

std::optional<int64_t> check_range(OpId op, CheckKind kind, const Tensor& values, int64_t bound,
                                   std::optional<int64_t> ignore) {
  if (values.numel() == 0) return 0;
  const Tensor flat = values.contiguous();
  const Device device = flat.device();
  const KernelTable* k = backend_kernels(device.type()).table;
  if (device.is_cpu() || !k || !k->defer_check || runtime::runtime(device.type()).capabilities().host_addressable) {
    wait_for_host(flat);
    const auto* v = ops::dense_operand<int64_t>(flat);
    int64_t counted = 0;
    for (int64_t i = 0; i < flat.numel(); ++i) {
      if (ignore && v[i] == *ignore) continue;
      if (v[i] < 0 || v[i] >= bound) raise_failed_check(op, kind, v[i], bound, device, false);
      ++counted;
    }
    return counted;
  }
  DeferredCheckArgs a;
  a.device = device.index();
  a.values = ops::dense_operand<int64_t>(flat);
  a.n = flat.numel(), a.bound = bound;
  a.has_ignore = ignore.has_value(), a.ignore = ignore.value_or(0);
  a.op = op, a.kind = kind;
  k->defer_check(a);
  return std::nullopt;
}

}  // namespace locus::ops
