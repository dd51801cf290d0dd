#pragma once
/// \file amp/grad_scaler.h
/// GradScaler (torch.amp.GradScaler): scales the loss so that float16 gradients do not
/// underflow, unscales them before the step, skips steps whose gradients are not finite and
/// adapts the scale.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "locus/arg.h"
#include "locus/optim.h"
#include "locus/tensor.h"

namespace locus::amp {

/// Options of GradScaler (PyTorch's defaults), set by name in any order:
/// `GradScalerOptions().init_scale(1024).growth_interval(100)`.
struct GradScalerOptions {
  /// The scale to start from.
  LOCUS_ARG(double, init_scale) = 65536.0;
  /// The scale is multiplied by it after growth_interval steps in a row with finite gradients.
  LOCUS_ARG(double, growth_factor) = 2.0;
  /// The scale is multiplied by it after a step with inf or NaN gradients.
  LOCUS_ARG(double, backoff_factor) = 0.5;
  /// Steps with finite gradients before the scale grows.
  LOCUS_ARG(int64_t, growth_interval) = 2000;
  /// false makes every method a pass-through (scale() returns the loss, step() steps).
  LOCUS_ARG(bool, enabled) = true;
};

/// The loss-scaling loop of mixed-precision training:
///
///     scaler.scale(loss).backward();
///     scaler.unscale_(optimizer);   // only when the gradients are looked at (clipping)
///     scaler.step(optimizer);       // skipped when a gradient is inf or NaN
///     scaler.update();
///
/// unscale_ makes one pass per device and dtype over the gradients that multiplies and checks
/// them together; the check stays on the device until step(), which reads it once (the one
/// device-host synchronisation of a step). Several optimizers may share one scaler. Misuse
/// (unscale_ twice, step twice, update before any step) is a ValueError naming the call.
class GradScaler {
 public:
  /// A scaler starting at options.init_scale(); ValueError for a non-positive scale, a
  /// growth factor not above 1, a backoff factor outside (0, 1) or a non-positive interval.
  explicit GradScaler(GradScalerOptions options = {});

  /// `loss * scale` (the loss itself when disabled).
  Tensor scale(const Tensor& loss) const;
  /// Divides the gradients of `optimizer`'s parameters by the scale, in place, and records
  /// whether any is inf or NaN. At most once per optimizer between two update() calls.
  /// ValueError for float16 gradients (PyTorch's refusal: unscaled in float16 they underflow).
  /// A gradient shared by two parameters (tied weights) is unscaled once.
  void unscale_(optim::Optimizer& optimizer);
  /// Unscales (if unscale_ was not called) and runs optimizer.step() unless a gradient was inf
  /// or NaN. Returns whether the step ran.
  bool step(optim::Optimizer& optimizer);
  /// Adapts the scale from this iteration's checks (backoff after inf/NaN, growth after
  /// growth_interval clean steps) and starts the next iteration.
  void update();
  /// Sets the scale to `new_scale` and starts the next iteration (PyTorch's update(new_scale)).
  void update(double new_scale);

  /// The current scale (1.0 when disabled, as PyTorch).
  double get_scale() const noexcept { return enabled() ? scale_ : 1.0; }
  /// Whether the scaler does anything.
  bool enabled() const noexcept { return options_.enabled(); }
  /// Clean steps since the scale last changed.
  int64_t growth_tracker() const noexcept { return growth_tracker_; }
  /// The options, with the factors and interval in force.
  const GradScalerOptions& options() const noexcept { return options_; }

  /// PyTorch's keys: "scale", "growth_factor", "backoff_factor", "growth_interval",
  /// "_growth_tracker", as 0-dim tensors (float64 and int64); empty when disabled.
  std::map<std::string, Tensor> state_dict() const;
  /// Restores state_dict(); ValueError for a missing or unknown key or an empty state.
  void load_state_dict(const std::map<std::string, Tensor>& state);

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct PerOptimizer {
    Stage stage = Stage::Ready;
    std::vector<Tensor> found_inf;    // one float32 flag per device, on that device
    std::optional<bool> found;        // read by step()
  };
  bool found_any(PerOptimizer& state) const;

  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  std::unordered_map<const optim::Optimizer*, PerOptimizer> per_optimizer_;
};

}  // namespace locus::amp

LOCUS_API_END
