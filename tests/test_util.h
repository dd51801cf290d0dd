#pragma once
// Helpers shared by the tests: float64 references and the devices every value test runs on.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "locus/locus.h"

/// Skips the test, with the driver's reason, where there is no CUDA GPU.
#define REQUIRE_CUDA()                                                                        \
  if (!cuda::is_available()) GTEST_SKIP() << "needs a CUDA GPU: " << cuda::unavailable_reason()

namespace locus::testing {

/// The devices a value test runs on: cpu and sim:0 (cuda joins in scripts/gpu-check.sh).
inline std::vector<std::string> value_devices() {
  std::vector<std::string> d{"cpu", "sim:0"};
  if (cuda::is_available()) d.push_back("cuda:0");
  return d;
}

/// Test-name suffix for a device parameter ("cuda:0" -> "cuda_0"), so filters can pick a device.
inline std::string device_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (c == ':') c = '_';
  return name;
}

/// Base of the value suites parametrised by device name (instantiate with value_devices()).
class OnEachDevice : public ::testing::TestWithParam<std::string> {
 protected:
  Device dev() const { return Device(GetParam()); }
};

/// Elements of any tensor as float64, read on the host.
inline std::vector<double> values(const Tensor& t) { return t.detach().cpu().to(kFloat64).contiguous().to_vector<double>(); }

/// Asserts every element matches `expected` within atol + rtol*|expected|.
inline void expect_close(const Tensor& t, const std::vector<double>& expected, double rtol = 1e-5, double atol = 1e-6) {
  const std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
      continue;
    }
    if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "at " << i;
      continue;
    }
    EXPECT_NEAR(got[i], expected[i], atol + rtol * std::abs(expected[i])) << "at " << i;
  }
}

/// Fails the test when memory on `device` did not return to the level it had at construction.
class MemoryBaseline {
 public:
  explicit MemoryBaseline(Device d) : device_(d), start_(memory::memory_allocated(d)) {}
  ~MemoryBaseline() { EXPECT_EQ(memory::memory_allocated(device_), start_) << "memory leaked on " << device_; }

 private:
  Device device_;
  int64_t start_;
};

/// True in a static Locus with the CUDA backend linked in (BUILD_SHARED_LIBS=OFF): its kernels
/// and CUDA libraries are in every process, driver or not.
inline bool cuda_linked_in() { return build_config().find("CUDA backend: linked in") != std::string::npos; }

/// True when the CUDA kernels are linked in or their module is loaded (Note [Backend modules]):
/// a "not implemented" error lists cuda among the implementing devices only then. Without a
/// driver, or without the module, the reason says so and the kernels are not in the process.
inline bool cuda_kernels_loaded() {
  if (cuda::is_available() || cuda_linked_in()) return true;
  const std::string reason = cuda::unavailable_reason();
  return reason.rfind("built without CUDA", 0) != 0 && reason.rfind("no NVIDIA driver", 0) != 0 &&
         reason.find("liblocus_cuda") == std::string::npos;
}

}  // namespace locus::testing
