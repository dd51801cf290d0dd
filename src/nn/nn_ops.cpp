// The top-level neural-network functions with ATen's positional arguments (locus/nn_ops.h). Each
// builds nn::functional's options and calls that function, so the two spellings share one
// implementation, one set of checks and one set of messages.

#include "locus/nn_ops.h"

#include <string>

#include "locus/errors.h"
#include "locus/nn/activation.h"
#include "locus/nn/functional.h"
#include "locus/nn/functional/conv.h"
#include "locus/nn/functional/embedding.h"
#include "locus/nn/functional/layer_norm.h"
#include "locus/nn/functional/normalization.h"
#include "locus/nn/functional/pooling.h"

namespace locus {
namespace {

namespace F = nn::functional;

// ATen takes a window, stride or padding as a list of one number (every dim) or of one number
// per dim; nn::functional's options hold ExpandingArray<D>.
template <size_t D>
ExpandingArray<D> per_dim(IntArrayRef sizes, const char* function, const char* argument) {
  if (sizes.size() == 1) return ExpandingArray<D>(sizes[0]);
  if (sizes.size() == D) return ExpandingArray<D>(sizes.vec());
  throw ValueError(std::string(function) + ": " + argument + " must be one number or " + std::to_string(D) +
                   " (one per spatial dim), got " + std::to_string(sizes.size()));
}

// An empty stride means "the kernel size", as ATen's pooling functions have it.
template <size_t D>
ExpandingArray<D> pool_stride(IntArrayRef stride, IntArrayRef kernel_size, const char* function) {
  return per_dim<D>(stride.empty() ? kernel_size : stride, function, "stride");
}

template <size_t D>
F::MaxPoolFuncOptions<D> max_pool_options(IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                          IntArrayRef dilation, bool ceil_mode, const char* function) {
  return F::MaxPoolFuncOptions<D>(per_dim<D>(kernel_size, function, "kernel_size"))
      .stride(pool_stride<D>(stride, kernel_size, function))
      .padding(per_dim<D>(padding, function, "padding"))
      .ceil_mode(ceil_mode)
      .dilation(per_dim<D>(dilation, function, "dilation"));
}

template <size_t D>
F::AvgPoolFuncOptions<D> avg_pool_options(IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                          bool ceil_mode, bool count_include_pad, const char* function) {
  F::AvgPoolFuncOptions<D> options(per_dim<D>(kernel_size, function, "kernel_size"));
  options.stride(pool_stride<D>(stride, kernel_size, function))
      .padding(per_dim<D>(padding, function, "padding"))
      .ceil_mode(ceil_mode);
  options.count_include_pad(count_include_pad);
  return options;
}

template <size_t D>
F::ConvFuncOptions<D> conv_options(const Tensor& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                   int64_t groups, const char* function) {
  F::ConvFuncOptions<D> options;
  options.bias(bias).stride(per_dim<D>(stride, function, "stride")).dilation(per_dim<D>(dilation, function, "dilation"))
      .groups(groups);
  options.padding(per_dim<D>(padding, function, "padding"));
  return options;
}

}  // namespace

Tensor feature_dropout(const Tensor& input, double p, bool train) {
  return F::dropout2d(input, F::Dropout2dFuncOptions(p).training(train));
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return F::conv1d(input, weight, conv_options<1>(bias, stride, padding, dilation, groups, "conv1d"));
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return F::conv2d(input, weight, conv_options<2>(bias, stride, padding, dilation, groups, "conv2d"));
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  const char* name = "conv_transpose2d";
  F::ConvTranspose2dFuncOptions options;
  options.bias(bias).stride(per_dim<2>(stride, name, "stride")).dilation(per_dim<2>(dilation, name, "dilation"))
      .groups(groups);
  options.padding(per_dim<2>(padding, name, "padding")).output_padding(per_dim<2>(output_padding, name, "output_padding"));
  return F::conv_transpose2d(input, weight, options);
}

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return F::max_pool1d(input, max_pool_options<1>(kernel_size, stride, padding, dilation, ceil_mode, "max_pool1d"));
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return F::max_pool2d(input, max_pool_options<2>(kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d"));
}

Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  return F::avg_pool1d(input,
                       avg_pool_options<1>(kernel_size, stride, padding, ceil_mode, count_include_pad, "avg_pool1d"));
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  F::AvgPool2dFuncOptions options =
      avg_pool_options<2>(kernel_size, stride, padding, ceil_mode, count_include_pad, "avg_pool2d");
  options.divisor_override(divisor_override);
  return F::avg_pool2d(input, options);
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  return F::adaptive_avg_pool2d(input, per_dim<2>(output_size, "adaptive_avg_pool2d", "output_size"));
}

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool /*cudnn_enabled*/) {
  return F::batch_norm(input, running_mean, running_var,
                       F::BatchNormFuncOptions().weight(weight).bias(bias).training(training).momentum(momentum).eps(eps));
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool /*cudnn_enable*/) {
  return F::layer_norm(input, F::LayerNormFuncOptions(normalized_shape.vec()).weight(weight).bias(bias).eps(eps));
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  bool /*cudnn_enabled*/) {
  return F::group_norm(input, F::GroupNormFuncOptions(num_groups).weight(weight).bias(bias).eps(eps));
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  // ATen marks "no padding row" with -1; F::embedding's optional counts -1 from the end.
  F::EmbeddingFuncOptions options;
  options.scale_grad_by_freq(scale_grad_by_freq).sparse(sparse);
  if (padding_idx >= 0) options.padding_idx(padding_idx);
  return F::embedding(indices, weight, options);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, nn::Reduction reduction) {
  return F::l1_loss(input, target, F::L1LossFuncOptions(reduction));
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, nn::Reduction reduction, double beta) {
  return F::smooth_l1_loss(input, target, F::SmoothL1LossFuncOptions(reduction).beta(beta));
}

Tensor huber_loss(const Tensor& input, const Tensor& target, nn::Reduction reduction, double delta) {
  return F::huber_loss(input, target, F::HuberLossFuncOptions(reduction).delta(delta));
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, nn::Reduction reduction) {
  return F::binary_cross_entropy(input, target, F::BinaryCrossEntropyFuncOptions().weight(weight).reduction(reduction));
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, nn::Reduction reduction) {
  return F::binary_cross_entropy_with_logits(
      input, target,
      F::BinaryCrossEntropyWithLogitsFuncOptions().weight(weight).pos_weight(pos_weight).reduction(reduction));
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, nn::Reduction reduction,
                int64_t ignore_index) {
  return F::nll_loss(input, target, F::NLLLossFuncOptions().weight(weight).reduction(reduction).ignore_index(ignore_index));
}

Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const Tensor& weight, nn::Reduction reduction,
                          int64_t ignore_index, double label_smoothing) {
  return F::cross_entropy(input, target,
                          F::CrossEntropyFuncOptions()
                              .weight(weight)
                              .reduction(reduction)
                              .ignore_index(ignore_index)
                              .label_smoothing(label_smoothing));
}

Tensor kl_div(const Tensor& input, const Tensor& target, nn::Reduction reduction, bool log_target) {
  return F::kl_div(input, target, F::KLDivFuncOptions(reduction).log_target(log_target));
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           nn::Reduction reduction) {
  return F::margin_ranking_loss(input1, input2, target,
                                F::MarginRankingLossFuncOptions().margin(margin).reduction(reduction));
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             nn::Reduction reduction) {
  return F::cosine_embedding_loss(input1, input2, target,
                                  F::CosineEmbeddingLossFuncOptions().margin(margin).reduction(reduction));
}

}  // namespace locus
