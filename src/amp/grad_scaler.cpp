// amp::GradScaler: the loss-scaling loop, with PyTorch's stages per optimizer and its update rule.

#include "locus/amp/grad_scaler.h"

#include <cfloat>
#include <cmath>
#include <unordered_set>
#include <utility>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "src/distributed/sharded_unit.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/ops/unscale.h"

namespace locus::amp {
namespace {

const std::string kPrefix = "[locus::amp] GradScaler::";

void check_options(const GradScalerOptions& o) {
  if (!(o.init_scale() > 0) || !std::isfinite(o.init_scale()))
    throw ValueError(kPrefix + "GradScaler: init_scale must be a positive finite number, got " + std::to_string(o.init_scale()));
  if (!(o.growth_factor() > 1) || !std::isfinite(o.growth_factor()))
    throw ValueError(kPrefix + "GradScaler: growth_factor must be greater than 1, got " + std::to_string(o.growth_factor()));
  if (!(o.backoff_factor() > 0 && o.backoff_factor() < 1))
    throw ValueError(kPrefix + "GradScaler: backoff_factor must be in (0, 1), got " + std::to_string(o.backoff_factor()));
  if (o.growth_interval() <= 0)
    throw ValueError(kPrefix + "GradScaler: growth_interval must be positive, got " + std::to_string(o.growth_interval()));
}

Tensor float64_scalar(double v) { return full({}, v, TensorOptions().dtype(DType::Float64)); }
Tensor int64_scalar(int64_t v) { return full({}, v, TensorOptions().dtype(DType::Int64)); }

const Tensor& entry(const std::map<std::string, Tensor>& state, const std::string& key) {
  const auto it = state.find(key);
  if (it == state.end()) throw ValueError(kPrefix + "load_state_dict: the state has no '" + key + "'");
  if (!it->second.defined() || it->second.numel() != 1)
    throw ValueError(kPrefix + "load_state_dict: '" + key + "' must hold one number");
  return it->second;
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale()) {
  check_options(options_);
}

Tensor GradScaler::scale(const Tensor& loss) const {
  if (!enabled()) return loss;
  if (!loss.is_floating_point())
    throw DTypeError(kPrefix + "scale: the loss must be floating, got " + std::string(dtype_name(loss.dtype())));
  if (loss.dtype() == DType::Float16 || loss.dtype() == DType::BFloat16) {
    // As PyTorch's multiplication by its float32 scale tensor: a float16 loss times 65536 may
    // overflow to inf (then the step is skipped and the scale backs off), which a number operand
    // would refuse as not fitting float16.
    return mul(loss, full({}, scale_, TensorOptions().dtype(DType::Float32)));
  }
  return mul(loss, scale_);
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!enabled()) return;
  // Nothing is recorded until the pass has run: a refused call leaves the scaler as it was.
  const auto known = per_optimizer_.find(&optimizer);
  const Stage stage = known == per_optimizer_.end() ? Stage::Ready : known->second.stage;
  if (stage == Stage::Unscaled)
    throw ValueError(kPrefix + "unscale_() has already been called on this optimizer since the last update()");
  if (stage == Stage::Stepped) throw ValueError(kPrefix + "unscale_() is being called after step()");
  // Gradients by device, in the order their devices first appear.
  std::vector<std::pair<Device, std::vector<Tensor>>> by_device;
  const std::vector<Tensor>& params = optimizer.params();
  std::unordered_set<const void*> seen;  // a parameter listed twice (tied weights) is unscaled once
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor g = params[i].grad();
    if (!g.defined() || !seen.insert(g.impl()).second) continue;
    if (g.dtype() == DType::Float16)
      throw ValueError(kPrefix + "unscale_: parameter " + std::to_string(i) +
                       " has float16 gradients, which underflow when unscaled in float16. Keep the parameters in "
                       "float32 and run the forward pass under amp::AutocastGuard: its casts give float32 parameters "
                       "float32 gradients");
    auto it = by_device.begin();
    while (it != by_device.end() && it->first != g.device()) ++it;
    if (it == by_device.end()) it = by_device.insert(by_device.end(), {g.device(), {}});
    it->second.push_back(g);
  }
  std::vector<Tensor> found_inf;
  for (auto& [device, grads] : by_device) {
    Tensor found = zeros({1}, TensorOptions().dtype(DType::Float32).device(device));
    ops::unscale_grads_(grads, 1.0 / scale_, found);
    found_inf.push_back(std::move(found));
  }
  // Sharded parameters (fully_shard): each rank saw only its rows, so the ranks agree on one
  // flag (the largest) and all skip a step, or none (PyTorch's ShardedGradScaler does the same).
  for (const Tensor& p : params)
    if (const auto [shard, unit] = distributed::detail::find_shard(p); unit) {
      NoGradGuard no_grad;
      Tensor any = zeros({1}, TensorOptions().dtype(DType::Float32));
      for (const Tensor& f : found_inf) any = maximum(any, f.to(Device(DeviceType::CPU)));
      unit->group->all_reduce(any, distributed::ReduceOp::Max)->wait();
      found_inf = {any};
      break;
    }
  PerOptimizer& state = per_optimizer_[&optimizer];
  state.found_inf = std::move(found_inf);
  state.found.reset();
  state.stage = Stage::Unscaled;
}

// The one read of the device flags in a step: summed on the first device, read once.
bool GradScaler::found_any(PerOptimizer& state) const {
  if (state.found) return *state.found;
  if (state.found_inf.empty()) return *(state.found = false);
  NoGradGuard no_grad;
  Tensor total = state.found_inf[0];
  for (size_t k = 1; k < state.found_inf.size(); ++k) total = add(total, state.found_inf[k].to(total.device()));
  state.found = total.item<float>() != 0.0f;
  return *state.found;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!enabled()) {
    optimizer.step();
    return true;
  }
  const auto known = per_optimizer_.find(&optimizer);
  if (known != per_optimizer_.end() && known->second.stage == Stage::Stepped)
    throw ValueError(kPrefix + "step() has already been called on this optimizer since the last update()");
  if (known == per_optimizer_.end()) unscale_(optimizer);
  PerOptimizer& state = per_optimizer_.at(&optimizer);
  const bool skip = found_any(state);
  state.stage = Stage::Stepped;
  if (!skip) optimizer.step();
  return !skip;
}

void GradScaler::update() {
  if (!enabled()) return;
  if (per_optimizer_.empty())
    throw ValueError(kPrefix + "update(): no inf checks were recorded since the last update(); call step(optimizer) "
                     "(or unscale_(optimizer)) first");
  bool found = false;
  for (auto& [optimizer, state] : per_optimizer_) found = found_any(state) || found;
  // PyTorch's _amp_update_scale_: back off after inf/NaN; grow after growth_interval clean steps
  // in a row, unless growing would overflow.
  if (found) {
    scale_ *= options_.backoff_factor();
    growth_tracker_ = 0;
  } else if (++growth_tracker_ == options_.growth_interval()) {
    // PyTorch's scale is a float32 tensor: growth stops where float32 would overflow.
    const double grown = scale_ * options_.growth_factor();
    if (grown <= FLT_MAX) scale_ = grown;
    growth_tracker_ = 0;
  }
  per_optimizer_.clear();
}

void GradScaler::update(double new_scale) {
  if (!enabled()) return;
  if (!(new_scale > 0) || !std::isfinite(new_scale))
    throw ValueError(kPrefix + "update(new_scale): the scale must be a positive finite number, got " + std::to_string(new_scale));
  scale_ = new_scale;
  per_optimizer_.clear();
}

std::map<std::string, Tensor> GradScaler::state_dict() const {
  if (!enabled()) return {};
  return {{"scale", float64_scalar(scale_)},
          {"growth_factor", float64_scalar(options_.growth_factor())},
          {"backoff_factor", float64_scalar(options_.backoff_factor())},
          {"growth_interval", int64_scalar(options_.growth_interval())},
          {"_growth_tracker", int64_scalar(growth_tracker_)}};
}

void GradScaler::load_state_dict(const std::map<std::string, Tensor>& state) {
  if (!enabled()) return;
  if (state.empty())
    throw ValueError(kPrefix + "load_state_dict: the state is empty, possibly because it was saved from a disabled GradScaler");
  for (const auto& [key, value] : state)
    if (key != "scale" && key != "growth_factor" && key != "backoff_factor" && key != "growth_interval" && key != "_growth_tracker")
      throw ValueError(kPrefix + "load_state_dict: unknown key '" + key + "'");
  GradScalerOptions loaded = options_;
  loaded.init_scale(entry(state, "scale").item<double>())
      .growth_factor(entry(state, "growth_factor").item<double>())
      .backoff_factor(entry(state, "backoff_factor").item<double>())
      .growth_interval(entry(state, "growth_interval").item<int64_t>());
  const int64_t tracker = entry(state, "_growth_tracker").item<int64_t>();
  check_options(loaded);
  if (tracker < 0) throw ValueError(kPrefix + "load_state_dict: '_growth_tracker' must not be negative");
  options_ = loaded.init_scale(options_.init_scale());
  scale_ = entry(state, "scale").item<double>();
  growth_tracker_ = tracker;
}

}  // namespace locus::amp
