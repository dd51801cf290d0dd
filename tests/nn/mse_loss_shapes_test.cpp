// mse_loss refuses an input and a target of different shapes, also where PyTorch broadcasts them
// with a warning, and says why (Note [Losses do not broadcast]).

#include <string>

#include "tests/test_util.h"

namespace locus {
namespace {

std::string shape_error_of(const Tensor& input, const Tensor& target) {
  try {
    locus::mse_loss(input, target);
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "no ShapeError";
}

TEST(MseLossShapes, BroadcastableShapesAreRefusedWithTheReason) {
  const std::string why =
      "; PyTorch would broadcast them with a warning, Locus refuses: a broadcast loss is almost always a bug (an output "
      "of [N, 1] against a target of [N] compares every output with every target); give both the same shape (reshape, "
      "squeeze or expand_as)";
  EXPECT_EQ(shape_error_of(randn({3, 4}), randn({4})),
            "[locus::mse_loss] input shape [3, 4] and target shape [4] differ" + why);
  EXPECT_EQ(shape_error_of(randn({5, 1}), randn({5})),
            "[locus::mse_loss] input shape [5, 1] and target shape [5] differ" + why);
  EXPECT_EQ(shape_error_of(randn({2, 3}).to(Device("sim:0")), zeros({2, 1}, Device("sim:0"))),
            "[locus::mse_loss] input shape [2, 3] and target shape [2, 1] differ" + why);
}

TEST(MseLossShapes, ShapesThatCannotBroadcastAreRefusedPlainly) {
  EXPECT_EQ(shape_error_of(randn({3}), randn({2})), "[locus::mse_loss] input shape [3] and target shape [2] differ");
  EXPECT_EQ(shape_error_of(randn({2, 3}), randn({3, 2})),
            "[locus::mse_loss] input shape [2, 3] and target shape [3, 2] differ");
}

TEST(MseLossShapes, SameShapesStillWork) {
  const Tensor loss = locus::mse_loss(tensor({1.0f, 2.0f, 3.0f}), tensor({1.0f, 0.0f, 3.0f}));
  EXPECT_FLOAT_EQ(loss.item<float>(), 4.0f / 3.0f);
}

}  // namespace
}  // namespace locus
