// The Locus calls of the `cnn` golden family (gen_cnn.py): convolutions, unfold/fold, pooling
// (with indices as a second output), batch/group/instance norm (running statistics as extra
// outputs), F::pad's circular mode, a BatchNorm2d module over training steps, and the state_dict
// names of CNN models. Per-dim arguments are `stride=2` (every dim) or `stride=2,1`; conv padding
// may also be `same` or `valid`.

#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "locus/locus.h"
#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

namespace F = locus::nn::functional;


std::vector<int64_t> vec(const Shape& s) { return {s.begin(), s.end()}; }

// `key=3` (every dim) or `key=3,2` (one per dim); `fallback` when absent.
template <size_t D>
ExpandingArray<D> sizes(const Ctx& c, const char* key, int64_t fallback) {
  if (!c.has(key)) return ExpandingArray<D>(fallback);
  const std::vector<int64_t> v = vec(c.list(key));
  if (v.size() == 1) return ExpandingArray<D>(v[0]);
  return ExpandingArray<D>(v);
}

template <size_t D>
nn::ConvPadding<D> conv_padding(const Ctx& c) {
  if (c.has("padding") && c.str("padding") == "same") return nn::ConvPadding<D>(kSame);
  if (c.has("padding") && c.str("padding") == "valid") return nn::ConvPadding<D>(kValid);
  return nn::ConvPadding<D>(sizes<D>(c, "padding", 0));
}

template <size_t D>
F::ConvFuncOptions<D> conv_options(const Ctx& c) {
  F::ConvFuncOptions<D> o;
  o.bias(c.named("bias"))
      .stride(sizes<D>(c, "stride", 1))
      .padding(conv_padding<D>(c))
      .dilation(sizes<D>(c, "dilation", 1))
      .groups(c.i64("groups", 1));
  return o;
}

F::ConvTranspose2dFuncOptions conv_transpose_options(const Ctx& c) {
  F::ConvTranspose2dFuncOptions o;
  o.bias(c.named("bias"))
      .stride(sizes<2>(c, "stride", 1))
      .padding(sizes<2>(c, "padding", 0))
      .output_padding(sizes<2>(c, "output_padding", 0))
      .groups(c.i64("groups", 1))
      .dilation(sizes<2>(c, "dilation", 1));
  return o;
}

F::UnfoldFuncOptions unfold_options(const Ctx& c) {
  F::UnfoldFuncOptions o(sizes<2>(c, "kernel_size", 1));
  o.dilation(sizes<2>(c, "dilation", 1)).padding(sizes<2>(c, "padding", 0)).stride(sizes<2>(c, "stride", 1));
  return o;
}

F::FoldFuncOptions fold_options(const Ctx& c) {
  F::FoldFuncOptions o(sizes<2>(c, "output_size", 1), sizes<2>(c, "kernel_size", 1));
  o.dilation(sizes<2>(c, "dilation", 1)).padding(sizes<2>(c, "padding", 0)).stride(sizes<2>(c, "stride", 1));
  return o;
}

// The stride defaults to the kernel size (the options' constructor) when the case has none.
template <size_t D>
F::MaxPoolFuncOptions<D> max_pool_options(const Ctx& c) {
  F::MaxPoolFuncOptions<D> o(sizes<D>(c, "kernel_size", 1));
  if (c.has("stride")) o.stride(sizes<D>(c, "stride", 1));
  o.padding(sizes<D>(c, "padding", 0)).dilation(sizes<D>(c, "dilation", 1)).ceil_mode(c.flag("ceil_mode"));
  return o;
}

template <size_t D>
F::AvgPoolFuncOptions<D> avg_pool_options(const Ctx& c) {
  F::AvgPoolFuncOptions<D> o(sizes<D>(c, "kernel_size", 1));
  if (c.has("stride")) o.stride(sizes<D>(c, "stride", 1));
  o.padding(sizes<D>(c, "padding", 0))
      .ceil_mode(c.flag("ceil_mode"))
      .count_include_pad(!c.has("count_include_pad") || c.flag("count_include_pad"));
  if (c.has("divisor_override")) o.divisor_override(c.i64("divisor_override"));
  return o;
}

Outs pair(const std::tuple<Tensor, Tensor>& r) { return {std::get<0>(r), std::get<1>(r)}; }

// batch_norm: the output, then (training with running statistics) the updated statistics.
Outs batch_norm(const Ctx& c) {
  const Tensor running_mean = c.named("running_mean"), running_var = c.named("running_var");
  const bool training = c.flag("training");
  Tensor y = F::batch_norm(c.x(0), running_mean, running_var,
                           F::BatchNormFuncOptions()
                               .weight(c.named("weight"))
                               .bias(c.named("bias"))
                               .training(training)
                               .momentum(c.f64("momentum", 0.1))
                               .eps(c.f64("eps", 1e-5)));
  if (training && running_mean.defined()) return {y, running_mean, running_var};
  return {y};
}

// instance_norm: the output, then (use_input_stats with running statistics) the updated ones.
Outs instance_norm(const Ctx& c) {
  const Tensor running_mean = c.named("running_mean"), running_var = c.named("running_var");
  const bool use_input_stats = !c.has("use_input_stats") || c.flag("use_input_stats");
  Tensor y = F::instance_norm(c.x(0), F::InstanceNormFuncOptions()
                                          .running_mean(running_mean)
                                          .running_var(running_var)
                                          .weight(c.named("weight"))
                                          .bias(c.named("bias"))
                                          .use_input_stats(use_input_stats)
                                          .momentum(c.f64("momentum", 0.1))
                                          .eps(c.f64("eps", 1e-5)));
  if (use_input_stats && running_mean.defined()) return {y, running_mean, running_var};
  return {y};
}

// nn::BatchNorm2d with the case's weight and bias: the outputs of the training steps x1, x2, x3,
// the running statistics and num_batches_tracked after them, then the eval-mode output of x_eval.
// interpolate: mode=nearest|linear|bilinear, size=5,7 or scale=1.5,2.0, align_corners=0|1,
// recompute=1.
Outs interpolate_op(const Ctx& c) {
  F::InterpolateFuncOptions o;
  const std::string mode = c.str("mode");
  o.mode(mode == "nearest" ? kNearest : mode == "linear" ? kLinear : kBilinear);
  if (c.has("size")) o.size(vec(c.list("size")));
  if (c.has("scale")) {
    std::vector<double> factors;
    std::istringstream in(c.str("scale"));
    for (std::string item; std::getline(in, item, ',');) factors.push_back(std::strtod(item.c_str(), nullptr));
    o.scale_factor(factors);
  }
  if (c.has("align_corners")) o.align_corners(c.flag("align_corners"));
  if (c.has("recompute")) o.recompute_scale_factor(c.flag("recompute"));
  return {F::interpolate(c.x(0), o)};
}

Outs batch_norm_module(const Ctx& c) {
  nn::BatchNormOptions o(c.i64("num_features"));
  o.eps(c.f64("eps", 1e-5));
  if (c.str("momentum") == "none") o.momentum(std::nullopt);
  else o.momentum(c.f64("momentum"));
  nn::BatchNorm2d bn(o);
  bn->to(c.dev, c.named("weight").dtype());
  {
    NoGradGuard no_grad;
    bn->weight.copy_(c.named("weight"));
    bn->bias.copy_(c.named("bias"));
  }
  bn->train();
  Outs outs;
  for (const char* step : {"x1", "x2", "x3"}) outs.push_back(bn(c.named(step)));
  outs.push_back(bn->running_mean.clone());
  outs.push_back(bn->running_var.clone());
  outs.push_back(bn->num_batches_tracked.clone());
  bn->eval();
  outs.push_back(bn(c.named("x_eval")));
  return outs;
}

// The models gen_cnn.py builds, built the same way with Locus's modules.
std::shared_ptr<nn::Module> seq_model() {
  return nn::Sequential(nn::Conv2d(3, 4, 3), nn::BatchNorm2d(4), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2))).ptr();
}

std::shared_ptr<nn::Module> mixed_model() {
  nn::InstanceNormOptions tracked(2);
  tracked.affine(true);
  tracked.track_running_stats(true);
  return nn::Sequential(nn::Conv1d(nn::Conv1dOptions(2, 4, 3).bias(false)), nn::BatchNorm1d(nn::BatchNormOptions(4).affine(false)),
                        nn::GroupNorm(2, 4), nn::MaxPool1d(nn::MaxPool1dOptions(2)), nn::AvgPool1d(nn::AvgPool1dOptions(2)),
                        nn::ConvTranspose2d(4, 2, 3), nn::InstanceNorm2d(2), nn::InstanceNorm2d(tracked),
                        nn::BatchNorm2d(nn::BatchNormOptions(2).momentum(std::nullopt).track_running_stats(false)),
                        nn::AvgPool2d(nn::AvgPool2dOptions(2)), nn::AdaptiveMaxPool2d(nn::AdaptiveMaxPool2dOptions(1)),
                        nn::Dropout2d())
      .ptr();
}

struct NetImpl : nn::Module {
  NetImpl() {
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)));
    bn1 = register_module("bn1", nn::BatchNorm2d(4));
    pool = register_module("pool", nn::MaxPool2d(nn::MaxPool2dOptions(2)));
    features = register_module(
        "features", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(4, 8, 3).groups(2).bias(false)), nn::GroupNorm(4, 8),
                                   nn::ReLU(), nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1))));
    head = register_module("head", nn::Linear(8, 10));
  }
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::MaxPool2d pool{nullptr};
  nn::Sequential features{nullptr};
  nn::Linear head{nullptr};
};

// The numel of each state_dict entry, after checking the keys against PyTorch's (the `keys`
// argument): a difference is a failure of the case, reported as an unexpected error.
Outs state_dict_sizes(const Ctx& c) {
  const std::string& model = c.str("model");
  std::shared_ptr<nn::Module> m;
  if (model == "seq") m = seq_model();
  else if (model == "mixed") m = mixed_model();
  else if (model == "net") m = std::make_shared<NetImpl>();
  else throw std::runtime_error("unknown model " + model);
  std::string keys;
  std::vector<int64_t> numels;
  for (const auto& [key, t] : m->state_dict()) {
    keys += (keys.empty() ? "" : ",") + key;
    numels.push_back(t.numel());
  }
  if (keys != c.str("keys")) throw std::runtime_error("state_dict keys " + keys + ", PyTorch's " + c.str("keys"));
  return {tensor(numels, Shape{static_cast<int64_t>(numels.size())}).to(c.dev)};
}

const OpRegistrar registered{
    {"conv1d", [](const Ctx& c) -> Outs { return {F::conv1d(c.x(0), c.x(1), conv_options<1>(c))}; }},
    {"conv2d", [](const Ctx& c) -> Outs { return {F::conv2d(c.x(0), c.x(1), conv_options<2>(c))}; }},
    {"conv_transpose2d",
     [](const Ctx& c) -> Outs { return {F::conv_transpose2d(c.x(0), c.x(1), conv_transpose_options(c))}; }},
    {"unfold", [](const Ctx& c) -> Outs { return {F::unfold(c.x(0), unfold_options(c))}; }},
    {"fold", [](const Ctx& c) -> Outs { return {F::fold(c.x(0), fold_options(c))}; }},
    {"max_pool1d",
     [](const Ctx& c) -> Outs {
       if (c.flag("indices")) return pair(F::max_pool1d_with_indices(c.x(0), max_pool_options<1>(c)));
       return {F::max_pool1d(c.x(0), max_pool_options<1>(c))};
     }},
    {"max_pool2d",
     [](const Ctx& c) -> Outs {
       if (c.flag("indices")) return pair(F::max_pool2d_with_indices(c.x(0), max_pool_options<2>(c)));
       return {F::max_pool2d(c.x(0), max_pool_options<2>(c))};
     }},
    {"avg_pool1d", [](const Ctx& c) -> Outs { return {F::avg_pool1d(c.x(0), avg_pool_options<1>(c))}; }},
    {"avg_pool2d", [](const Ctx& c) -> Outs { return {F::avg_pool2d(c.x(0), avg_pool_options<2>(c))}; }},
    {"adaptive_avg_pool2d",
     [](const Ctx& c) -> Outs {
       return {F::adaptive_avg_pool2d(c.x(0), F::AdaptiveAvgPool2dFuncOptions(sizes<2>(c, "output_size", 1)))};
     }},
    {"adaptive_max_pool2d",
     [](const Ctx& c) -> Outs {
       const F::AdaptiveMaxPool2dFuncOptions o(sizes<2>(c, "output_size", 1));
       if (c.flag("indices")) return pair(F::adaptive_max_pool2d_with_indices(c.x(0), o));
       return {F::adaptive_max_pool2d(c.x(0), o)};
     }},
    {"batch_norm", batch_norm},
    {"group_norm",
     [](const Ctx& c) -> Outs {
       return {F::group_norm(c.x(0), F::GroupNormFuncOptions(c.i64("num_groups"))
                                         .weight(c.named("weight"))
                                         .bias(c.named("bias"))
                                         .eps(c.f64("eps", 1e-5)))};
     }},
    {"instance_norm", instance_norm},
    {"pad_circular",
     [](const Ctx& c) -> Outs { return {F::pad(c.x(0), F::PadFuncOptions(vec(c.list("pad"))).mode(kCircular))}; }},
    {"interpolate", interpolate_op},
    {"BatchNorm2d", batch_norm_module},
    {"cnn_state_dict", state_dict_sizes},
};

}  // namespace
}  // namespace locus::golden
