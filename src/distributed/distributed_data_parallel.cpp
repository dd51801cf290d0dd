// Note [DDP buckets]
// The parameters are grouped, last first (backward produces their gradients roughly in that
// order), into buckets of about bucket_cap_mb of one dtype and device. Each forward walks the
// graph it recorded and counts, per parameter, the AccumulateGrad nodes that will add into it
// (a parameter used twice gets two); a hook after each accumulation counts down, and a bucket
// whose parameters are all final is flattened and all-reduced (Avg) asynchronously while
// backward goes on. Buckets start in index order on every rank, so the ranks issue the same
// collectives in the same order even when their gradients become ready in another order. The
// hook that starts the last bucket waits for all of them and writes the averages back into
// grad(); backward() therefore returns with averaged gradients, as in PyTorch.

#include "locus/nn/distributed_data_parallel.h"

#include <algorithm>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/leaf_accumulations.h"
#include "src/distributed/default_group_handle.h"

namespace locus::nn {

struct DistributedDataParallelImpl::Bucket {
  std::vector<size_t> params;
  size_t pending = 0;  ///< parameters whose gradient is not final yet
  Tensor flat;
  std::shared_ptr<distributed::Work> work;
};

NoSyncGuard::NoSyncGuard(DistributedDataParallelImpl& ddp) : ddp_(ddp), previous_(ddp.sync_) { ddp_.sync_ = false; }
NoSyncGuard::~NoSyncGuard() { ddp_.sync_ = previous_; }

DistributedDataParallelImpl::DistributedDataParallelImpl(AnyModule module,
                                                         std::shared_ptr<distributed::ProcessGroup> group,
                                                         DistributedDataParallelOptions options)
    : module_(module.ptr()), group_(group ? std::move(group) : distributed::default_group_handle()), options_(options) {
  if (!module_) throw ValueError("DistributedDataParallel: the module is empty");
  if (!(options_.bucket_cap_mb() > 0))
    throw ValueError("DistributedDataParallel: bucket_cap_mb must be positive, got " + std::to_string(options_.bucket_cap_mb()));
  register_module("module", module_);
  // Every rank starts from rank 0's values.
  {
    NoGradGuard no_grad;
    for (const bool params : {true, false})
      for (auto& [name, t] : params ? module_->named_parameters() : module_->named_buffers()) {
        Tensor values = t.detach();
        group_->broadcast(values, 0)->wait();
      }
  }
  for (auto& nt : module_->named_parameters())
    if (nt.second.requires_grad()) params_.push_back(nt.pair());
  // Buckets, last parameter first.
  const double cap = options_.bucket_cap_mb() * 1024 * 1024;
  bucket_of_.assign(params_.size(), 0);
  double bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& p = params_[k].second;
    const bool fits = !buckets_.empty() && bytes + static_cast<double>(p.nbytes()) <= cap &&
                      params_[buckets_.back()->params.front()].second.dtype() == p.dtype() &&
                      params_[buckets_.back()->params.front()].second.device() == p.device();
    if (!fits) {
      buckets_.push_back(std::make_unique<Bucket>());
      bytes = 0;
    }
    buckets_.back()->params.push_back(k);
    bucket_of_[k] = buckets_.size() - 1;
    bytes += static_cast<double>(p.nbytes());
  }
  for (size_t k = 0; k < params_.size(); ++k)
    hook_ids_.push_back(params_[k].second.register_post_accumulate_grad_hook([this, k](const Tensor&) { on_gradient(k); }));
}

DistributedDataParallelImpl::~DistributedDataParallelImpl() {
  for (size_t k = 0; k < params_.size(); ++k) params_[k].second.remove_post_accumulate_grad_hook(hook_ids_[k]);
  for (auto& b : buckets_)
    if (b->work) try {
        b->work->wait();
      } catch (...) {  // a destructor must not throw; the error was the caller's to see
      }
}

std::vector<std::vector<std::string>> DistributedDataParallelImpl::bucket_names() const {
  std::vector<std::vector<std::string>> out;
  for (const auto& b : buckets_) {
    out.emplace_back();
    for (size_t k : b->params) out.back().push_back(params_[k].first);
  }
  return out;
}

void DistributedDataParallelImpl::check_previous_iteration() {
  // A backward that did not reach every bucket (or none at all): wait for what was started, so
  // this rank stays in step with the others, and start afresh.
  for (auto& b : buckets_) {
    if (b->work) b->work->wait();
    b->work.reset();
    b->flat = Tensor();
  }
  buckets_launched_ = 0;
}

Tensor DistributedDataParallelImpl::forward(const Tensor& x) {
  check_previous_iteration();
  if (options_.broadcast_buffers()) {
    NoGradGuard no_grad;
    for (auto& [name, b] : module_->named_buffers()) {
      Tensor values = b.detach();
      group_->broadcast(values, 0)->wait();
    }
  }
  Tensor out = (*module_)(x);
  if (is_grad_enabled() && out.requires_grad()) mark_unused(out);
  return out;
}

void DistributedDataParallelImpl::mark_unused(const Tensor& output) {
  // Count the accumulations each parameter will receive (Note [DDP buckets]).
  const auto uses = autograd::leaf_accumulations({output});
  std::string unused;
  for (auto& b : buckets_) b->pending = 0;
  expected_.assign(params_.size(), 0);
  for (size_t k = 0; k < params_.size(); ++k) {
    const auto it = uses.find(params_[k].second.impl());
    expected_[k] = it == uses.end() ? 0 : it->second;
    if (expected_[k] == 0 && !options_.find_unused_parameters()) unused += (unused.empty() ? "" : ", ") + params_[k].first;
    if (expected_[k] > 0) ++buckets_[bucket_of_[k]]->pending;
  }
  if (!unused.empty()) {
    expected_.assign(params_.size(), 0);  // this iteration reduces nothing
    throw DistributedError("DistributedDataParallel: parameters that take no part in computing the output would get no "
                           "gradient, and the ranks would wait for it forever: " + unused +
                           ". Pass DistributedDataParallelOptions().find_unused_parameters(true) if that is intended");
  }
  // A bucket of only unused parameters is final already; start whatever is, in order.
  launch_ready();
}

void DistributedDataParallelImpl::on_gradient(size_t k) {
  if (!sync_ || k >= expected_.size() || expected_[k] == 0) return;
  if (--expected_[k] > 0) return;  // more accumulations to come into this parameter
  Bucket& b = *buckets_[bucket_of_[k]];
  if (b.pending > 0) --b.pending;
  launch_ready();
  if (buckets_launched_ == buckets_.size()) finish_all();
}

void DistributedDataParallelImpl::launch_ready() {
  while (buckets_launched_ < buckets_.size() && buckets_[buckets_launched_]->pending == 0) {
    launch(*buckets_[buckets_launched_]);
    ++buckets_launched_;
  }
}

void DistributedDataParallelImpl::launch(Bucket& b) {
  NoGradGuard no_grad;
  std::vector<Tensor> parts;
  for (size_t k : b.params) {
    const Tensor& p = params_[k].second;
    const Tensor g = p.grad();
    parts.push_back(g.defined() ? g.reshape({-1}) : zeros({p.numel()}, TensorOptions().dtype(p.dtype()).device(p.device())));
  }
  b.flat = cat(parts, 0);
  b.work = group_->all_reduce(b.flat, distributed::ReduceOp::Avg);
}

void DistributedDataParallelImpl::finish_all() {
  NoGradGuard no_grad;
  for (auto& b : buckets_) {
    b->work->wait();
    b->work.reset();
    int64_t offset = 0;
    for (size_t k : b->params) {
      const Tensor& p = params_[k].second;
      p.set_grad(b->flat.narrow(0, offset, p.numel()).view(p.shape()));
      offset += p.numel();
    }
    b->flat = Tensor();
  }
  buckets_launched_ = 0;
}

}  // namespace locus::nn
