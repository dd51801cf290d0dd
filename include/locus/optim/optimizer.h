#pragma once
/// \file optimizer.h
/// The optimizer base (torch.optim.Optimizer, LibTorch's torch::optim::Optimizer): parameter
/// groups with their own options, per-parameter state that follows the parameters' devices,
/// state_dict()/load_state_dict().

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "locus/arg.h"  // every optimizer's options declare theirs with LOCUS_ARG
#include "locus/tensor.h"

namespace locus::optim {

namespace detail {
/// Throws ValueError for an option name that an optimizer's options do not have.
[[noreturn]] void throw_unknown_option(const std::string& name);
struct ParamUpdate;  // one parameter of a step(): src/optim/param_update.h
}  // namespace detail

/// The options of one parameter group, as LibTorch's OptimizerOptions: every optimizer's
/// options derive from it, and `group.options()` returns this base (static_cast it to the
/// optimizer's options, `static_cast<AdamOptions&>(group.options()).beta1()`, for the rest).
class OptimizerOptions {
 public:
  /// Destroys the derived options.
  virtual ~OptimizerOptions() = default;
  /// A copy of the derived options.
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  /// The learning rate.
  virtual double get_lr() const = 0;
  /// Sets the learning rate (what the LR schedulers call); the next step() uses it.
  virtual void set_lr(double lr) = 0;
  /// Every option by its PyTorch name, flags as 0 or 1: what Optimizer::state_dict() saves.
  virtual std::map<std::string, double> values() const = 0;
  /// Sets the options named in `values` (names from values()); ValueError for an unknown name.
  virtual void set_values(const std::map<std::string, double>& values) = 0;
  /// Whether this group keeps float32 master copies of float16/bfloat16 parameters.
  virtual bool uses_master_weights() const = 0;
};

/// Implements OptimizerOptions for `Derived` (LibTorch's OptimizerCloneableOptions): Derived has
/// `lr()`, `master_weights()` and `for_each_option(f)`, which calls `f(name, member)` for
/// every option.
template <typename Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  /// A copy of the Derived options.
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  /// The learning rate.
  double get_lr() const override { return static_cast<const Derived&>(*this).lr(); }
  /// Sets the learning rate.
  void set_lr(double lr) override { static_cast<Derived&>(*this).lr(lr); }
  /// Every option by name.
  std::map<std::string, double> values() const override {
    std::map<std::string, double> out;
    const_cast<Derived&>(static_cast<const Derived&>(*this)).for_each_option([&](const char* name, auto& v) {
      out[name] = static_cast<double>(v);
    });
    return out;
  }
  /// Sets the options named in `values`.
  void set_values(const std::map<std::string, double>& values) override {
    size_t used = 0;
    static_cast<Derived&>(*this).for_each_option([&](const char* name, auto& v) {
      auto it = values.find(name);
      if (it == values.end()) return;
      ++used;
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, bool>)
        v = it->second != 0;
      else
        v = it->second;
    });
    if (used != values.size()) unknown_option(values);
  }
  /// Whether master weights are kept.
  bool uses_master_weights() const override { return static_cast<const Derived&>(*this).master_weights(); }

 private:
  void unknown_option(const std::map<std::string, double>& values) const {
    const std::map<std::string, double> known = this->values();
    for (const auto& [name, v] : values)
      if (!known.count(name)) detail::throw_unknown_option(name);
  }
};

/// The options every optimizer here has (lr, weight_decay, master_weights), for the options
/// `Derived` of one optimizer, which adds its own and calls this for_each_option from its own.
template <typename Derived>
struct CommonOptions : OptimizerCloneableOptions<Derived> {
  /// The learning rate, positionally.
  explicit CommonOptions(double lr) : lr_(lr) {}
  /// The learning rate.
  LOCUS_DERIVED_ARG(double, lr);
  /// The weight decay: an L2 penalty added to the gradient (AdamW: decoupled decay, default
  /// 0.01 there).
  LOCUS_DERIVED_ARG(double, weight_decay) = 0;
  /// Keep float32 master copies of float16/bfloat16 parameters and update those (small updates
  /// are not rounded away); the parameters get the rounded result after each step.
  LOCUS_DERIVED_ARG(bool, master_weights) = false;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    f("lr", lr_), f("weight_decay", weight_decay_), f("master_weights", master_weights_);
  }
};

/// The options of Adam and its relatives (Adamax, NAdam, RAdam): CommonOptions, the decays of
/// the running moments and eps.
template <typename Derived>
struct AdamFamilyOptions : CommonOptions<Derived> {
  /// The learning rate, positionally.
  explicit AdamFamilyOptions(double lr) : CommonOptions<Derived>(lr) {}
  /// Decay of the running mean of gradients.
  LOCUS_DERIVED_ARG(double, beta1) = 0.9;
  /// Decay of the running mean of squared gradients (Adamax: of the infinity norm).
  LOCUS_DERIVED_ARG(double, beta2) = 0.999;
  /// Added to the denominator for stability.
  LOCUS_DERIVED_ARG(double, eps) = 1e-8;

 public:
  /// Both betas at once, as PyTorch's `betas=(0.9, 0.999)`.
  Derived& betas(double beta1, double beta2) {
    beta1_ = beta1, beta2_ = beta2;
    return static_cast<Derived&>(*this);
  }
  /// Both betas as a tuple, as LibTorch's `betas(std::make_tuple(0.5, 0.999))`.
  Derived& betas(const std::tuple<double, double>& both) { return betas(std::get<0>(both), std::get<1>(both)); }
  /// Both betas, as LibTorch's getter.
  std::tuple<double, double> betas() const { return {beta1_, beta2_}; }
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    CommonOptions<Derived>::for_each_option(f);
    f("beta1", beta1_), f("beta2", beta2_), f("eps", eps_);
  }
};

/// A list of parameters and, optionally, their own options (those missing are the optimizer's
/// defaults when the group joins it), as LibTorch's OptimizerParamGroup.
class OptimizerParamGroup {
 public:
  /// A group that takes the optimizer's default options.
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}  // NOLINT: implicit as LibTorch's
  /// A group with its own options.
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  /// A group with its own options, given by value: `OptimizerParamGroup(ps, SGDOptions(0.1))`.
  template <typename O, typename = std::enable_if_t<std::is_base_of_v<OptimizerOptions, O>>>
  OptimizerParamGroup(std::vector<Tensor> params, const O& options)
      : params_(std::move(params)), options_(options.clone()) {}
  /// A copy (the options are cloned).
  OptimizerParamGroup(const OptimizerParamGroup& other)
      : params_(other.params_),
        options_(other.options_ ? other.options_->clone() : nullptr),
        scheduler_values_(other.scheduler_values_) {}
  /// Moves.
  OptimizerParamGroup(OptimizerParamGroup&&) noexcept = default;
  /// Copies (the options are cloned).
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other) {
    if (this != &other) *this = OptimizerParamGroup(other);
    return *this;
  }
  /// Moves.
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) noexcept = default;
  /// Whether the group has options (every group of an optimizer has).
  bool has_options() const noexcept { return static_cast<bool>(options_); }
  /// The group's options; ValueError when it has none.
  OptimizerOptions& options();
  /// The group's options; ValueError when it has none.
  const OptimizerOptions& options() const;
  /// Replaces the group's options.
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  /// The group's parameters.
  std::vector<Tensor>& params() noexcept { return params_; }
  /// The group's parameters.
  const std::vector<Tensor>& params() const noexcept { return params_; }
  /// What LR schedulers keep in the group, as PyTorch keeps them in its dict: "initial_lr"
  /// (the rate a schedule starts from, set by the first scheduler), OneCycleLR's "max_lr",
  /// "min_lr", "max_momentum", "base_momentum". Saved with the optimizer's state_dict().
  std::map<std::string, double>& scheduler_values() noexcept { return scheduler_values_; }
  /// What LR schedulers keep in the group.
  const std::map<std::string, double>& scheduler_values() const noexcept { return scheduler_values_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::map<std::string, double> scheduler_values_;
};

/// Updates the parameters of its groups from their gradients, each group with its own options
/// (read afresh at every step, so changing `lr` or any option between steps takes effect at the
/// next one). Parameters without a gradient are skipped. step() runs without recording a graph.
class Optimizer {
 public:
  /// An optimizer over `param_groups`; groups without options get a copy of `defaults`.
  /// ValueError for no parameters, a parameter in two groups, or an undefined parameter;
  /// DTypeError for a non-floating one.
  Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults);
  /// One group of `params` with the default options.
  Optimizer(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> defaults);
  /// Destroys the optimizer (its state with it).
  virtual ~Optimizer() = default;
  /// One update of every parameter that has a gradient.
  virtual void step() = 0;
  /// Clears (default) or zeroes every parameter's gradient.
  void zero_grad(bool set_to_none = true);
  /// Moves the state to `device` now (it also follows the parameters lazily at step()).
  Optimizer& to(Device device);
  /// Adds a group (its missing options from the defaults), as PyTorch's add_param_group.
  /// ValueError when one of its parameters is already in a group.
  void add_param_group(const OptimizerParamGroup& param_group);
  /// The groups; their options may be changed between steps.
  std::vector<OptimizerParamGroup>& param_groups() noexcept { return groups_; }
  /// The groups.
  const std::vector<OptimizerParamGroup>& param_groups() const noexcept { return groups_; }
  /// Every parameter of every group, in order (a parameter's index in state_dict()).
  const std::vector<Tensor>& params() const;
  /// Every parameter of every group, as LibTorch's parameters().
  const std::vector<Tensor>& parameters() const { return params(); }
  /// The options groups added without their own get.
  OptimizerOptions& defaults() noexcept { return *defaults_; }
  /// The options groups added without their own get.
  const OptimizerOptions& defaults() const noexcept { return *defaults_; }
  /// The state by "<param index>.<name>" ("0.momentum_buffer", "3.exp_avg", "3.step"), the
  /// number of step() calls as "step", and the groups as "param_groups.<g>.<option>" (float64),
  /// "param_groups.<g>.scheduler.<name>" (its scheduler_values()) and "param_groups.<g>.params"
  /// (the int64 indices of its parameters); all detached.
  std::map<std::string, Tensor> state_dict() const;
  /// Restores state saved by state_dict(), placing each tensor on its parameter's device. The
  /// groups' options are restored when saved; ValueError when the saved groups' sizes differ
  /// from this optimizer's (as PyTorch). A dictionary without groups or per-parameter steps
  /// (saved before groups existed) loads as before.
  void load_state_dict(const std::map<std::string, Tensor>& state);
  /// Whether float16 and bfloat16 parameters of the first group are updated through float32
  /// master copies.
  bool master_weights() const;

 protected:
  /// The named state tensor of parameter i, created as zeros like the parameter on first use
  /// and moved to the parameter's device (and dtype) if the parameter has moved. With master
  /// weights, the state of a float16/bfloat16 parameter is float32.
  Tensor& state(size_t i, const std::string& name);
  /// Whether parameter i has the named state tensor yet.
  bool has_state(size_t i, const std::string& name) const;
  /// What step() updates for parameter i: the parameter, or its float32 master copy (state
  /// "master_weight", made from the parameter on first use) when master weights are kept.
  Tensor updated(size_t i);
  /// Parameter i's gradient in updated(i)'s dtype; undefined when it has none.
  Tensor gradient(size_t i);
  /// After an update of updated(i): the master copy rounded into the parameter.
  void write_back(size_t i);
  /// Parameter i's step count (PyTorch's state["step"]), incremented by the optimizer.
  int64_t& param_step(size_t i);
  /// Parameter i's named number state (NAdam's "mu_product"), `initial` on first use; saved
  /// by state_dict() as a 0-dim float64 tensor (Note [Scalar state]).
  double& param_scalar(size_t i, const std::string& name, double initial);
  /// The loop of every step(): without recording a graph and with denormals flushed (Note
  /// [Denormals]), counts the step, then group by group calls `update(options, param)` for
  /// every parameter that has a gradient, and rounds each master copy into its parameter after
  /// its update (the fused ones after the group's fused kernels ran).
  void update_each(const std::function<void(const OptimizerOptions&, detail::ParamUpdate&)>& update);
  int64_t steps_ = 0;

 private:
  void sync_groups() const;
  bool uses_master(size_t i) const;
  void check_param(const Tensor& p, size_t index) const;
  std::vector<OptimizerParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  // The flat list of the groups' parameters and their state, rebuilt (the state following its
  // parameter) when a group's params() were changed in place.
  mutable std::vector<Tensor> params_;
  mutable std::vector<std::map<std::string, Tensor>> state_;
  mutable std::vector<int64_t> param_steps_;
  mutable std::vector<std::map<std::string, double>> scalars_;
  mutable std::vector<bool> master_;
};

/// The base of each optimizer `Derived` with options `Options` (LibTorch's constructors and
/// options()): Derived has `static void check(const Options&)`, PyTorch's argument checks of the
/// defaults, and `void update(const Options&, detail::ParamUpdate&)`, one parameter's update
/// (Optimizer::update_each runs the rest of step()).
template <typename Derived, typename Options>
class OptimizerFor : public Optimizer {
 public:
  /// An optimizer over groups; a group without options gets `defaults`. ValueError for the
  /// defaults PyTorch rejects (written so that NaN fails the checks too).
  OptimizerFor(std::vector<OptimizerParamGroup> param_groups, Options defaults = {})
      : Optimizer(std::move(param_groups), defaults.clone()) {
    Derived::check(defaults);
  }
  /// An optimizer over one group.
  OptimizerFor(std::vector<Tensor> params, Options defaults = {})
      : OptimizerFor(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  /// This learning rate and the other options' defaults: `optim::SGD(params, 0.1)`.
  OptimizerFor(std::vector<Tensor> params, double lr) : OptimizerFor(std::move(params), Options(lr)) {}
  /// One update of every parameter that has a gradient, each group with its options.
  void step() override {
    update_each([this](const OptimizerOptions& o, detail::ParamUpdate& p) {
      static_cast<Derived*>(this)->update(static_cast<const Options&>(o), p);
    });
  }
  /// The default options.
  const Options& options() const noexcept { return static_cast<const Options&>(defaults()); }
};

/// The body of optimizer class `Name : public OptimizerFor<Name, Options>`: LibTorch's three
/// constructors (OptimizerFor's) and the two hooks its .cpp defines, `check` (PyTorch's checks of
/// the defaults) and `update` (one parameter's step). Written once here because every optimizer's
/// class is this, plus, for Adam, the flag AdamW sets.
#define LOCUS_OPTIMIZER_HOOKS(Options)                    \
 public:                                                  \
  using OptimizerFor::OptimizerFor;                       \
                                                          \
 private:                                                 \
  friend OptimizerFor;                                    \
  static void check(const Options& o);                    \
  void update(const Options& o, detail::ParamUpdate& p)

}  // namespace locus::optim

LOCUS_API_END
