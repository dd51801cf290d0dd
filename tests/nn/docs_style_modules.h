#pragma once
// User modules written the way docs/api.md teaches (`struct NetImpl : nn::Module {...};
// LOCUS_MODULE(Net);`), with no Cloneable and no reset(): what Module::clone and DataParallel
// must replicate. Each forward logs where it ran and where the tensors it used live.

#include <mutex>
#include <vector>

#include "tests/test_util.h"

namespace locus::testing {

/// One forward of DocsNet: the input's device and the devices of every tensor it used.
struct ForwardRecord {
  Device input;
  std::vector<Device> used;
};

/// The forwards DocsNet ran since the last clear (replicas run on their own threads).
class ForwardLog {
 public:
  void add(ForwardRecord r) {
    std::lock_guard<std::mutex> lock(mutex_);
    records_.push_back(std::move(r));
  }
  std::vector<ForwardRecord> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(records_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<ForwardRecord> records_;
};
inline ForwardLog forward_log;

/// A nested user module: a handle member and a registered Tensor member.
struct DocsBlockImpl : nn::Module {
  DocsBlockImpl() {
    fc = register_module("fc", nn::Linear(5, 5));
    gain = register_parameter("gain", full({5}, 1.5));
  }
  Tensor forward(const Tensor& x) override { return mul(tanh(fc(x)), gain); }
  nn::Linear fc{nullptr};
  Tensor gain;
};
LOCUS_MODULE(DocsBlock);

/// Handles, a registered parameter, a buffer, a nested user module, a Sequential, and a plain
/// (unregistered) tensor member, which replicas share as Python's replicas share attributes.
struct DocsNetImpl : nn::Module {
  DocsNetImpl() {
    fc1 = register_module("fc1", nn::Linear(6, 5));
    w = register_parameter("w", randn({5}));
    offset = register_buffer("offset", full({5}, 0.25));
    block = register_module("block", DocsBlock());
    head = register_module("head", nn::Sequential{nn::Linear(5, 4), nn::ReLU(), nn::Linear(4, 3)});
    note = full({1}, 7.0);
  }
  Tensor forward(const Tensor& x) override {
    forward_log.add({x.device(),
                     {fc1->weight.device(), w.device(), offset.device(), block->fc->weight.device(),
                      block->gain.device(), head->parameters().back().device()}});
    return head(block(add(mul(relu(fc1(x)), w), offset)));
  }
  nn::Linear fc1{nullptr};
  Tensor w, offset;
  DocsBlock block{nullptr};
  nn::Sequential head{nullptr};
  Tensor note;
};
LOCUS_MODULE(DocsNet);

}  // namespace locus::testing
