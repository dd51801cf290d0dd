// The epoch-driven learning-rate schedulers, each get_lr() PyTorch 1.13's chainable formula
// term by term (Note [Chainable schedules]).

#include "locus/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "locus/errors.h"
#include "locus/factories.h"
#include "src/optim/py_repr.h"

namespace locus::optim::lr_scheduler {

// Note [Chainable schedules]: PyTorch's get_lr() computes most rates from the groups' current
// rates (lr * gamma), not from the base rates in closed form (base * gamma^epoch). The two
// differ in the last bits, and a schedule is compared with PyTorch's to 1e-12, so each get_lr()
// below is PyTorch's expression in PyTorch's order of operations; closed_form_lr() is used only
// where PyTorch uses _get_closed_form_lr (step(epoch), SequentialLR's milestones).

namespace {

constexpr double kPi = std::numbers::pi;

Tensor f64(const std::vector<double>& v) { return tensor(v, TensorOptions().dtype(DType::Float64)); }

std::vector<double> values_of(const Tensor& t) {
  const Tensor c = t.to(DType::Float64).contiguous();
  std::vector<double> out(static_cast<size_t>(c.numel()));
  for (int64_t k = 0; k < c.numel(); ++k) out[static_cast<size_t>(k)] = c.reshape({-1})[k].item<double>();
  return out;
}

double scalar_of(const std::map<std::string, std::vector<double>>& s, const char* name, double fallback) {
  auto it = s.find(name);
  return it == s.end() || it->second.empty() ? fallback : it->second.front();
}

}  // namespace

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

// ---- StepLR -------------------------------------------------------------------------------

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), step_size_(step_size), gamma_(gamma) {
  if (step_size < 1)
    throw ValueError("StepLR: step_size must be a positive integer, but got " + std::to_string(step_size));
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

std::vector<double> StepLR::closed_form_lr() {
  std::vector<double> lrs;
  const int64_t n = last_epoch_ >= 0 ? last_epoch_ / step_size_ : -((-last_epoch_ + step_size_ - 1) / step_size_);
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(n)));
  return lrs;
}

std::map<std::string, std::vector<double>> StepLR::extra_state() const {
  return {{"step_size", {static_cast<double>(step_size_)}}, {"gamma", {gamma_}}};
}

void StepLR::load_extra_state(const std::map<std::string, std::vector<double>>& s) {
  step_size_ = static_cast<int64_t>(scalar_of(s, "step_size", static_cast<double>(step_size_)));
  gamma_ = scalar_of(s, "gamma", gamma_);
}

// ---- MultiStepLR --------------------------------------------------------------------------

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  const auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (hits == 0) return lrs;
  for (double& lr : lrs) lr = lr * std::pow(gamma_, static_cast<double>(hits));
  return lrs;
}

std::vector<double> MultiStepLR::closed_form_lr() {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(passed)));
  return lrs;
}

std::map<std::string, std::vector<double>> MultiStepLR::extra_state() const {
  std::vector<double> m(milestones_.begin(), milestones_.end());
  return {{"milestones", m}, {"gamma", {gamma_}}};
}

void MultiStepLR::load_extra_state(const std::map<std::string, std::vector<double>>& s) {
  if (s.count("milestones")) {
    milestones_.clear();
    for (double m : s.at("milestones")) milestones_.push_back(static_cast<int64_t>(m));
  }
  gamma_ = scalar_of(s, "gamma", gamma_);
}

// ---- ExponentialLR ------------------------------------------------------------------------

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

std::vector<double> ExponentialLR::closed_form_lr() {
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch_)));
  return lrs;
}

std::map<std::string, std::vector<double>> ExponentialLR::extra_state() const { return {{"gamma", {gamma_}}}; }

void ExponentialLR::load_extra_state(const std::map<std::string, std::vector<double>>& s) {
  gamma_ = scalar_of(s, "gamma", gamma_);
}

// ---- CosineAnnealingLR --------------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), T_max_(T_max), eta_min_(eta_min) {
  if (T_max < 1)
    throw ValueError("CosineAnnealingLR: T_max must be a positive integer, but got " + std::to_string(T_max));
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
  std::vector<double> lrs;
  const double e = static_cast<double>(last_epoch_), T = static_cast<double>(T_max_);
  for (double base : base_lrs_) lrs.push_back(eta_min_ + (base - eta_min_) * (1 + std::cos(kPi * e / T)) / 2);
  return lrs;
}

std::map<std::string, std::vector<double>> CosineAnnealingLR::extra_state() const {
  return {{"T_max", {static_cast<double>(T_max_)}}, {"eta_min", {eta_min_}}};
}

void CosineAnnealingLR::load_extra_state(const std::map<std::string, std::vector<double>>& s) {
  T_max_ = static_cast<int64_t>(scalar_of(s, "T_max", static_cast<double>(T_max_)));
  eta_min_ = scalar_of(s, "eta_min", eta_min_);
}

// ---- CosineAnnealingWarmRestarts ----------------------------------------------------------

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
  // PyTorch's _initial_step: its step() is this class's, which leaves _step_count at 0.
  step_count_ = 0;
  step();
}

std::vector<double> CosineAnnealingWarmRestarts::get_lr() {
  std::vector<double> lrs;
  const double T_i = static_cast<double>(T_i_);
  for (double base : base_lrs_) lrs.push_back(eta_min_ + (base - eta_min_) * (1 + std::cos(kPi * T_cur_ / T_i)) / 2);
  return lrs;
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

std::map<std::string, std::vector<double>> CosineAnnealingWarmRestarts::extra_state() const {
  return {{"T_0", {static_cast<double>(T_0_)}},
          {"T_i", {static_cast<double>(T_i_)}},
          {"T_mult", {static_cast<double>(T_mult_)}},
          {"eta_min", {eta_min_}},
          {"T_cur", {T_cur_}}};
}

void CosineAnnealingWarmRestarts::load_extra_state(const std::map<std::string, std::vector<double>>& s) {
  T_0_ = static_cast<int64_t>(scalar_of(s, "T_0", static_cast<double>(T_0_)));
  T_i_ = static_cast<int64_t>(scalar_of(s, "T_i", static_cast<double>(T_i_)));
  T_mult_ = static_cast<int64_t>(scalar_of(s, "T_mult", static_cast<double>(T_mult_)));
  eta_min_ = scalar_of(s, "eta_min", eta_min_);
  T_cur_ = scalar_of(s, "T_cur", T_cur_);
}

// ---- LinearLR -----------------------------------------------------------------------------

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
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr = lr * start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  const double d = end_factor_ - start_factor_;
  for (double& lr : lrs)
    lr = lr * (1. + d / (static_cast<double>(total_iters_) * start_factor_ + static_cast<double>(last_epoch_ - 1) * d));
  return lrs;
}

std::vector<double> LinearLR::closed_form_lr() {
  std::vector<double> lrs;
  const double reached = static_cast<double>(std::min(total_iters_, last_epoch_));
  for (double base : base_lrs_)
    lrs.push_back(base * (start_factor_ + (end_factor_ - start_factor_) * reached / static_cast<double>(total_iters_)));
  return lrs;
}

std::map<std::string, std::vector<double>> LinearLR::extra_state() const {
  return {{"start_factor", {start_factor_}},
          {"end_factor", {end_factor_}},
          {"total_iters", {static_cast<double>(total_iters_)}}};
}

void LinearLR::load_extra_state(const std::map<std::string, std::vector<double>>& s) {
  start_factor_ = scalar_of(s, "start_factor", start_factor_);
  end_factor_ = scalar_of(s, "end_factor", end_factor_);
  total_iters_ = static_cast<int64_t>(scalar_of(s, "total_iters", static_cast<double>(total_iters_)));
}

// ---- ConstantLR ---------------------------------------------------------------------------

ConstantLR::ConstantLR(Optimizer& optimizer, double factor, int64_t total_iters, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), factor_(factor), total_iters_(total_iters) {
  if (factor > 1.0 || factor < 0) throw ValueError("Constant multiplicative factor expected to be between 0 and 1.");
  initial_step();
}

std::vector<double> ConstantLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr = lr * factor_;
    return lrs;
  }
  if (last_epoch_ != total_iters_) return lrs;
  for (double& lr : lrs) lr = lr * (1.0 / factor_);
  return lrs;
}

std::vector<double> ConstantLR::closed_form_lr() {
  std::vector<double> lrs;
  const double after = last_epoch_ >= total_iters_ ? 1.0 : 0.0;
  for (double base : base_lrs_) lrs.push_back(base * (factor_ + after * (1 - factor_)));
  return lrs;
}

std::map<std::string, std::vector<double>> ConstantLR::extra_state() const {
  return {{"factor", {factor_}}, {"total_iters", {static_cast<double>(total_iters_)}}};
}

void ConstantLR::load_extra_state(const std::map<std::string, std::vector<double>>& s) {
  factor_ = scalar_of(s, "factor", factor_);
  total_iters_ = static_cast<int64_t>(scalar_of(s, "total_iters", static_cast<double>(total_iters_)));
}

// ---- LambdaLR -----------------------------------------------------------------------------

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

// ---- OneCycleLR ---------------------------------------------------------------------------

OneCycleLR::OneCycleLR(Optimizer& optimizer, OneCycleLROptions o, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), o_(std::move(o)) {
  using optim::detail::py_repr;
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

// ---- SequentialLR -------------------------------------------------------------------------

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
