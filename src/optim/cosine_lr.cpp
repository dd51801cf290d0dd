// The cosine schedules: CosineAnnealingLR, and CosineAnnealingWarmRestarts (SGDR) with its own
// step() (Note [Chainable schedules] in src/optim/lr_scheduler.cpp).

#include <cmath>

#include "locus/errors.h"
#include "locus/optim/lr_scheduler.h"
#include "src/optim/schedule_values.h"

namespace locus::optim::lr_scheduler {

using detail::kPi;

namespace {

// The annealed rate at x of a half period T: from base (x = 0) down to eta_min (x = T).
double annealed(double base, double eta_min, double x, double T) {
  return eta_min + (base - eta_min) * (1 + std::cos(kPi * x / T)) / 2;
}

}  // namespace

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch),
      T_max_(detail::positive(T_max, "CosineAnnealingLR: T_max")),
      eta_min_(eta_min) {
  save("T_max", T_max_), save("eta_min", eta_min_);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  const double e = static_cast<double>(last_epoch_), T = static_cast<double>(T_max_);
  if (last_epoch_ == 0) return lrs;
  if (step_count_ == 1 && last_epoch_ > 0) {
    for (size_t g = 0; g < lrs.size(); ++g)
      lrs[g] = eta_min_ + (base_lrs_[g] - eta_min_) * (1 + std::cos(e * kPi / T)) / 2;
    return lrs;
  }
  if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0) {
    for (size_t g = 0; g < lrs.size(); ++g) lrs[g] = lrs[g] + (base_lrs_[g] - eta_min_) * (1 - std::cos(kPi / T)) / 2;
    return lrs;
  }
  for (double& lr : lrs)
    lr = (1 + std::cos(kPi * e / T)) / (1 + std::cos(kPi * (e - 1) / T)) * (lr - eta_min_) + eta_min_;
  return lrs;
}

std::vector<double> CosineAnnealingLR::closed_form_lr() {
  const double e = static_cast<double>(last_epoch_), T = static_cast<double>(T_max_);
  return from_base_lrs([&](double base) { return annealed(base, eta_min_, e, T); });
}

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult,
                                                         double eta_min, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch),
      T_0_(T_0),
      T_i_(T_0),
      T_mult_(T_mult),
      eta_min_(eta_min),
      T_cur_(static_cast<double>(last_epoch)) {
  if (T_0 <= 0) throw ValueError("Expected positive integer T_0, but got " + std::to_string(T_0));
  if (T_mult < 1) throw ValueError("Expected integer T_mult >= 1, but got " + std::to_string(T_mult));
  save("T_0", T_0_), save("T_i", T_i_), save("T_mult", T_mult_), save("eta_min", eta_min_), save("T_cur", T_cur_);
  // PyTorch's _initial_step: its step() is this class's, which leaves _step_count at 0.
  step_count_ = 0;
  step();
}

std::vector<double> CosineAnnealingWarmRestarts::get_lr() {
  const double T_i = static_cast<double>(T_i_);
  return from_base_lrs([&](double base) { return annealed(base, eta_min_, T_cur_, T_i); });
}

void CosineAnnealingWarmRestarts::step() {
  if (last_epoch_ < 0) return step(int64_t{0});
  T_cur_ = T_cur_ + 1;
  if (T_cur_ >= static_cast<double>(T_i_)) {
    T_cur_ = T_cur_ - static_cast<double>(T_i_);
    T_i_ = T_i_ * T_mult_;
  }
  last_epoch_ = last_epoch_ + 1;
  apply();
}

void CosineAnnealingWarmRestarts::step(int64_t epoch) {
  if (epoch < 0) throw ValueError("Expected non-negative epoch, but got " + std::to_string(epoch));
  if (epoch >= T_0_) {
    if (T_mult_ == 1) {
      T_cur_ = static_cast<double>(epoch % T_0_);
    } else {
      const double e = static_cast<double>(epoch), T_0 = static_cast<double>(T_0_), m = static_cast<double>(T_mult_);
      const auto n = static_cast<int64_t>(std::log(e / T_0 * (m - 1) + 1) / std::log(m));
      const double power = std::pow(m, static_cast<double>(n));
      T_cur_ = e - T_0 * (power - 1) / (m - 1);
      T_i_ = T_0_ * static_cast<int64_t>(power);
    }
  } else {
    T_i_ = T_0_;
    T_cur_ = static_cast<double>(epoch);
  }
  last_epoch_ = epoch;
  apply();
}

void CosineAnnealingWarmRestarts::apply() { set_lrs(get_lr()); }

}  // namespace locus::optim::lr_scheduler
