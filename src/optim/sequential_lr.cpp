// SequentialLR: schedulers run one after another, switching at the milestones.

#include <algorithm>

#include "locus/errors.h"
#include "locus/optim/lr_scheduler.h"
#include "src/optim/schedule_values.h"

namespace locus::optim::lr_scheduler {

using detail::f64;
using detail::values_of;

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones, int64_t last_epoch)
    : LRScheduler(optimizer, -1), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  if (schedulers_.empty()) throw ValueError("Sequential Schedulers expects at least one scheduler");
  for (size_t k = 0; k < schedulers_.size(); ++k) {
    if (!schedulers_[k] || &schedulers_[k]->optimizer() != &optimizer)
      throw ValueError(
          "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got "
          "schedulers at index " +
          std::to_string(k) + " to be different than the optimizer passed in.");
  }
  if (milestones_.size() != schedulers_.size() - 1)
    throw ValueError(
        "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
        "milestone points, but got number of schedulers " +
        std::to_string(schedulers_.size()) + " and the number of milestones to be equal to " +
        std::to_string(milestones_.size()));
  last_epoch_ = last_epoch + 1;
  // Back to the initial rates, the other schedulers' construction steps undone, and the first
  // scheduler's initial step taken again.
  for (OptimizerParamGroup& g : optimizer.param_groups()) g.options().set_lr(g.scheduler_values().at("initial_lr"));
  for (auto& s : schedulers_) s->last_epoch_ -= 1;
  schedulers_.front()->initial_step();
  last_lr_ = schedulers_.front()->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const auto idx =
      static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin());
  LRScheduler& scheduler = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_)
    scheduler.step(int64_t{0});
  else
    scheduler.step();
  last_lr_ = scheduler.get_last_lr();
}

std::map<std::string, Tensor> SequentialLR::state_dict() const {
  std::map<std::string, Tensor> out;
  out["last_epoch"] = f64({static_cast<double>(last_epoch_)});
  out["_last_lr"] = f64(last_lr_);
  std::vector<double> m(milestones_.begin(), milestones_.end());
  out["_milestones"] = f64(m);
  for (size_t k = 0; k < schedulers_.size(); ++k)
    for (const auto& [name, t] : schedulers_[k]->state_dict()) out["_schedulers." + std::to_string(k) + "." + name] = t;
  return out;
}

void SequentialLR::load_state_dict(const std::map<std::string, Tensor>& state) {
  std::vector<std::map<std::string, Tensor>> parts(schedulers_.size());
  for (const auto& [name, t] : state) {
    if (name == "last_epoch")
      last_epoch_ = static_cast<int64_t>(values_of(t).at(0));
    else if (name == "_last_lr")
      last_lr_ = values_of(t);
    else if (name == "_milestones") {
      milestones_.clear();
      for (double v : values_of(t)) milestones_.push_back(static_cast<int64_t>(v));
    } else if (name.rfind("_schedulers.", 0) == 0) {
      const std::string rest = name.substr(12);
      const size_t dot = rest.find('.');
      const size_t k = dot == std::string::npos ? parts.size() : std::stoul(rest.substr(0, dot));
      if (k >= parts.size()) throw ValueError("SequentialLR load_state_dict: key '" + name + "' names no scheduler");
      parts[k][rest.substr(dot + 1)] = t;
    } else {
      throw ValueError("lr scheduler load_state_dict: unknown key '" + name + "'");
    }
  }
  for (size_t k = 0; k < parts.size(); ++k) schedulers_[k]->load_state_dict(parts[k]);
}

}  // namespace locus::optim::lr_scheduler
