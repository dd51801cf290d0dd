// nn::DataParallel: scatter the batch, replicate the module, run the replicas concurrently,
// gather the outputs. Note [DataParallel gradients]: a replica's parameters are its own
// tensors (members of the cloned layers point at them), refreshed from the module before each
// forward and then given a grad_fn whose backward copies their gradient to the module's
// parameter. The engine then adds every replica's contribution into the module's .grad, which is
// what PyTorch's Broadcast/ReduceAddCoalesced pair does.

#include "locus/nn/data_parallel.h"

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <optional>
#include <string>
#include <thread>

#include "locus/amp/autocast.h"
#include "locus/autograd.h"
#include "locus/accelerator.h"
#include "locus/device_guard.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/node.h"

namespace locus::nn {
namespace {

// Every device of the accelerator best_device() picks (PyTorch: every device of the available
// device type), so LOCUS_DEVICE=sim runs the same replication a multi-GPU machine does.
std::vector<Device> accelerator_devices() {
  std::vector<Device> out;
  if (const std::optional<DeviceType> type = accelerator::current())
    for (int i = 0; i < device_count(*type); ++i) out.emplace_back(*type, i);
  return out;
}

// PyTorch's integer device_ids: indices of the available device type; none without one.
std::vector<Device> accelerator_devices(std::initializer_list<int> indices) {
  std::vector<Device> out;
  const std::optional<DeviceType> type = accelerator::current();
  for (const int i : indices) {
    if (i < 0) throw ValueError("DataParallel: device_ids must be device indices (0, 1, ...), got " + std::to_string(i));
    if (type) out.emplace_back(*type, i);
  }
  return out;
}

std::optional<Device> accelerator_device(int index) {
  if (index < 0) throw ValueError("DataParallel: output_device must be a device index (0, 1, ...), got " + std::to_string(index));
  const std::optional<DeviceType> type = accelerator::current();
  return type ? std::optional<Device>(Device(*type, index)) : std::nullopt;
}

// The tensors of a module, parameters then buffers, in registration order.
std::vector<Tensor> tensors_of(const Module& m, bool params) {
  std::vector<Tensor> out;
  for (auto& [name, t] : params ? m.named_parameters() : m.named_buffers()) out.push_back(t);
  return out;
}

}  // namespace

DataParallelImpl::DataParallelImpl(AnyModule module, std::initializer_list<int> device_ids, std::optional<Device> output_device)
    : DataParallelImpl(std::move(module), accelerator_devices(device_ids), output_device) {}

DataParallelImpl::DataParallelImpl(AnyModule module, std::initializer_list<int> device_ids, int output_device)
    : DataParallelImpl(std::move(module), accelerator_devices(device_ids), accelerator_device(output_device)) {}

DataParallelImpl::DataParallelImpl(AnyModule module, std::vector<Device> device_ids, std::optional<Device> output_device)
    : module_(module.ptr()),
      device_ids_(device_ids.empty() ? accelerator_devices() : std::move(device_ids)),
      output_device_(output_device.value_or(device_ids_.empty() ? Device(DeviceType::CPU) : device_ids_.front())) {
  if (!module_) throw ValueError("DataParallel: the module is empty");
  for (size_t i = 0; i < device_ids_.size(); ++i) {
    if (!device_ids_[i].has_index() && !device_ids_[i].is_cpu())
      device_ids_[i] = Device(device_ids_[i].type(), current_device(device_ids_[i].type()).index());
    for (size_t j = 0; j < i; ++j)
      if (device_ids_[j] == device_ids_[i])
        throw ValueError("DataParallel: device " + device_ids_[i].str() + " is listed twice in device_ids");
  }
  register_module("module", module_);
}

void DataParallelImpl::check_module_placement() const {
  const Device home = device_ids_.front();
  for (const bool params : {true, false})
    for (const auto& [name, t] : params ? module_->named_parameters() : module_->named_buffers())
      if (t.device() != home)
        throw ValueError("DataParallel: module must have its parameters and buffers on device " + home.str() +
                         " (device_ids[0]) but found '" + name + "' on device " + t.device().str());
}

void DataParallelImpl::refresh_replica(size_t k, bool record_grad) {
  const Device device = device_ids_[k];
  if (replicas_.size() < k) replicas_.resize(k);
  std::shared_ptr<Module>& replica = replicas_[k - 1];
  if (!replica) replica = module_->clone(device);
  replica->train(module_->is_training());
  NoGradGuard no_grad;
  for (const bool params : {true, false}) {
    const std::vector<Tensor> from = tensors_of(*module_, params), to = tensors_of(*replica, params);
    if (from.size() != to.size()) throw ValueError("DataParallel: the module changed its structure after wrapping");
    for (size_t i = 0; i < from.size(); ++i) {
      Tensor dst = to[i];
      dst.impl()->set_grad_fn(nullptr);
      if (dst.shape() == from[i].shape() && dst.dtype() == from[i].dtype())
        dst.detach().copy_(from[i]);
      else
        dst.set_data(from[i].detach().to(device, false, /*copy=*/true));
      // Note [DataParallel gradients].
      if (params && record_grad && from[i].requires_grad()) {
        const Device home = from[i].device();
        autograd::record(dst, "BroadcastBackward", [home](const Tensor& g) { return std::vector<Tensor>{g.to(home)}; },
                         {&from[i]});
      }
    }
  }
}

Tensor DataParallelImpl::forward(const Tensor& x) {
  if (device_ids_.empty()) return (*module_)(x);
  check_module_placement();
  if (x.dim() == 0) throw ShapeError("DataParallel: the input must have a batch dimension (dim 0), got a 0-dim tensor");
  // Tensor::chunk's split: chunks of ceil(n / devices) rows, fewer chunks when n is small.
  const int64_t n = x.size(0), devices = static_cast<int64_t>(device_ids_.size());
  const int64_t rows = std::max<int64_t>(1, (n + devices - 1) / devices);
  const size_t used = static_cast<size_t>(std::max<int64_t>(1, std::min(devices, (n + rows - 1) / rows)));
  if (used == 1) return (*module_)(x.to(device_ids_.front()));

  std::vector<Tensor> chunks(used), outputs(used);
  for (size_t k = 0; k < used; ++k) {
    const int64_t start = static_cast<int64_t>(k) * rows;
    chunks[k] = x.narrow(0, start, std::min(rows, n - start)).to(device_ids_[k]);
  }
  const bool grad = is_grad_enabled();
  for (size_t k = 1; k < used; ++k) refresh_replica(k, grad);
  // The replicas' threads run under the caller's autocast, as PyTorch's DataParallel does
  // (autocast state is per thread).
  const DeviceType type = device_ids_.front().type();
  const bool autocast = amp::is_autocast_enabled(type);
  const DType autocast_dtype = amp::autocast_dtype(type);
  std::vector<std::exception_ptr> errors(used);
  auto run = [&](size_t k) {
    try {
      DeviceGuard guard(device_ids_[k]);
      set_grad_enabled(grad);
      std::optional<amp::AutocastGuard> replica_autocast;
      if (k > 0 && autocast) replica_autocast.emplace(type, autocast_dtype);
      outputs[k] = k == 0 ? (*module_)(chunks[k]) : (*replicas_[k - 1])(chunks[k]);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t k = 1; k < used; ++k) threads.emplace_back(run, k);
  run(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<Tensor> gathered;
  for (const Tensor& out : outputs) gathered.push_back(out.dim() == 0 ? out.view({1}).to(output_device_) : out.to(output_device_));
  return cat(gathered, 0);
}

}  // namespace locus::nn
