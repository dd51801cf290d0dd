#pragma once
/// \file normalization.h
/// The normalization layers: nn::BatchNorm1d/2d, nn::GroupNorm, nn::InstanceNorm2d, and channel
/// dropout, nn::Dropout2d. State_dict names and order as PyTorch's: weight, bias, running_mean,
/// running_var, num_batches_tracked.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "locus/arg.h"
#include "locus/nn/affine_norm.h"
#include "locus/nn/cloneable.h"
#include "locus/nn/functional/normalization.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/options_module.h"

namespace locus::nn {

/// Options of nn::BatchNorm1d/2d and nn::InstanceNorm2d: `BatchNormOptions(64).momentum(0.01)`.
struct BatchNormOptions {
  /// The number of channels C.
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  /// The number of channels C.
  LOCUS_ARG(int64_t, num_features);
  /// Added to the variance.
  LOCUS_ARG(double, eps) = 1e-5;
  /// How far the running statistics move towards each batch's; nullopt: their cumulative
  /// average (momentum 1 / num_batches_tracked), as PyTorch's momentum=None.
  LOCUS_ARG(std::optional<double>, momentum) = 0.1;
  /// Learnable per-channel weight (1) and bias (0).
  LOCUS_ARG(bool, affine) = true;
  /// Keep running_mean, running_var and num_batches_tracked and normalise with them in eval
  /// mode; without, every mode uses the batch's statistics.
  LOCUS_ARG(bool, track_running_stats) = true;
};

/// A registered buffer held as a module's member (BatchNorm's running_mean, ...). LibTorch lets
/// `bn->running_mean = t` rebind the member, silently detaching it from the module's buffer (so
/// from to(), state_dict and the running updates); here assignment copies t's values into the
/// registered buffer instead (ShapeError for another shape), under no_grad.
class BufferTensor : public Tensor {
 public:
  BufferTensor() = default;
  BufferTensor(const BufferTensor&) = default;
  /// Copies `values` into the buffer.
  BufferTensor& operator=(const Tensor& values);
  /// Copies `other`'s values into the buffer.
  BufferTensor& operator=(const BufferTensor& other) { return *this = static_cast<const Tensor&>(other); }
  /// Points the member at `registered` (what register_buffer returned): the module's own use.
  void bind(Tensor registered) { Tensor::operator=(std::move(registered)); }
};

/// What BatchNorm1d, BatchNorm2d and InstanceNorm2d share: the parameters, the buffers and their
/// bookkeeping.
class NormBase {
 public:
  /// The options the layer was built with.
  BatchNormOptions options;
  /// [C] scale and shift (undefined without affine).
  Tensor weight, bias;
  /// [C] running statistics and the 0-dim int64 count of training batches (undefined without
  /// track_running_stats).
  BufferTensor running_mean, running_var, num_batches_tracked;
  /// Running mean 0, running variance 1, count 0.
  void reset_running_stats();

 protected:
  /// How a layer registers its tensors (Module's register_parameter / register_buffer are its own).
  struct Registrar {
    std::function<Tensor(const std::string&, Tensor)> parameter, buffer;
  };
  explicit NormBase(const BatchNormOptions& o) : options(o) {}
  void register_state(const Registrar& r);
  void reset_parameters_impl();
  Tensor normalize(const Tensor& input, bool training, bool instance, const char* layer);
  std::string repr_fields() const;
};

/// A layer of the BatchNorm family, for the layer class `Derived` and its `Options`: NormBase
/// as a module, built from its options or a channel count, with its reset, reset_parameters and
/// repr. Each of BatchNorm1d, BatchNorm2d and InstanceNorm2d says only how it checks and
/// normalises its input.
template <class Derived, class Options>
class BatchNormImplBase : public Cloneable<Derived>, public NormBase {
 public:
  /// A layer with `options`.
  explicit BatchNormImplBase(const Options& layer_options) : NormBase(layer_options) { reset(); }
  /// `nn::BatchNorm2d(num_features)`.
  explicit BatchNormImplBase(int64_t num_features) : BatchNormImplBase(Options(num_features)) {}
  /// Registers the parameters and buffers.
  void reset() override {
    register_state({[this](const std::string& n, Tensor t) { return this->register_parameter(n, std::move(t)); },
                    [this](const std::string& n, Tensor t) { return this->register_buffer(n, std::move(t)); }});
  }
  /// Weight 1, bias 0, running statistics reset.
  void reset_parameters() { reset_parameters_impl(); }
  /// PyTorch's "64, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True".
  std::string extra_repr() const override { return repr_fields(); }
};

/// Batch normalisation over [N, C] or [N, C, L] (statistics over N and L per channel).
class BatchNorm1dImpl : public BatchNormImplBase<BatchNorm1dImpl, BatchNormOptions> {
 public:
  using BatchNormImplBase::BatchNormImplBase;
  /// F::batch_norm with the batch's statistics in training mode (running ones updated) and the
  /// running ones in eval mode. ValueError for an input that is not 2-d or 3-d.
  Tensor forward(const Tensor& input) override;
};
LOCUS_MODULE(BatchNorm1d);
/// LibTorch's per-dimension name of BatchNorm1d's options.
using BatchNorm1dOptions = BatchNormOptions;

/// Batch normalisation over [N, C, H, W] (statistics over N, H and W per channel).
class BatchNorm2dImpl : public BatchNormImplBase<BatchNorm2dImpl, BatchNormOptions> {
 public:
  using BatchNormImplBase::BatchNormImplBase;
  /// As BatchNorm1d's, for a 4-d input (ValueError otherwise).
  Tensor forward(const Tensor& input) override;
};
LOCUS_MODULE(BatchNorm2d);
/// LibTorch's per-dimension name of BatchNorm2d's options.
using BatchNorm2dOptions = BatchNormOptions;

/// nn::InstanceNorm2d's options: BatchNorm's, with affine and track_running_stats off by default.
struct InstanceNormOptions : BatchNormOptions {
  /// The number of channels C.
  InstanceNormOptions(int64_t num_features) : BatchNormOptions(num_features) {
    affine(false);
    track_running_stats(false);
  }
};

/// Instance normalisation of [N, C, H, W] or [C, H, W]: each plane by its own statistics (and,
/// with track_running_stats, by the running ones in eval mode). Its repr is PyTorch's "64,
/// eps=1e-05, momentum=0.1, affine=False, track_running_stats=False".
class InstanceNorm2dImpl : public BatchNormImplBase<InstanceNorm2dImpl, InstanceNormOptions> {
 public:
  using BatchNormImplBase::BatchNormImplBase;
  /// F::instance_norm; ValueError for an input that is not 3-d or 4-d.
  Tensor forward(const Tensor& input) override;
};
LOCUS_MODULE(InstanceNorm2d);
/// LibTorch's per-dimension name of InstanceNorm2d's options.
using InstanceNorm2dOptions = InstanceNormOptions;

/// Options of nn::GroupNorm: `GroupNormOptions(num_groups, num_channels)`.
struct GroupNormOptions {
  /// Groups and channels (groups divide channels).
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  /// The number of channel groups.
  LOCUS_ARG(int64_t, num_groups);
  /// The number of channels C.
  LOCUS_ARG(int64_t, num_channels);
  /// Added to the variance.
  LOCUS_ARG(double, eps) = 1e-5;
  /// Learnable per-channel weight (1) and bias (0).
  LOCUS_ARG(bool, affine) = true;
};

/// Group normalisation: F::group_norm with learnable [C] weight and bias. ValueError at
/// construction when num_groups does not divide num_channels.
class GroupNormImpl : public AffineNormImplBase<GroupNormImpl, GroupNormOptions> {
 public:
  using AffineNormImplBase::AffineNormImplBase;
  /// `nn::GroupNorm(num_groups, num_channels)`.
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : AffineNormImplBase(GroupNormOptions(num_groups, num_channels)) {}
  /// F::group_norm.
  Tensor forward(const Tensor& input) override;
  /// PyTorch's "8, 64, eps=1e-05, affine=True".
  std::string extra_repr() const override;

 private:
  friend AffineNormImplBase;
  static AffineShape affine_shape(const GroupNormOptions& o);
};
LOCUS_MODULE(GroupNorm);

/// nn::Dropout2d's options.
using Dropout2dOptions = functional::Dropout2dFuncOptions;

/// F::dropout2d as a layer: whole channels zeroed in training mode, the identity in eval mode.
/// ValueError unless 0 <= p <= 1.
class Dropout2dImpl : public OptionsModule<Dropout2dImpl, Dropout2dOptions> {
 public:
  /// A layer with `options` (p alone converts).
  explicit Dropout2dImpl(const Dropout2dOptions& options_ = {});
  /// F::dropout2d with the module's training mode.
  Tensor forward(const Tensor& input) override;
  /// PyTorch's "p=0.5, inplace=False".
  std::string extra_repr() const override;
};
LOCUS_MODULE(Dropout2d);

}  // namespace locus::nn

LOCUS_API_END
