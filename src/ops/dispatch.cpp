#include "src/ops/dispatch.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "locus/errors.h"
#include "locus/fallback.h"
#include "src/core/public_op.h"
#include "src/core/shape_check.h"
#include "src/ops/kernel_registry.h"
#include "src/ops/public_op.h"
#include "src/runtime/device_runtime.h"

namespace locus {
namespace {

CpuFallback policy_from_env() {
  const char* env = std::getenv("LOCUS_CPU_FALLBACK");
  if (!env || !*env || std::strcmp(env, "error") == 0) return CpuFallback::Error;
  if (std::strcmp(env, "warn") == 0) return CpuFallback::Warn;
  if (std::strcmp(env, "silent") == 0) return CpuFallback::Silent;
  std::fprintf(stderr, "[locus] LOCUS_CPU_FALLBACK='%s' is not one of error, warn, silent; using error\n", env);
  return CpuFallback::Error;
}

std::atomic<CpuFallback>& policy() {
  static std::atomic<CpuFallback> p{policy_from_env()};
  return p;
}

std::atomic<int64_t> g_fallback_counts[ops::kNumOps];
std::atomic<bool> g_warned[ops::kNumOps];


}  // namespace

bool supports(std::string_view op, Device device, DType dtype) {
  const auto id = ops::op_from_name(op);
  if (!id) throw ValueError("supports: unknown op '" + std::string(op) + "'");
  return ops::has_kernel(device.type(), *id, dtype);
}

void set_cpu_fallback(CpuFallback p) { policy().store(p); }
CpuFallback cpu_fallback() { return policy().load(); }

int64_t fallback_count(std::string_view op) {
  if (op.empty()) {
    int64_t total = 0;
    for (auto& c : g_fallback_counts) total += c.load();
    return total;
  }
  const auto id = ops::op_from_name(op);
  if (!id) throw ValueError("fallback_count: unknown op '" + std::string(op) + "'");
  return g_fallback_counts[static_cast<int>(*id)].load();
}

namespace ops {

Device common_device(OpId op, const Operand* operands, int count) {
  const Operand* first = nullptr;
  for (int i = 0; i < count; ++i) {
    const Operand& o = operands[i];
    if (!o.tensor.defined()) continue;  // an optional argument left out (a bias)
    const Device d = o.tensor.device();
    if (d.is_cpu() && o.tensor.dim() == 0) continue;  // a CPU scalar joins any device
    if (!first) first = &o;
    else if (d != first->tensor.device())
      throw DeviceMismatchError(first->tensor.device(), d, o.name, error_name(op));
  }
  return first ? first->tensor.device() : operands[0].tensor.device();
}

Device common_device(OpId op, std::initializer_list<Operand> operands) {
  return common_device(op, operands.begin(), static_cast<int>(operands.size()));
}

Device common_device(OpId op, const std::vector<Tensor>& tensors) {
  for (size_t i = 1; i < tensors.size(); ++i)
    if (tensors[i].device() != tensors[0].device())
      throw DeviceMismatchError(tensors[0].device(), tensors[i].device(), "tensors[" + std::to_string(i) + "]",
                                error_name(op));
  return tensors.at(0).device();
}

namespace {
Device same_device(const char* name, std::initializer_list<Operand> arguments, CpuScalars cpu_scalars) {
  const Tensor* first = nullptr;
  for (const Operand& a : arguments) {
    if (!a.tensor.defined()) continue;
    const Device d = a.tensor.device();
    if (cpu_scalars == CpuScalars::Join && d.is_cpu() && a.tensor.dim() == 0) continue;
    if (!first) first = &a.tensor;
    else if (d != first->device())
      throw DeviceMismatchError(first->device(), d, a.name, std::string(detail::public_op_name(name)));
  }
  if (first) return first->device();
  for (const Operand& a : arguments)
    if (a.tensor.defined()) return a.tensor.device();  // only CPU scalars
  return Device(DeviceType::CPU);
}
}  // namespace

PublicOp::PublicOp(const char* name, std::initializer_list<Operand> arguments, CpuScalars cpu_scalars)
    : scope_(name), device_(same_device(name, arguments, cpu_scalars)) {}

const KernelTable* kernels_for(OpId op, Device device, DType dtype) {
  if (has_kernel(device.type(), op, dtype)) return backend_kernels(device.type()).table;
  // Inside a composite (Note [Public op names]) the message names the public function and the
  // op it needs, since the policy and fallback_count speak of the latter.
  auto what = [op] {
    const std::string own(op_name(op));
    return error_name(op) == own ? op_prefix(op) : op_prefix(op) + "needs " + own + ", which is ";
  };
  if (device.is_cpu()) throw NotImplementedError(what() + "has no CPU kernel");
  const CpuFallback p = policy().load();
  if (p == CpuFallback::Error) {
    std::string where;
    for (int t = 0; t < kNumDeviceTypes; ++t) {
      const auto type = static_cast<DeviceType>(t);
      if (has_kernel(type, op, dtype))
        where += (where.empty() ? "" : ", ") + std::string(device_type_name(type));
    }
    throw NotImplementedError(what() + "not implemented for device '" + device.str() + "' (dtype " +
                              std::string(dtype_name(dtype)) + "). Implemented for: " + where +
                              ". Set LOCUS_CPU_FALLBACK=warn to run it on the CPU.");
  }
  const int i = static_cast<int>(op);
  g_fallback_counts[i].fetch_add(1);
  if (p == CpuFallback::Warn && !g_warned[i].exchange(true))
    std::fprintf(stderr,
                 "[locus] warning: %s is not implemented for %s (dtype %s); running it on the CPU, which copies its "
                 "operands there and back. This warning is shown once per op.\n",
                 std::string(op_name(op)).c_str(), device.str().c_str(), std::string(dtype_name(dtype)).c_str());
  return nullptr;
}

namespace {

Tensor allocate(const Shape& shape, Shape strides, DType dtype, Device device, bool pinned) {
  const int64_t numel = detail::checked_numel(shape, itemsize(dtype), "empty");
  if (pinned && !device.is_cpu())
    throw ValueError("pinned memory is host memory: a pinned tensor must be on cpu, not " + device.str());
  const size_t bytes = static_cast<size_t>(numel) * itemsize(dtype);
  // Device memory belongs to the stream that will first use it: the thread's current stream.
  detail::DataPtr data = pinned ? runtime::pinned_allocator().allocate(bytes)
                                : runtime::allocator_for(device).allocate(bytes, runtime::current_stream_id(device));
  auto storage = detail::make_intrusive<detail::Storage>(std::move(data), bytes, pinned);
  return Tensor(detail::make_intrusive<detail::TensorImpl>(std::move(storage), dtype, shape, std::move(strides), 0));
}

}  // namespace

Tensor empty_on(const Shape& shape, DType dtype, Device device, bool pinned) {
  return allocate(shape, strides_for(shape, MemoryFormat::Contiguous), dtype, device, pinned);
}

Tensor empty_on(const Shape& shape, DType dtype, Device device, MemoryFormat format, bool pinned) {
  return allocate(shape, strides_for(shape, format), dtype, device, pinned);
}

Tensor back_to(Device device, Tensor result) { return result.defined() ? result.to(device) : result; }

ValuesIndices back_to(Device device, ValuesIndices result) {
  return {back_to(device, std::move(result.values)), back_to(device, std::move(result.indices))};
}


int64_t wrap_dim(int64_t dim, int64_t ndim, OpId op) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n)
    throw IndexError(op_prefix(op) + "dimension out of range (expected to be in range of [" +
                     std::to_string(-n) + ", " + std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}

}  // namespace ops
}  // namespace locus
