// The schedules that scale the rate by a factor of the epoch: LinearLR, ConstantLR, LambdaLR
// (Note [Chainable schedules] in src/optim/lr_scheduler.cpp).

#include <algorithm>

#include "locus/errors.h"
#include "locus/optim/lr_scheduler.h"

namespace locus::optim::lr_scheduler {

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters,
                   int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  if (start_factor > 1.0 || start_factor < 0)
    throw ValueError("Starting multiplicative factor expected to be between 0 and 1.");
  if (end_factor > 1.0 || end_factor < 0)
    throw ValueError("Ending multiplicative factor expected to be between 0 and 1.");
  save("start_factor", start_factor_), save("end_factor", end_factor_), save("total_iters", total_iters_);
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  if (last_epoch_ == 0) return group_lrs_times(start_factor_);
  if (last_epoch_ > total_iters_) return group_lrs();
  const double d = end_factor_ - start_factor_;
  return group_lrs_times(
      1. + d / (static_cast<double>(total_iters_) * start_factor_ + static_cast<double>(last_epoch_ - 1) * d));
}

std::vector<double> LinearLR::closed_form_lr() {
  const double reached = static_cast<double>(std::min(total_iters_, last_epoch_));
  return from_base_lrs([&](double base) {
    return base * (start_factor_ + (end_factor_ - start_factor_) * reached / static_cast<double>(total_iters_));
  });
}

ConstantLR::ConstantLR(Optimizer& optimizer, double factor, int64_t total_iters, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), factor_(factor), total_iters_(total_iters) {
  if (factor > 1.0 || factor < 0) throw ValueError("Constant multiplicative factor expected to be between 0 and 1.");
  save("factor", factor_), save("total_iters", total_iters_);
  initial_step();
}

std::vector<double> ConstantLR::get_lr() {
  if (last_epoch_ == 0) return group_lrs_times(factor_);
  if (last_epoch_ != total_iters_) return group_lrs();
  return group_lrs_times(1.0 / factor_);
}

std::vector<double> ConstantLR::closed_form_lr() {
  const double after = last_epoch_ >= total_iters_ ? 1.0 : 0.0;
  return from_base_lrs([&](double base) { return base * (factor_ + after * (1 - factor_)); });
}

LambdaLR::LambdaLR(Optimizer& optimizer, Lambda lr_lambda, int64_t last_epoch)
    : LambdaLR(optimizer, std::vector<Lambda>(optimizer.param_groups().size(), lr_lambda), last_epoch) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), lr_lambdas_(std::move(lr_lambdas)) {
  if (lr_lambdas_.size() != optimizer.param_groups().size())
    throw ValueError("Expected " + std::to_string(optimizer.param_groups().size()) + " lr_lambdas, but got " +
                     std::to_string(lr_lambdas_.size()));
  for (const Lambda& f : lr_lambdas_)
    if (!f) throw ValueError("LambdaLR: an lr_lambda is empty");
  initial_step();
}

std::vector<double> LambdaLR::get_lr() {
  std::vector<double> lrs;
  for (size_t g = 0; g < base_lrs_.size(); ++g) lrs.push_back(base_lrs_[g] * lr_lambdas_[g](last_epoch_));
  return lrs;
}

}  // namespace locus::optim::lr_scheduler
