// The schedules that multiply the rate by gamma at some epochs: StepLR, MultiStepLR,
// ExponentialLR (Note [Chainable schedules] in src/optim/lr_scheduler.cpp).

#include <algorithm>
#include <cmath>

#include "locus/optim/lr_scheduler.h"
#include "src/optim/schedule_values.h"

namespace locus::optim::lr_scheduler {

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), step_size_(detail::positive(step_size, "StepLR: step_size")), gamma_(gamma) {
  save("step_size", step_size_), save("gamma", gamma_);
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return group_lrs();
  return group_lrs_times(gamma_);
}

std::vector<double> StepLR::closed_form_lr() {
  const int64_t n = last_epoch_ >= 0 ? last_epoch_ / step_size_ : -((-last_epoch_ + step_size_ - 1) / step_size_);
  return from_base_lrs([&](double base) { return base * std::pow(gamma_, static_cast<double>(n)); });
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  save("milestones", milestones_), save("gamma", gamma_);
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  const auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (hits == 0) return group_lrs();
  return group_lrs_times(std::pow(gamma_, static_cast<double>(hits)));
}

std::vector<double> MultiStepLR::closed_form_lr() {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  return from_base_lrs([&](double base) { return base * std::pow(gamma_, static_cast<double>(passed)); });
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), gamma_(gamma) {
  save("gamma", gamma_);
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() { return last_epoch_ == 0 ? group_lrs() : group_lrs_times(gamma_); }

std::vector<double> ExponentialLR::closed_form_lr() {
  return from_base_lrs([&](double base) { return base * std::pow(gamma_, static_cast<double>(last_epoch_)); });
}

}  // namespace locus::optim::lr_scheduler
