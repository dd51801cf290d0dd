// The backward nodes carry PyTorch's names (AddBackward0, ConvolutionBackward0, ...): the names
// below are what PyTorch 1.13 prints for grad_fn.name() of the same calls.

#include <string>
#include <utility>
#include <vector>

#include "src/autograd/node.h"
#include "tests/test_util.h"

namespace locus {
namespace {

std::string node_name(const Tensor& t) { return t.impl()->grad_fn() ? t.impl()->grad_fn()->name() : "(none)"; }

TEST(NodeNames, AreThoseOfPyTorch) {
  manual_seed(0);
  const Tensor x = randn({4, 6}).requires_grad_(true);
  const Tensor w = randn({5, 6}).requires_grad_(true), b = randn({5}).requires_grad_(true);
  const Tensor image = randn({1, 2, 5, 5}).requires_grad_(true), kernel = randn({3, 2, 3, 3}).requires_grad_(true);
  const Tensor targets = tensor(std::vector<int64_t>{0, 1, 2, 3});
  const std::vector<std::pair<Tensor, std::string>> cases = {
      {x + x, "AddBackward0"},
      {x * x, "MulBackward0"},
      {relu(x), "ReluBackward0"},
      {exp(x), "ExpBackward0"},
      {where(gt(x, 0), x, x * 2), "WhereBackward0"},
      {x.mm(w.transpose(0, 1)), "MmBackward0"},
      {nn::functional::linear(x, w, b), "AddmmBackward0"},
      {x.sum(), "SumBackward0"},
      {x.mean(), "MeanBackward0"},
      {x.sum(1), "SumBackward1"},
      {x.mean(0), "MeanBackward1"},
      {x.prod(), "ProdBackward0"},
      {x.prod(1), "ProdBackward1"},
      {x.max(), "MaxBackward1"},
      {x.max(1).values, "MaxBackward0"},
      {x.min(), "MinBackward1"},
      {x.min(0).values, "MinBackward0"},
      {x.amax(0), "AmaxBackward0"},
      {x.var(), "VarBackward0"},
      {x.std({0}), "StdBackward0"},
      {x.norm(), "NormBackward1"},
      {x.logsumexp(1), "LogsumexpBackward0"},
      {x.view({24}), "ViewBackward0"},
      {x.transpose(0, 1), "TransposeBackward0"},
      {x.permute({1, 0}), "PermuteBackward0"},
      {x.unsqueeze(0), "UnsqueezeBackward0"},
      {x.unsqueeze(0).squeeze(0), "SqueezeBackward1"},
      {x.select(0, 1), "SelectBackward0"},
      {x.narrow(1, 0, 2), "SliceBackward0"},
      {x.narrow(0, 0, 1).expand({3, 6}), "ExpandBackward0"},
      {x.clone(), "CloneBackward0"},
      {x.to(kFloat64), "ToCopyBackward0"},
      {softmax(x, 1), "SoftmaxBackward0"},
      {log_softmax(x, 1), "LogSoftmaxBackward0"},
      {cat({x, x}), "CatBackward0"},
      {cumsum(x, 1), "CumsumBackward0"},
      {gather(x, 1, zeros({4, 1}, TensorOptions().dtype(kInt64))), "GatherBackward0"},
      {index_select(x, 0, tensor(std::vector<int64_t>{0})), "IndexSelectBackward0"},
      {sort(x, 1).values, "SortBackward0"},
      {topk(x, 2).values, "TopkBackward0"},
      {nn::functional::cross_entropy(x, targets), "NllLossBackward0"},
      {nn::functional::layer_norm(x, nn::functional::LayerNormFuncOptions({6})), "NativeLayerNormBackward0"},
      {nn::functional::conv2d(image, kernel), "ConvolutionBackward0"},
      {nn::functional::batch_norm(image, Tensor(), Tensor(), nn::functional::BatchNormFuncOptions().training(true)),
       "NativeBatchNormBackward0"},
  };
  for (const auto& [result, expected] : cases) EXPECT_EQ(node_name(result), expected);
}

}  // namespace
}  // namespace locus
