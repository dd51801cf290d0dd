#pragma once
/// \file lr_scheduler.h
/// Learning-rate schedulers (torch.optim.lr_scheduler): each sets its optimizer's group rates
/// at construction and at every step(), with PyTorch 1.13's recursive ("chainable") formulas,
/// so a schedule's floats equal PyTorch's.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "locus/arg.h"
#include "locus/optim/optimizer.h"

namespace locus::optim::lr_scheduler {

/// The base of the epoch-driven schedulers (PyTorch's _LRScheduler): step(), the base rates and
/// the state_dict() plumbing. A subclass is its formula (get_lr(), and closed_form_lr() where
/// PyTorch has one) and its fields: its constructor names them with save() and ends with
/// initial_step(), which sets the rates of epoch 0.
class LRScheduler {
 public:
  /// A scheduler of `optimizer`'s groups. last_epoch -1 starts a schedule (each group's
  /// "initial_lr" is set to its lr unless an earlier scheduler set it); another value resumes
  /// one, and every group must then have "initial_lr" (KeyError-like ValueError otherwise).
  explicit LRScheduler(Optimizer& optimizer, int64_t last_epoch = -1);
  /// Leaves the optimizer's rates as they are.
  virtual ~LRScheduler() = default;
  /// Not copyable: a copy would step the same optimizer.
  LRScheduler(const LRScheduler&) = delete;
  /// Not copyable.
  LRScheduler& operator=(const LRScheduler&) = delete;
  /// The next epoch: sets every group's lr.
  virtual void step();
  /// Jumps to `epoch` (PyTorch's deprecated step(epoch)), with the closed form where PyTorch
  /// has one; SequentialLR uses it at its milestones.
  virtual void step(int64_t epoch);
  /// The rates the last step() set, one per group.
  const std::vector<double>& get_last_lr() const noexcept { return last_lr_; }
  /// The epoch of the last step().
  int64_t last_epoch() const noexcept { return last_epoch_; }
  /// The scheduled optimizer.
  Optimizer& optimizer() const noexcept { return *optimizer_; }
  /// The schedule's state as float64 tensors: "last_epoch", "_step_count", "base_lrs",
  /// "_last_lr" and each scheduler's own fields by PyTorch's names.
  virtual std::map<std::string, Tensor> state_dict() const;
  /// Restores a state_dict(); ValueError for a key this scheduler does not have.
  virtual void load_state_dict(const std::map<std::string, Tensor>& state);

 protected:
  /// The rates of epoch last_epoch(), from the groups' current rates (chainable form).
  virtual std::vector<double> get_lr() = 0;
  /// The rates of epoch last_epoch() from base_lrs_ alone; get_lr() where PyTorch has none.
  virtual std::vector<double> closed_form_lr() { return get_lr(); }
  /// The first step, at construction (PyTorch's _initial_step).
  void initial_step();
  /// Every group's current rate.
  std::vector<double> group_lrs() const;
  /// Sets every group's rate and last_lr_.
  void set_lrs(const std::vector<double>& lrs);
  /// Every group's current rate times `factor` (PyTorch's `group['lr'] * factor`).
  std::vector<double> group_lrs_times(double factor) const;
  /// `f(base)` for every group's base rate (a closed form).
  std::vector<double> from_base_lrs(const std::function<double(double)>& f) const;
  /// Saves the scheduler's field `value` as state_dict()'s `name` (a list of one number) and
  /// restores it in load_state_dict(); a constructor names each of its fields once.
  void save(const char* name, double& value) { fields_.push_back({name, &value}); }
  /// Saves an integral field (as a float64 number).
  void save(const char* name, int64_t& value) { fields_.push_back({name, &value}); }
  /// Saves a list of integers (a list of float64 numbers).
  void save(const char* name, std::vector<int64_t>& value) { fields_.push_back({name, &value}); }
  /// Scheduler-specific state for state_dict(): the fields save() named, by name, each a
  /// value or a list of values.
  virtual std::map<std::string, std::vector<double>> extra_state() const;
  /// Restores what extra_state() saved into the fields save() named; a field `s` lacks keeps
  /// its value.
  virtual void load_extra_state(const std::map<std::string, std::vector<double>>& s);
  friend class SequentialLR;  // steps and rewinds the schedulers it runs

  Optimizer* optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_;
  int64_t step_count_ = 0;
  std::vector<double> last_lr_;

 private:
  struct Field {
    const char* name;
    std::variant<double*, int64_t*, std::vector<int64_t>*> value;
  };
  std::vector<Field> fields_;
};

/// Multiplies the rate by gamma every step_size epochs, as torch.optim.lr_scheduler.StepLR.
class StepLR : public LRScheduler {
 public:
  /// ValueError for step_size < 1 (PyTorch raises ZeroDivisionError on the first step).
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// Multiplies the rate by gamma at each milestone (a milestone listed twice twice), as
/// torch.optim.lr_scheduler.MultiStepLR.
class MultiStepLR : public LRScheduler {
 public:
  /// A scheduler with these milestone epochs.
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  std::vector<int64_t> milestones_;  // sorted, repeats kept
  double gamma_;
};

/// Multiplies the rate by gamma every epoch, as torch.optim.lr_scheduler.ExponentialLR.
class ExponentialLR : public LRScheduler {
 public:
  /// A scheduler with this decay.
  ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double gamma_;
};

/// Cosine annealing from the base rate to eta_min over T_max epochs (and back, periodically),
/// as torch.optim.lr_scheduler.CosineAnnealingLR.
class CosineAnnealingLR : public LRScheduler {
 public:
  /// A scheduler with this half period and floor.
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

/// Cosine annealing restarted every T_i epochs (T_i growing by T_mult), SGDR, as
/// torch.optim.lr_scheduler.CosineAnnealingWarmRestarts.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  /// ValueError for T_0 < 1 or T_mult < 1, as PyTorch.
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1, double eta_min = 0,
                              int64_t last_epoch = -1);
  /// The next epoch: sets every group's lr.
  void step() override;
  /// Jumps to `epoch`; ValueError for a negative one.
  void step(int64_t epoch) override;

 protected:
  std::vector<double> get_lr() override;

 private:
  void apply();
  int64_t T_0_, T_i_, T_mult_;
  double eta_min_, T_cur_;
};

/// Scales the rate by a factor going linearly from start_factor to end_factor over
/// total_iters epochs, as torch.optim.lr_scheduler.LinearLR.
class LinearLR : public LRScheduler {
 public:
  /// ValueError for a factor outside [0, 1], as PyTorch.
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5,
           int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

/// Scales the rate by factor for the first total_iters epochs, as
/// torch.optim.lr_scheduler.ConstantLR.
class ConstantLR : public LRScheduler {
 public:
  /// ValueError for a factor outside [0, 1], as PyTorch.
  ConstantLR(Optimizer& optimizer, double factor = 1.0 / 3, int64_t total_iters = 5, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double factor_;
  int64_t total_iters_;
};

/// The base rate times lr_lambda(epoch), one function for every group or one per group, as
/// torch.optim.lr_scheduler.LambdaLR.
class LambdaLR : public LRScheduler {
 public:
  /// The factor of an epoch.
  using Lambda = std::function<double(int64_t)>;
  /// One function for every group.
  LambdaLR(Optimizer& optimizer, Lambda lr_lambda, int64_t last_epoch = -1);
  /// One function per group; ValueError when the counts differ.
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<Lambda> lr_lambdas_;
};

/// Options of OneCycleLR (PyTorch's defaults), set by name in any order:
/// `OneCycleLROptions(0.1, 100).anneal_strategy("linear").three_phase(true)`.
struct OneCycleLROptions {
  /// The peak rate of every group, and total_steps (0: epochs * steps_per_epoch).
  OneCycleLROptions(double max_lr, int64_t total_steps = 0) : max_lr_({max_lr}), total_steps_(total_steps) {}
  /// The peak rate per group (one value: every group's).
  LOCUS_ARG(std::vector<double>, max_lr);
  /// The number of steps in the cycle (0: epochs * steps_per_epoch).
  LOCUS_ARG(int64_t, total_steps);
  /// Epochs, with steps_per_epoch, when total_steps is 0.
  LOCUS_ARG(int64_t, epochs) = 0;
  /// Steps per epoch, with epochs, when total_steps is 0.
  LOCUS_ARG(int64_t, steps_per_epoch) = 0;
  /// The fraction of the cycle spent raising the rate.
  LOCUS_ARG(double, pct_start) = 0.3;
  /// "cos" or "linear".
  LOCUS_ARG(std::string, anneal_strategy) = "cos";
  /// Cycle SGD's momentum or Adam's beta1 inversely to the rate.
  LOCUS_ARG(bool, cycle_momentum) = true;
  /// The lowest momentum.
  LOCUS_ARG(double, base_momentum) = 0.85;
  /// The highest momentum.
  LOCUS_ARG(double, max_momentum) = 0.95;
  /// initial_lr = max_lr / div_factor.
  LOCUS_ARG(double, div_factor) = 25.;
  /// min_lr = initial_lr / final_div_factor.
  LOCUS_ARG(double, final_div_factor) = 1e4;
  /// Three phases (up, down to initial_lr, down to min_lr) instead of two.
  LOCUS_ARG(bool, three_phase) = false;
};

/// The one-cycle policy (Smith and Topin), as torch.optim.lr_scheduler.OneCycleLR: step() once
/// per batch, total_steps times.
class OneCycleLR : public LRScheduler {
 public:
  /// ValueError for the arguments PyTorch rejects, including cycle_momentum on an optimizer
  /// with neither momentum nor betas.
  OneCycleLR(Optimizer& optimizer, OneCycleLROptions options, int64_t last_epoch = -1);

 protected:
  /// ValueError past total_steps, as PyTorch.
  std::vector<double> get_lr() override;
  std::map<std::string, std::vector<double>> extra_state() const override;

 private:
  struct Phase {
    double end_step;
    const char *start_lr, *end_lr, *start_momentum, *end_momentum;
  };
  double anneal(double start, double end, double pct) const;
  OneCycleLROptions o_;
  std::vector<Phase> phases_;
  bool use_beta1_ = false;
};

/// Runs schedulers one after another, switching at the milestones, as
/// torch.optim.lr_scheduler.SequentialLR (warm-up, then decay).
class SequentialLR : public LRScheduler {
 public:
  /// ValueError when a scheduler has another optimizer or milestones.size() is not
  /// schedulers.size() - 1, as PyTorch.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones, int64_t last_epoch = -1);
  /// The next epoch: sets every group's lr.
  void step() override;
  /// The state, with each scheduler's under "_schedulers.<k>.".
  std::map<std::string, Tensor> state_dict() const override;
  /// Restores a state_dict().
  void load_state_dict(const std::map<std::string, Tensor>& state) override;

 protected:
  std::vector<double> get_lr() override { return group_lrs(); }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

/// Options of ReduceLROnPlateau (PyTorch's defaults), set by name in any order.
struct ReduceLROnPlateauOptions {
  /// "min": a lower metric is better; "max": higher is.
  LOCUS_ARG(std::string, mode) = "min";
  /// The rate is multiplied by factor when reduced.
  LOCUS_ARG(double, factor) = 0.1;
  /// Epochs without improvement tolerated before a reduction.
  LOCUS_ARG(int64_t, patience) = 10;
  /// What counts as an improvement (see threshold_mode).
  LOCUS_ARG(double, threshold) = 1e-4;
  /// "rel": better than best * (1 -/+ threshold); "abs": than best -/+ threshold.
  LOCUS_ARG(std::string, threshold_mode) = "rel";
  /// Epochs to wait after a reduction before counting again.
  LOCUS_ARG(int64_t, cooldown) = 0;
  /// The floor of each group's rate (one value: every group's).
  LOCUS_ARG(std::vector<double>, min_lr) = {0.0};
  /// Reductions smaller than eps are skipped.
  LOCUS_ARG(double, eps) = 1e-8;
};

/// Reduces the rate when a metric stops improving, as
/// torch.optim.lr_scheduler.ReduceLROnPlateau.
class ReduceLROnPlateau {
 public:
  /// ValueError for factor >= 1, an unknown mode or threshold_mode, or a min_lr list whose
  /// length is not the number of groups, as PyTorch.
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});
  /// One epoch with this value of the metric.
  void step(double metrics);
  /// One epoch with this one-element tensor's value (a loss, as PyTorch's `float(metrics)`).
  void step(const Tensor& metrics) { step(metrics.item<double>()); }
  /// The groups' rates after the last step().
  const std::vector<double>& get_last_lr() const noexcept { return last_lr_; }
  /// The state as float64 tensors: "best", "num_bad_epochs", "cooldown_counter", "last_epoch",
  /// "_last_lr".
  std::map<std::string, Tensor> state_dict() const;
  /// Restores a state_dict().
  void load_state_dict(const std::map<std::string, Tensor>& state);

 private:
  bool is_better(double a, double best) const;
  Optimizer* optimizer_;
  ReduceLROnPlateauOptions o_;
  std::vector<double> min_lrs_;
  double best_;
  int64_t num_bad_epochs_ = 0, cooldown_counter_ = 0, last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace locus::optim::lr_scheduler

namespace locus::optim {
using lr_scheduler::ConstantLR;                   ///< as torch.optim.lr_scheduler.ConstantLR
using lr_scheduler::CosineAnnealingLR;            ///< as torch.optim.lr_scheduler.CosineAnnealingLR
using lr_scheduler::CosineAnnealingWarmRestarts;  ///< as torch.optim.lr_scheduler.CosineAnnealingWarmRestarts
using lr_scheduler::ExponentialLR;                ///< as torch.optim.lr_scheduler.ExponentialLR
using lr_scheduler::LambdaLR;                     ///< as torch.optim.lr_scheduler.LambdaLR
using lr_scheduler::LinearLR;                     ///< as torch.optim.lr_scheduler.LinearLR
using lr_scheduler::LRScheduler;                  ///< as torch.optim.lr_scheduler._LRScheduler
using lr_scheduler::MultiStepLR;                  ///< as torch.optim.lr_scheduler.MultiStepLR
using lr_scheduler::OneCycleLR;                   ///< as torch.optim.lr_scheduler.OneCycleLR
using lr_scheduler::OneCycleLROptions;            ///< OneCycleLR's keyword arguments
using lr_scheduler::ReduceLROnPlateau;            ///< as torch.optim.lr_scheduler.ReduceLROnPlateau
using lr_scheduler::ReduceLROnPlateauOptions;     ///< ReduceLROnPlateau's keyword arguments
using lr_scheduler::SequentialLR;                 ///< as torch.optim.lr_scheduler.SequentialLR
using lr_scheduler::StepLR;                       ///< as torch.optim.lr_scheduler.StepLR
}  // namespace locus::optim

LOCUS_API_END
