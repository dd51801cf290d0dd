// OneCycleLR, the one-cycle policy: the rate (and the momentum) annealed through two or three
// phases, once per batch.

#include <cmath>

#include "locus/errors.h"
#include "locus/optim/lr_scheduler.h"
#include "src/optim/py_repr.h"
#include "src/optim/schedule_values.h"

namespace locus::optim::lr_scheduler {

using detail::kPi;
using optim::detail::py_repr;

OneCycleLR::OneCycleLR(Optimizer& optimizer, OneCycleLROptions o, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), o_(std::move(o)) {
  if (o_.total_steps() == 0 && o_.epochs() == 0 && o_.steps_per_epoch() == 0)
    throw ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)");
  if (o_.total_steps() != 0) {
    if (o_.total_steps() <= 0)
      throw ValueError("Expected positive integer total_steps, but got " + std::to_string(o_.total_steps()));
  } else {
    if (o_.epochs() <= 0) throw ValueError("Expected positive integer epochs, but got " + std::to_string(o_.epochs()));
    if (o_.steps_per_epoch() <= 0)
      throw ValueError("Expected positive integer steps_per_epoch, but got " + std::to_string(o_.steps_per_epoch()));
    o_.total_steps(o_.epochs() * o_.steps_per_epoch());
  }
  const double total = static_cast<double>(o_.total_steps());
  if (o_.three_phase())
    phases_ = {{o_.pct_start() * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
               {2 * o_.pct_start() * total - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"},
               {total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"}};
  else
    phases_ = {{o_.pct_start() * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
               {total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"}};
  if (!(o_.pct_start() >= 0 && o_.pct_start() <= 1))
    throw ValueError("Expected float between 0 and 1 pct_start, but got " + py_repr(o_.pct_start()));
  if (o_.anneal_strategy() != "cos" && o_.anneal_strategy() != "linear")
    throw ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got " + o_.anneal_strategy());
  auto& groups = optimizer.param_groups();
  std::vector<double> max_lrs = o_.max_lr();
  if (max_lrs.size() == 1) max_lrs.assign(groups.size(), max_lrs.front());
  if (max_lrs.size() != groups.size())
    throw ValueError("expected " + std::to_string(groups.size()) + " values for max_lr, got " +
                     std::to_string(o_.max_lr().size()));
  if (last_epoch == -1)
    for (size_t g = 0; g < groups.size(); ++g) {
      auto& v = groups[g].scheduler_values();
      v["initial_lr"] = max_lrs[g] / o_.div_factor();
      v["max_lr"] = max_lrs[g];
      v["min_lr"] = v["initial_lr"] / o_.final_div_factor();
    }
  if (o_.cycle_momentum()) {
    const auto defaults = optimizer.defaults().values();
    if (!defaults.count("momentum") && !defaults.count("beta1"))
      throw ValueError("optimizer must support momentum with `cycle_momentum` option enabled");
    use_beta1_ = defaults.count("beta1") != 0;
    if (last_epoch == -1)
      for (OptimizerParamGroup& g : groups) {
        g.options().set_values({{use_beta1_ ? "beta1" : "momentum", o_.max_momentum()}});
        g.scheduler_values()["max_momentum"] = o_.max_momentum();
        g.scheduler_values()["base_momentum"] = o_.base_momentum();
      }
  }
  // PyTorch sets initial_lr before its base class reads it: the base rates are these.
  base_lrs_.clear();
  for (const OptimizerParamGroup& g : groups) base_lrs_.push_back(g.scheduler_values().at("initial_lr"));
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (o_.anneal_strategy() == "cos") {
    const double cos_out = std::cos(kPi * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  const int64_t step_num = last_epoch_;
  if (step_num > o_.total_steps())
    throw ValueError("Tried to step " + std::to_string(step_num + 1) +
                     " times. The specified number of total steps is " + std::to_string(o_.total_steps()));
  std::vector<double> lrs;
  for (OptimizerParamGroup& g : optimizer_->param_groups()) {
    const auto& v = g.scheduler_values();
    double start_step = 0, lr = 0, momentum = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (static_cast<double>(step_num) <= phase.end_step || i == phases_.size() - 1) {
        const double pct = (static_cast<double>(step_num) - start_step) / (phase.end_step - start_step);
        lr = anneal(v.at(phase.start_lr), v.at(phase.end_lr), pct);
        if (o_.cycle_momentum()) momentum = anneal(v.at(phase.start_momentum), v.at(phase.end_momentum), pct);
        break;
      }
      start_step = phase.end_step;
    }
    lrs.push_back(lr);
    if (o_.cycle_momentum()) g.options().set_values({{use_beta1_ ? "beta1" : "momentum", momentum}});
  }
  return lrs;
}

std::map<std::string, std::vector<double>> OneCycleLR::extra_state() const {
  return {{"total_steps", {static_cast<double>(o_.total_steps())}}};
}

}  // namespace locus::optim::lr_scheduler
