// Device parsing, discovery, best_device, current device and DeviceGuard.

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/test_util.h"

namespace locus {
namespace {

TEST(Device, ParsesAcceptedForms) {
  EXPECT_EQ(Device("cpu"), Device(DeviceType::CPU));
  EXPECT_EQ(Device("cuda").index(), -1);
  EXPECT_EQ(Device("cuda:1"), Device(DeviceType::CUDA, 1));
  EXPECT_EQ(Device("mps").type(), DeviceType::MPS);
  EXPECT_EQ(Device("sim:0"), Device(DeviceType::Sim, 0));
  EXPECT_EQ(Device("cpu:0").str(), "cpu");
  EXPECT_EQ(Device("cuda:12").str(), "cuda:12");
  std::hash<Device> h;
  EXPECT_EQ(h(Device("sim:1")), h(Device(DeviceType::Sim, 1)));
}

class BadDeviceString : public ::testing::TestWithParam<const char*> {};

TEST_P(BadDeviceString, ThrowsValueErrorNamingString) {
  const std::string spec = GetParam();
  try {
    Device d(spec);
    FAIL() << "accepted '" << spec << "'";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + spec + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'cuda:N'"), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Spec, BadDeviceString,
                         ::testing::Values("gpu", "cuda:", "cuda:-1", "cuda:1:2", " cuda", "cuda:0x1", "CUDA", "Cuda:0",
                                           "cuda ", "cuda:01", "", ":0", "sim:+1", "cpu:1", "cuda:999", "cuda0", "mps:a"));

TEST(Device, IndexOutOfRangeThrowsWhenUsed) {
  try {
    zeros({2}, Device("sim:7"));
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("2 sim devices"), std::string::npos) << e.what();
  }
}

TEST(Device, CudaDiscoveryNeverThrows) {
  EXPECT_NO_THROW(cuda::is_available());
  EXPECT_NO_THROW(cuda::device_count());
  if (!cuda::is_available()) {
    EXPECT_EQ(cuda::device_count(), 0);
    EXPECT_FALSE(cuda::unavailable_reason().empty());
    EXPECT_THROW(zeros({2}, Device("cuda")), BackendUnavailableError);
    EXPECT_THROW(cuda::get_device_name(0), BackendUnavailableError);
  }
  EXPECT_FALSE(mps::is_available());
  EXPECT_THROW(zeros({1}, Device("mps")), BackendUnavailableError);
}

TEST(Device, BestDeviceHonoursEnvironment) {
  ::setenv("LOCUS_DEVICE", "sim:1", 1);
  EXPECT_EQ(best_device(), Device("sim:1"));
  EXPECT_EQ(accelerator::current(), DeviceType::Sim);
  ::setenv("LOCUS_DEVICE", "gpu", 1);
  EXPECT_THROW(best_device(), ValueError);
  ::unsetenv("LOCUS_DEVICE");
  EXPECT_EQ(best_device(), cuda::is_available() ? Device("cuda:0") : Device("cpu"));
}

// LOCUS_DEVICE raises what using the device would (docs/devices.md): BackendUnavailableError for
// a type this machine lacks, as Device("mps") in use does, IndexError for a missing index.
TEST(Device, UnusableLocusDeviceRaisesWhatUsingTheDeviceWould) {
  ::setenv("LOCUS_DEVICE", "mps", 1);
  try {
    best_device();
    ADD_FAILURE() << "LOCUS_DEVICE=mps was accepted";
  } catch (const BackendUnavailableError& e) {
    EXPECT_EQ(std::string(e.what()),
              "LOCUS_DEVICE='mps' cannot be used: MPS is not available (MPS is Apple's Metal backend and needs macOS on "
              "Apple silicon; this build has no MPS backend); unset LOCUS_DEVICE to let best_device() choose, or set "
              "LOCUS_DEVICE=sim to test device placement without a GPU");
  }
  EXPECT_THROW(zeros({1}, Device("mps")), BackendUnavailableError);
  if (!cuda::is_available()) {
    ::setenv("LOCUS_DEVICE", "cuda", 1);
    try {
      best_device();
      ADD_FAILURE() << "LOCUS_DEVICE=cuda was accepted without CUDA";
    } catch (const BackendUnavailableError& e) {
      EXPECT_EQ(std::string(e.what()), "LOCUS_DEVICE='cuda' cannot be used: CUDA is not available (" +
                                           cuda::unavailable_reason() +
                                           "); unset LOCUS_DEVICE to let best_device() choose, or set LOCUS_DEVICE=sim "
                                           "to test device placement without a GPU");
    }
    EXPECT_THROW(zeros({1}, Device("cuda")), BackendUnavailableError);
    EXPECT_THROW(accelerator::current(), BackendUnavailableError);
  }
  ::setenv("LOCUS_DEVICE", "sim:7", 1);
  try {
    best_device();
    ADD_FAILURE() << "LOCUS_DEVICE=sim:7 was accepted";
  } catch (const IndexError& e) {
    EXPECT_EQ(std::string(e.what()),
              "LOCUS_DEVICE='sim:7' cannot be used: device sim:7 does not exist: this machine has 2 sim devices (sim:0 "
              "to sim:1); set LOCUS_SIM_DEVICES or call sim::configure for more");
  }
  ::setenv("LOCUS_DEVICE", "cuda:", 1);
  EXPECT_THROW(best_device(), ValueError);
  ::unsetenv("LOCUS_DEVICE");
}

// Describing a device needs one: without CUDA, get_device_name and get_device_properties throw
// BackendUnavailableError with the reason, while discovery answers (docs/devices.md).
TEST(Device, DescribingACudaDeviceWithoutCudaThrowsDiscoveryDoesNot) {
  if (cuda::is_available()) GTEST_SKIP() << "needs a machine without CUDA";
  EXPECT_NO_THROW(cuda::device_count());
  EXPECT_NO_THROW(cuda::unavailable_reason());
  EXPECT_EQ(cuda::driver_version(), "");
  EXPECT_EQ(cuda::runtime_version(), "");
  EXPECT_THROW(cuda::get_device_properties(0), BackendUnavailableError);
  EXPECT_THROW(cuda::get_device_name(0), BackendUnavailableError);
}

TEST(DeviceGuard, NestsAndRestores) {
  EXPECT_EQ(sim::current_device(), 0);
  {
    DeviceGuard g(Device("sim:1"));
    EXPECT_EQ(sim::current_device(), 1);
    EXPECT_EQ(zeros({2}, Device("sim")).device(), Device("sim:1"));
    {
      DeviceGuard inner(Device("sim:0"));
      EXPECT_EQ(sim::current_device(), 0);
    }
    EXPECT_EQ(sim::current_device(), 1);
  }
  EXPECT_EQ(sim::current_device(), 0);
}

TEST(DeviceGuard, RestoresWhenUnwinding) {
  try {
    DeviceGuard g(Device("sim:1"));
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(sim::current_device(), 0);
  EXPECT_THROW(DeviceGuard(Device("sim:9")), IndexError);
  EXPECT_EQ(sim::current_device(), 0);
}

TEST(DeviceGuard, CurrentDeviceIsPerThread) {
  sim::set_device(1);
  int seen_in_thread = -1;
  std::thread t([&] {
    seen_in_thread = sim::current_device();
    sim::set_device(1);
  });
  t.join();
  EXPECT_EQ(seen_in_thread, 0);
  EXPECT_EQ(sim::current_device(), 1);
  sim::set_device(0);
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// Every device type reports the same generic properties, sim and cpu included.
TEST(DeviceProperties, EveryDeviceTypeReportsThem) {
  const DeviceProperties cpu = get_device_properties(Device("cpu"));
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_GT(cpu.total_memory, 0u);
  EXPECT_GE(cpu.multi_processor_count, 1);
  EXPECT_TRUE(cpu.host_addressable);
  EXPECT_FALSE(cpu.asynchronous);
  const DeviceProperties sim1 = get_device_properties(Device("sim:1"));
  EXPECT_EQ(sim1.name, "Locus simulated device 1");
  EXPECT_EQ(sim1.total_memory, sim::config().memory_bytes);
  EXPECT_TRUE(sim1.host_addressable);
  EXPECT_THROW(get_device_properties(Device("sim:63")), IndexError);
  if (!cuda::is_available()) {
    EXPECT_THROW(get_device_properties(Device("cuda:0")), BackendUnavailableError);
  } else {
    const DeviceProperties gpu = get_device_properties(Device("cuda:0"));
    EXPECT_EQ(gpu.name, cuda::get_device_name(0));
    EXPECT_TRUE(gpu.asynchronous);
    EXPECT_FALSE(gpu.host_addressable);
    EXPECT_GE(gpu.major, 7);
  }
}

// What the op path asks of sim (its device count and what it lacks) is read from a published
// state without a lock while another thread reconfigures: each read sees the old or the new
// configuration, never a torn one.
TEST(SimDevices, ReadsRaceReconfigurationSafely) {
  const sim::Config original = sim::config();
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!stop.load()) {
      const int n = sim::device_count();
      EXPECT_TRUE(n == original.device_count || n == 3);
      (void)supports("mul", Device("sim:0"), kFloat32);
      reads.fetch_add(1);
    }
  });
  while (reads.load() == 0) std::this_thread::yield();
  // Reconfigure until the reader has read many times in between (bounded in time).
  const int start = reads.load();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (int i = 0; i < 40 || (reads.load() < start + 200 && std::chrono::steady_clock::now() < deadline); ++i) {
    sim::Config c = original;
    if (i % 2) c.unsupported_ops = {"mul"}, c.device_count = 3;
    sim::configure(c);
  }
  stop.store(true);
  reader.join();
  sim::configure(original);
  EXPECT_GE(reads.load(), start + 1);
  EXPECT_TRUE(supports("mul", Device("sim:0"), kFloat32));
}

}  // namespace
}  // namespace locus
