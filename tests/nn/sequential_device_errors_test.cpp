// A batch on the wrong device names the input and the layer it reached, by its path in the model,
// not an argument of the op the layer called (Note [Device errors in Sequential]).

#include <string>

#include "tests/test_util.h"

namespace locus {
namespace {

// Runs `f`, which must throw DeviceMismatchError, and returns the error.
template <class F>
DeviceMismatchError mismatch_of(F f) {
  try {
    f();
  } catch (const DeviceMismatchError& e) {
    return e;
  }
  ADD_FAILURE() << "no DeviceMismatchError";
  return DeviceMismatchError(Device("cpu"), Device("cpu"), "", "");
}

TEST(SequentialDeviceErrors, CpuBatchOnSimModelNamesTheInputAndTheLayer) {
  auto model = nn::Sequential{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)}.to(Device("sim:0"));
  const DeviceMismatchError e = mismatch_of([&] { model(randn({2, 4})); });
  EXPECT_EQ(std::string(e.what()),
            "Sequential layer 0 (Linear): input is on cpu but the layer's weight is on sim:0; move the batch with "
            ".to(device)");
  EXPECT_EQ(e.argument(), "input");
  EXPECT_EQ(e.module(), "0");
  EXPECT_EQ(e.first(), Device("sim:0"));
  EXPECT_EQ(e.second(), Device("cpu"));
  EXPECT_EQ(e.op(), "linear");
  // The fix the message asks for works.
  EXPECT_EQ(model(randn({2, 4}).to(Device("sim:0"))).device(), Device("sim:0"));
}

TEST(SequentialDeviceErrors, UnfusedLastLinearIsNamedToo) {
  auto model = nn::Sequential{nn::ReLU(), nn::Linear(4, 2)}.to(Device("sim:1"));
  const DeviceMismatchError e = mismatch_of([&] { model(randn({2, 4}).to(Device("sim:0"))); });
  EXPECT_EQ(std::string(e.what()),
            "Sequential layer 1 (Linear): input is on sim:0 but the layer's weight is on sim:1; move the batch with "
            ".to(device)");
  EXPECT_EQ(e.module(), "1");
}

TEST(SequentialDeviceErrors, NestedSequentialGivesTheFullPath) {
  auto model = nn::Sequential{nn::ReLU(), nn::Sequential{nn::Linear(4, 3), nn::Tanh()}}.to(Device("sim:0"));
  const DeviceMismatchError e = mismatch_of([&] { model(randn({2, 4})); });
  EXPECT_EQ(std::string(e.what()),
            "Sequential layer 1.0 (Linear): input is on cpu but the layer's weight is on sim:0; move the batch with "
            ".to(device)");
  EXPECT_EQ(e.module(), "1.0");
  EXPECT_EQ(e.argument(), "input");
}

TEST(SequentialDeviceErrors, ModelSpreadOverDevicesAsksToMoveTheModel) {
  auto model = nn::Sequential{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)};
  (*model)[0]->to(Device("sim:0"));  // only the first layer moved
  const DeviceMismatchError e = mismatch_of([&] { model(randn({2, 4}).to(Device("sim:0"))); });
  EXPECT_EQ(std::string(e.what()),
            "Sequential layer 2 (Linear): input is on sim:0 but the layer's weight is on cpu; the model's tensors are "
            "on sim:0 and cpu: move the whole model with .to(device)");
  EXPECT_EQ(e.module(), "2");
  EXPECT_EQ(e.first(), Device("cpu"));
  EXPECT_EQ(e.second(), Device("sim:0"));
}

TEST(SequentialDeviceErrors, OpsOutsideSequentialKeepTheirMessage) {
  const DeviceMismatchError e =
      mismatch_of([&] { locus::linear(randn({2, 4}), randn({3, 4}).to(Device("sim:0")), Tensor()); });
  EXPECT_EQ(e.module(), "");
  EXPECT_EQ(std::string(e.what()),
            "Expected all tensors to be on the same device, but found at least two devices, cpu and sim:0! (when "
            "checking argument 'weight' of 'linear')");
}

}  // namespace
}  // namespace locus
