// The base of the epoch-driven learning-rate schedulers: the groups' base rates, step() and
// step(epoch), and the state_dict() plumbing; each schedule's formula is in its own file
// (Note [Chainable schedules]).

#include "locus/optim/lr_scheduler.h"

#include "locus/errors.h"
#include "src/optim/schedule_values.h"

namespace locus::optim::lr_scheduler {

using detail::f64;
using detail::values_of;

// Note [Chainable schedules]: PyTorch's get_lr() computes most rates from the groups' current
// rates (lr * gamma), not from the base rates in closed form (base * gamma^epoch). The two
// differ in the last bits, and a schedule is compared with PyTorch's to 1e-12, so each get_lr()
// is PyTorch's expression in PyTorch's order of operations; closed_form_lr() is used only
// where PyTorch uses _get_closed_form_lr (step(epoch), SequentialLR's milestones).

LRScheduler::LRScheduler(Optimizer& optimizer, int64_t last_epoch) : optimizer_(&optimizer), last_epoch_(last_epoch) {
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    auto& values = groups[g].scheduler_values();
    if (last_epoch == -1)
      values.try_emplace("initial_lr", groups[g].options().get_lr());
    else if (!values.count("initial_lr"))
      throw ValueError("param 'initial_lr' is not specified in param_groups[" + std::to_string(g) +
                       "] when resuming an optimizer");
    base_lrs_.push_back(values.at("initial_lr"));
  }
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  set_lrs(get_lr());
}

void LRScheduler::step(int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  set_lrs(closed_form_lr());
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> out;
  for (const OptimizerParamGroup& g : optimizer_->param_groups()) out.push_back(g.options().get_lr());
  return out;
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_->param_groups();
  for (size_t g = 0; g < groups.size() && g < lrs.size(); ++g) groups[g].options().set_lr(lrs[g]);
  last_lr_ = group_lrs();
}

std::vector<double> LRScheduler::group_lrs_times(double factor) const {
  std::vector<double> lrs = group_lrs();
  for (double& lr : lrs) lr = lr * factor;
  return lrs;
}

std::vector<double> LRScheduler::from_base_lrs(const std::function<double(double)>& f) const {
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(f(base));
  return lrs;
}

std::map<std::string, std::vector<double>> LRScheduler::extra_state() const {
  std::map<std::string, std::vector<double>> out;
  for (const Field& f : fields_)
    std::visit(
        [&](auto* v) {
          if constexpr (std::is_same_v<decltype(v), std::vector<int64_t>*>)
            out[f.name] = std::vector<double>(v->begin(), v->end());
          else
            out[f.name] = {static_cast<double>(*v)};
        },
        f.value);
  return out;
}

void LRScheduler::load_extra_state(const std::map<std::string, std::vector<double>>& s) {
  for (const Field& f : fields_) {
    auto it = s.find(f.name);
    if (it == s.end()) continue;
    std::visit(
        [&](auto* v) {
          if constexpr (std::is_same_v<decltype(v), std::vector<int64_t>*>) {
            v->clear();
            for (double m : it->second) v->push_back(static_cast<int64_t>(m));
          } else if (!it->second.empty()) {
            *v = static_cast<std::remove_pointer_t<decltype(v)>>(it->second.front());
          }
        },
        f.value);
  }
}

std::map<std::string, Tensor> LRScheduler::state_dict() const {
  std::map<std::string, Tensor> out;
  out["last_epoch"] = f64({static_cast<double>(last_epoch_)});
  out["_step_count"] = f64({static_cast<double>(step_count_)});
  out["base_lrs"] = f64(base_lrs_);
  out["_last_lr"] = f64(last_lr_);
  for (const auto& [name, v] : extra_state()) out[name] = f64(v);
  return out;
}

void LRScheduler::load_state_dict(const std::map<std::string, Tensor>& state) {
  std::map<std::string, std::vector<double>> extra;
  const auto known = extra_state();
  for (const auto& [name, t] : state) {
    if (name == "last_epoch" || name == "_step_count" || name == "base_lrs" || name == "_last_lr") continue;
    if (!known.count(name)) throw ValueError("lr scheduler load_state_dict: unknown key '" + name + "'");
    extra[name] = values_of(t);
  }
  if (state.count("last_epoch")) last_epoch_ = static_cast<int64_t>(values_of(state.at("last_epoch")).at(0));
  if (state.count("_step_count")) step_count_ = static_cast<int64_t>(values_of(state.at("_step_count")).at(0));
  if (state.count("base_lrs")) base_lrs_ = values_of(state.at("base_lrs"));
  if (state.count("_last_lr")) last_lr_ = values_of(state.at("_last_lr"));
  load_extra_state(extra);
}

}  // namespace locus::optim::lr_scheduler
