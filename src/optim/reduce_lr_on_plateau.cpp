// ReduceLROnPlateau: the rate follows a metric, not the epoch count.

#include <algorithm>
#include <cmath>
#include <limits>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/optim/lr_scheduler.h"

namespace locus::optim::lr_scheduler {

namespace {

double first_value(const Tensor& t) { return t.to(DType::Float64).reshape({-1})[0].item<double>(); }

}  // namespace

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options)
    : optimizer_(&optimizer), o_(std::move(options)) {
  // As PyTorch's checks, in its order.
  if (o_.factor() >= 1.0) throw ValueError("Factor should be < 1.0.");
  const size_t groups = optimizer.param_groups().size();
  if (o_.min_lr().size() == 1) {
    min_lrs_.assign(groups, o_.min_lr().front());
  } else {
    if (o_.min_lr().size() != groups)
      throw ValueError("expected " + std::to_string(groups) + " min_lrs, got " + std::to_string(o_.min_lr().size()));
    min_lrs_ = o_.min_lr();
  }
  if (o_.mode() != "min" && o_.mode() != "max") throw ValueError("mode " + o_.mode() + " is unknown!");
  if (o_.threshold_mode() != "rel" && o_.threshold_mode() != "abs")
    throw ValueError("threshold mode " + o_.threshold_mode() + " is unknown!");
  best_ = o_.mode() == "min" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  for (const OptimizerParamGroup& g : optimizer.param_groups()) last_lr_.push_back(g.options().get_lr());
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  if (o_.mode() == "min" && o_.threshold_mode() == "rel") return a < best * (1. - o_.threshold());
  if (o_.mode() == "min") return a < best - o_.threshold();
  if (o_.threshold_mode() == "rel") return a > best * (o_.threshold() + 1.);
  return a > best + o_.threshold();
}

void ReduceLROnPlateau::step(double metrics) {
  ++last_epoch_;
  if (is_better(metrics, best_)) {
    best_ = metrics;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad epochs in cooldown do not count
  }
  auto& groups = optimizer_->param_groups();
  if (num_bad_epochs_ > o_.patience()) {
    for (size_t g = 0; g < groups.size(); ++g) {
      const double old_lr = groups[g].options().get_lr();
      const double new_lr = std::max(old_lr * o_.factor(), min_lrs_.at(g));
      if (old_lr - new_lr > o_.eps()) groups[g].options().set_lr(new_lr);
    }
    cooldown_counter_ = o_.cooldown();
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const OptimizerParamGroup& g : groups) last_lr_.push_back(g.options().get_lr());
}

std::map<std::string, Tensor> ReduceLROnPlateau::state_dict() const {
  const TensorOptions f64 = TensorOptions().dtype(DType::Float64);
  return {{"best", tensor(std::vector<double>{best_}, f64)},
          {"num_bad_epochs", tensor(std::vector<double>{static_cast<double>(num_bad_epochs_)}, f64)},
          {"cooldown_counter", tensor(std::vector<double>{static_cast<double>(cooldown_counter_)}, f64)},
          {"last_epoch", tensor(std::vector<double>{static_cast<double>(last_epoch_)}, f64)},
          {"_last_lr", tensor(last_lr_, f64)}};
}

void ReduceLROnPlateau::load_state_dict(const std::map<std::string, Tensor>& state) {
  for (const auto& [name, t] : state) {
    if (name == "best")
      best_ = first_value(t);
    else if (name == "num_bad_epochs")
      num_bad_epochs_ = static_cast<int64_t>(first_value(t));
    else if (name == "cooldown_counter")
      cooldown_counter_ = static_cast<int64_t>(first_value(t));
    else if (name == "last_epoch")
      last_epoch_ = static_cast<int64_t>(first_value(t));
    else if (name == "_last_lr") {
      const Tensor c = t.to(DType::Float64).reshape({-1});
      last_lr_.clear();
      for (int64_t k = 0; k < c.numel(); ++k) last_lr_.push_back(c[k].item<double>());
    } else {
      throw ValueError("ReduceLROnPlateau load_state_dict: unknown key '" + name + "'");
    }
  }
}

}  // namespace locus::optim::lr_scheduler
