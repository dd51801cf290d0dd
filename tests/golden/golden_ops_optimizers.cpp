// The Locus calls of the golden families `optimizers` (gen_optimizers.py) and `lr_scheduler`
// (gen_lr_scheduler.py).

#include <algorithm>
#include <cmath>
#include <memory>

#include "locus/optim.h"
#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

namespace sched = optim::lr_scheduler;

std::vector<double> doubles(const std::string& s) {
  std::vector<double> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = s.find(',', at);
    out.push_back(std::strtod(s.substr(at, comma - at).c_str(), nullptr));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// ---- optimizers ---------------------------------------------------------------------------

std::unique_ptr<optim::OptimizerOptions> defaults_of(const std::string& kind) {
  if (kind == "sgd") return optim::SGDOptions().clone();
  if (kind == "adam") return optim::AdamOptions().clone();
  if (kind == "adamw") return optim::AdamW::with_default_decay().clone();
  if (kind == "rmsprop") return optim::RMSpropOptions().clone();
  if (kind == "adagrad") return optim::AdagradOptions().clone();
  if (kind == "adamax") return optim::AdamaxOptions().clone();
  if (kind == "nadam") return optim::NAdamOptions().clone();
  if (kind == "radam") return optim::RAdamOptions().clone();
  throw std::runtime_error("unknown optimizer " + kind);
}

template <typename O>
const O& as(const optim::OptimizerOptions& o) {
  return static_cast<const O&>(o);
}

std::unique_ptr<optim::Optimizer> make(const std::string& kind, std::vector<optim::OptimizerParamGroup> groups,
                                       const optim::OptimizerOptions& o) {
  if (kind == "sgd") return std::make_unique<optim::SGD>(std::move(groups), as<optim::SGDOptions>(o));
  if (kind == "adam") return std::make_unique<optim::Adam>(std::move(groups), as<optim::AdamOptions>(o));
  if (kind == "adamw") return std::make_unique<optim::AdamW>(std::move(groups), as<optim::AdamOptions>(o));
  if (kind == "rmsprop") return std::make_unique<optim::RMSprop>(std::move(groups), as<optim::RMSpropOptions>(o));
  if (kind == "adagrad") return std::make_unique<optim::Adagrad>(std::move(groups), as<optim::AdagradOptions>(o));
  if (kind == "adamax") return std::make_unique<optim::Adamax>(std::move(groups), as<optim::AdamaxOptions>(o));
  if (kind == "nadam") return std::make_unique<optim::NAdam>(std::move(groups), as<optim::NAdamOptions>(o));
  return std::make_unique<optim::RAdam>(std::move(groups), as<optim::RAdamOptions>(o));
}

// Parameters p0, p1 (x(0), x(1)) and the gradients of each step after them: the parameters
// after every step. With groups, p1 is a second group with the `g1_` options, group 0's lr
// becomes `set_lr` after the first step and group 1's weight_decay `set_wd` after the second.
Outs run(const Ctx& c, bool groups) {
  std::vector<Tensor> params;
  for (size_t k = 0; k < 2; ++k) params.push_back(c.x(k).detach().requires_grad_());  // the input itself, in its layout
  const std::string kind = c.str("kind");
  std::unique_ptr<optim::OptimizerOptions> defaults = defaults_of(kind);
  std::map<std::string, double> values, group1;
  for (const auto& [key, v] : c.c.args) {
    if (key == "kind" || key == "set_lr" || key == "set_wd") continue;
    if (key.rfind("g1_", 0) == 0)
      group1[key.substr(3)] = std::strtod(v.c_str(), nullptr);
    else
      values[key] = std::strtod(v.c_str(), nullptr);
  }
  defaults->set_values(values);
  std::vector<optim::OptimizerParamGroup> param_groups;
  if (groups) {
    std::unique_ptr<optim::OptimizerOptions> own = defaults->clone();
    own->set_values(group1);
    param_groups.emplace_back(std::vector<Tensor>{params[0]});
    param_groups.emplace_back(std::vector<Tensor>{params[1]}, std::move(own));
  } else {
    param_groups.emplace_back(params);
  }
  std::unique_ptr<optim::Optimizer> opt = make(kind, std::move(param_groups), *defaults);
  Outs outs;
  const size_t steps = (c.in.size() - 2) / 2;
  for (size_t s = 0; s < steps; ++s) {
    for (size_t k = 0; k < 2; ++k) params[k].set_grad(c.x(2 + 2 * s + k));
    opt->step();
    if (s == 0 && c.has("set_lr")) opt->param_groups()[0].options().set_lr(c.f64("set_lr"));
    if (s == 1 && c.has("set_wd")) opt->param_groups()[1].options().set_values({{"weight_decay", c.f64("set_wd")}});
    for (const Tensor& p : params) outs.push_back(p.detach().clone());
  }
  return outs;
}

// ---- lr_scheduler -------------------------------------------------------------------------

sched::LambdaLR::Lambda lambda_of(const std::string& spec) {
  std::string numbers = spec.substr(spec.find(':') + 1);
  std::replace(numbers.begin(), numbers.end(), ':', ',');
  const std::vector<double> a = doubles(numbers);
  if (spec.rfind("pow:", 0) == 0) return [b = a.at(0)](int64_t e) { return std::pow(b, static_cast<double>(e)); };
  return [n = static_cast<int64_t>(a.at(0)), g = a.at(1)](int64_t e) {
    return std::pow(g, static_cast<double>(e >= 0 ? e / n : -((-e + n - 1) / n)));
  };
}

// The scheduler `name` with the case's arguments prefixed `prefix` (SequentialLR's `s<k>_`).
std::shared_ptr<sched::LRScheduler> build(const Ctx& c, optim::Optimizer& opt, const std::string& name,
                                          const std::string& prefix) {
  auto has = [&](const char* k) { return c.has((prefix + k).c_str()); };
  auto num = [&](const char* k, double fallback) { return c.f64((prefix + k).c_str(), fallback); };
  auto integer = [&](const char* k, int64_t fallback) { return c.i64((prefix + k).c_str(), fallback); };
  if (name == "step") return std::make_shared<sched::StepLR>(opt, integer("step_size", 0), num("gamma", 0.1));
  if (name == "multistep") {
    std::vector<int64_t> m;
    for (double v : doubles(c.str((prefix + "milestones").c_str()))) m.push_back(static_cast<int64_t>(v));
    return std::make_shared<sched::MultiStepLR>(opt, m, num("gamma", 0.1));
  }
  if (name == "exponential") return std::make_shared<sched::ExponentialLR>(opt, num("gamma", 0));
  if (name == "cosine") return std::make_shared<sched::CosineAnnealingLR>(opt, integer("T_max", 0), num("eta_min", 0));
  if (name == "warm_restarts")
    return std::make_shared<sched::CosineAnnealingWarmRestarts>(opt, integer("T_0", 0), integer("T_mult", 1),
                                                                num("eta_min", 0));
  if (name == "linear")
    return std::make_shared<sched::LinearLR>(opt, num("start_factor", 1.0 / 3), num("end_factor", 1.0),
                                             integer("total_iters", 5));
  if (name == "constant")
    return std::make_shared<sched::ConstantLR>(opt, num("factor", 1.0 / 3), integer("total_iters", 5));
  if (name == "lambda") {
    if (!c.has("lambda1")) return std::make_shared<sched::LambdaLR>(opt, lambda_of(c.str("lambda0")));
    return std::make_shared<sched::LambdaLR>(
        opt, std::vector<sched::LambdaLR::Lambda>{lambda_of(c.str("lambda0")), lambda_of(c.str("lambda1"))});
  }
  if (name == "one_cycle") {
    sched::OneCycleLROptions o(0, integer("total_steps", 0));
    o.max_lr(doubles(c.str("max_lr")));
    o.epochs(integer("epochs", 0)).steps_per_epoch(integer("steps_per_epoch", 0));
    o.pct_start(num("pct_start", o.pct_start())).div_factor(num("div_factor", o.div_factor()));
    o.final_div_factor(num("final_div_factor", o.final_div_factor()));
    o.base_momentum(num("base_momentum", o.base_momentum())).max_momentum(num("max_momentum", o.max_momentum()));
    if (has("anneal_strategy")) o.anneal_strategy(c.str("anneal_strategy"));
    if (has("three_phase")) o.three_phase(c.flag("three_phase"));
    if (has("cycle_momentum")) o.cycle_momentum(c.flag("cycle_momentum"));
    return std::make_shared<sched::OneCycleLR>(opt, o);
  }
  if (name == "sequential") {
    std::vector<std::shared_ptr<sched::LRScheduler>> subs;
    for (int k = 0; c.has(("s" + std::to_string(k)).c_str()); ++k) {
      const std::string sub = "s" + std::to_string(k);
      subs.push_back(build(c, opt, c.str(sub.c_str()), sub + "_"));
    }
    std::vector<int64_t> m;
    for (double v : doubles(c.str("milestones"))) m.push_back(static_cast<int64_t>(v));
    return std::make_shared<sched::SequentialLR>(opt, subs, m);
  }
  throw std::runtime_error("unknown scheduler " + name);
}

Outs lr_schedule(const Ctx& c) {
  std::vector<double> lrs = {c.f64("lr0")};
  if (c.has("lr1")) lrs.push_back(c.f64("lr1"));
  std::vector<optim::OptimizerParamGroup> groups;
  for (double lr : lrs) {
    Tensor p = zeros({1}, TensorOptions().device(c.dev)).requires_grad_();
    if (c.has("opt") && c.str("opt") == "adam")
      groups.emplace_back(std::vector<Tensor>{p}, optim::AdamOptions(lr));
    else
      groups.emplace_back(std::vector<Tensor>{p}, optim::SGDOptions(lr).momentum(0.9));
  }
  const bool adam = c.has("opt") && c.str("opt") == "adam";
  std::unique_ptr<optim::Optimizer> opt;
  if (adam)
    opt = std::make_unique<optim::Adam>(groups);
  else
    opt = std::make_unique<optim::SGD>(groups, optim::SGDOptions(lrs[0]).momentum(0.9));
  const std::string name = c.str("sched");
  const char* momentum = adam ? "beta1" : "momentum";
  std::vector<double> seq, mom;
  auto record = [&] {
    for (const optim::OptimizerParamGroup& g : opt->param_groups()) {
      seq.push_back(g.options().get_lr());
      mom.push_back(g.options().values().at(momentum));
    }
  };
  constexpr int kSteps = 100;
  if (name == "plateau") {
    sched::ReduceLROnPlateauOptions o;
    if (c.has("mode")) o.mode(c.str("mode"));
    if (c.has("threshold_mode")) o.threshold_mode(c.str("threshold_mode"));
    o.factor(c.f64("factor", o.factor())).patience(c.i64("patience", o.patience()));
    o.threshold(c.f64("threshold", o.threshold())).cooldown(c.i64("cooldown", o.cooldown()));
    o.eps(c.f64("eps", o.eps()));
    if (c.has("min_lr")) o.min_lr(doubles(c.str("min_lr")));
    sched::ReduceLROnPlateau scheduler(*opt, o);
    const Tensor metrics = c.x(0).to(Device("cpu"));
    record();
    for (int t = 0; t < kSteps; ++t) {
      opt->step();
      scheduler.step(metrics[t].item<double>());
      record();
    }
  } else {
    std::shared_ptr<sched::LRScheduler> scheduler = build(c, *opt, name, "");
    record();
    for (int t = 0; t < kSteps; ++t) {
      opt->step();
      scheduler->step();
      record();
    }
  }
  const int64_t n = static_cast<int64_t>(lrs.size());
  const TensorOptions f64 = TensorOptions().dtype(DType::Float64);
  Outs outs = {tensor(seq, {kSteps + 1, n}, f64)};
  if (name == "one_cycle" && !(c.has("cycle_momentum") && !c.flag("cycle_momentum")))
    outs.push_back(tensor(mom, {kSteps + 1, n}, f64));
  return outs;
}

const OpRegistrar registered{
    {"optimizer", [](const Ctx& c) -> Outs { return run(c, false); }},
    {"optimizer_groups", [](const Ctx& c) -> Outs { return run(c, true); }},
    {"lr_schedule", lr_schedule},
};

}  // namespace
}  // namespace locus::golden
