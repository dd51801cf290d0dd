// The losses as modules and as F:: functions beyond what the golden family replays: the modules
// forward their options, F:: and the old nn:: names agree, Locus refuses broadcast losses (Note
// [Losses do not broadcast]), every loss runs on the simulated device, and BCE's log clamp keeps
// gradients finite.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

namespace F = nn::functional;
using testing::values;

class LossTest : public testing::OnEachDevice {};

TEST_P(LossTest, ModulesForwardTheirOptions) {
  manual_seed(1);
  const TensorOptions o = TensorOptions().device(dev());
  const Tensor x = randn({4, 3}, o), y = randn({4, 3}, o), p = rand({4, 3}, o), t = (rand({4, 3}, o) > 0.5).to(kFloat32);
  const Tensor w = rand({3}, o) + 0.5;
  auto same = [](const Tensor& a, const Tensor& b) { EXPECT_EQ(values(a), values(b)); };
  same(nn::L1Loss(nn::L1LossOptions(nn::Reduction::Sum))(x, y), F::l1_loss(x, y, F::L1LossFuncOptions(nn::Reduction::Sum)));
  same(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(x, y), F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions().beta(0.5)));
  same(nn::HuberLoss(nn::HuberLossOptions(nn::Reduction::None).delta(0.3))(x, y),
       F::huber_loss(x, y, F::HuberLossFuncOptions(nn::Reduction::None).delta(0.3)));
  same(nn::KLDivLoss(nn::KLDivLossOptions(nn::KLDivReduction::BatchMean))(log_softmax(x, 1), softmax(y, 1)),
       F::kl_div(log_softmax(x, 1), softmax(y, 1), F::KLDivFuncOptions(nn::KLDivReduction::BatchMean)));
  same(nn::BCELoss(nn::BCELossOptions().weight(w))(p, t), F::binary_cross_entropy(p, t, F::BinaryCrossEntropyFuncOptions().weight(w)));
  same(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(w))(x, t),
       F::binary_cross_entropy_with_logits(x, t, F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(w)));
  same(nn::MarginRankingLoss(nn::MarginRankingLossOptions().margin(0.2))(x, y, t * 2 - 1),
       F::margin_ranking_loss(x, y, t * 2 - 1, F::MarginRankingLossFuncOptions().margin(0.2)));
  const Tensor pm = tensor(std::vector<float>{1, -1, 1, -1}, o);
  same(nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.1))(x, y, pm),
       F::cosine_embedding_loss(x, y, pm, F::CosineEmbeddingLossFuncOptions().margin(0.1)));
  const Tensor classes = tensor(std::vector<int64_t>{0, 2, 1, 2}, o);
  same(nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().label_smoothing(0.1).weight(w))(x, classes),
       F::cross_entropy(x, classes, F::CrossEntropyFuncOptions().label_smoothing(0.1).weight(w)));
  // The old spellings are the new ones without weight and smoothing (the fused path).
  same(nn::functional::cross_entropy(x, classes), F::cross_entropy(x, classes));
  same(nn::CrossEntropyLoss(nn::ClassLossOptions(nn::Reduction::Sum))(x, classes),
       F::cross_entropy(x, classes, F::CrossEntropyFuncOptions().reduction(nn::Reduction::Sum)));
  same(nn::functional::nll_loss(log_softmax(x, 1), classes), F::nll_loss(log_softmax(x, 1), classes));
  same(locus::mse_loss(x, y), F::mse_loss(x, y));
  same(locus::linear(x, w.view({1, 3})), F::linear(x, w.view({1, 3})));
  same(F::dropout(x, F::DropoutFuncOptions(0.5).training(false)), x);
}

TEST_P(LossTest, LabelSmoothingZeroIsPlainCrossEntropy) {
  manual_seed(2);
  const TensorOptions o = TensorOptions().device(dev());
  const Tensor x = randn({6, 5}, o);
  const Tensor classes = tensor(std::vector<int64_t>{0, 4, 1, 2, 3, 3}, o);
  const Tensor w = ones({5}, o);
  // A weight of ones is no weight: the composed path equals the fused one.
  testing::expect_close(F::cross_entropy(x, classes, F::CrossEntropyFuncOptions().weight(w)),
                        values(F::cross_entropy(x, classes)), 1e-6, 1e-7);
}

TEST_P(LossTest, BroadcastIsRefused) {
  const TensorOptions o = TensorOptions().device(dev());
  const Tensor out = zeros({4, 1}, o), target = zeros({4}, o);
  EXPECT_THROW(F::l1_loss(out, target), ShapeError);
  EXPECT_THROW(F::smooth_l1_loss(out, target), ShapeError);
  EXPECT_THROW(F::huber_loss(out, target), ShapeError);
  EXPECT_THROW(F::kl_div(out, target), ShapeError);
  EXPECT_THROW(F::binary_cross_entropy(out, target), ShapeError);
  EXPECT_THROW(F::binary_cross_entropy_with_logits(out, target), ShapeError);
}

TEST_P(LossTest, BceGradientStaysFiniteAtTheClamp) {
  const TensorOptions o = TensorOptions().device(dev()).dtype(kFloat64);
  const Tensor x = tensor(std::vector<double>{0.0, 1.0, 0.5}, o).requires_grad_(true);
  const Tensor t = tensor(std::vector<double>{0.0, 1.0, 1.0}, o);
  const Tensor loss = F::binary_cross_entropy(x, t, F::BinaryCrossEntropyFuncOptions().reduction(nn::Reduction::Sum));
  loss.backward();
  EXPECT_NEAR(loss.item<double>(), std::log(2.0), 1e-12);
  for (double g : values(x.grad())) EXPECT_TRUE(std::isfinite(g));
}

TEST_P(LossTest, ErrorsNameTheLoss) {
  const TensorOptions o = TensorOptions().device(dev());
  try {
    F::binary_cross_entropy(full({2}, 1.5, o), zeros({2}, o));
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("binary_cross_entropy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(F::binary_cross_entropy(zeros({2}, o), zeros({2}, o.dtype(kFloat64))), DTypeError);
  EXPECT_THROW(F::cross_entropy(zeros({2, 3}, o), zeros({2}, o.dtype(kInt64)), F::CrossEntropyFuncOptions().label_smoothing(-0.1)),
               ValueError);
  EXPECT_THROW(F::normalize(zeros({2, 3}, o), F::NormalizeFuncOptions().p(0.5)), ValueError);
  EXPECT_THROW(F::cosine_similarity(zeros({2, 3}, o), zeros({2, 4}, o)), ShapeError);
}

INSTANTIATE_TEST_SUITE_P(Devices, LossTest, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
