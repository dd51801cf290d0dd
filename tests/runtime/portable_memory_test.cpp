// The memory and device calls portable code makes without guarding them: on a machine without
// CUDA (or MPS) they answer as torch.cuda's do (Note [Memory calls without the device]), and a
// device that does not exist on a usable type still throws.

#include <string>

#include "tests/test_util.h"

namespace locus {
namespace {

void expect_all_zero(const MemoryStats& s) {
  for (const StatCounter* c : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes, &s.requested_bytes, &s.allocation,
                               &s.segment}) {
    EXPECT_EQ(c->current, 0);
    EXPECT_EQ(c->peak, 0);
    EXPECT_EQ(c->allocated, 0);
    EXPECT_EQ(c->freed, 0);
  }
  EXPECT_EQ(s.num_alloc_retries, 0);
  EXPECT_EQ(s.num_ooms, 0);
}

// torch 1.13 without CUDA: memory_allocated() == memory_reserved() == max_memory_*() == 0 for
// any index, memory_stats() == {}, empty_cache() is None.
TEST(PortableMemory, CudaCallsAnswerWithoutCuda) {
  if (cuda::is_available()) GTEST_SKIP() << "needs a machine without CUDA";
  for (int index : {-1, 0, 3}) {
    SCOPED_TRACE(index);
    EXPECT_EQ(cuda::memory_allocated(index), 0);
    EXPECT_EQ(cuda::memory_reserved(index), 0);
    EXPECT_EQ(cuda::max_memory_allocated(index), 0);
    EXPECT_EQ(cuda::max_memory_reserved(index), 0);
    expect_all_zero(cuda::memory_stats(index));
    EXPECT_NO_THROW(cuda::empty_cache(index));
    EXPECT_NO_THROW(cuda::reset_peak_memory_stats(index));
    EXPECT_EQ(cuda::max_memory_allocated(index), 0);
  }
  // The generic forms agree, for every spelling of the device.
  for (const char* name : {"cuda", "cuda:0", "cuda:5"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(memory::memory_allocated(Device(name)), 0);
    EXPECT_NO_THROW(memory::empty_cache(Device(name)));
    EXPECT_NO_THROW(memory::reset_peak_memory_stats(Device(name)));
  }
}

TEST(PortableMemory, SummaryWithoutCudaIsATableOfZeros) {
  if (cuda::is_available()) GTEST_SKIP() << "needs a machine without CUDA";
  const std::string summary = cuda::memory_summary(1);
  EXPECT_NE(summary.find("device cuda:1 "), std::string::npos) << summary;
  EXPECT_NE(summary.find("| Allocated memory      |     0 bytes |     0 bytes |     0 bytes |     0 bytes|"),
            std::string::npos)
      << summary;
  EXPECT_NE(cuda::memory_summary().find("device cuda "), std::string::npos);
}

// What torch also refuses without CUDA (mem_get_info, current_device, set_device,
// get_device_name: "Torch not compiled with CUDA enabled") still throws, with the reason.
TEST(PortableMemory, CallsThatNeedADeviceStillThrowWithoutCuda) {
  if (cuda::is_available()) GTEST_SKIP() << "needs a machine without CUDA";
  const std::string reason = cuda::unavailable_reason();
  try {
    cuda::mem_get_info();
    FAIL();
  } catch (const BackendUnavailableError& e) {
    EXPECT_EQ(std::string(e.what()), "CUDA is not available: " + reason +
                                         ". Use best_device() to pick what this machine has, or LOCUS_DEVICE=sim to "
                                         "test device placement without a GPU.");
  }
  EXPECT_THROW(cuda::current_device(), BackendUnavailableError);
  EXPECT_THROW(cuda::set_device(0), BackendUnavailableError);
  EXPECT_THROW(cuda::get_device_name(), BackendUnavailableError);
  EXPECT_THROW(memory::mem_get_info(Device("mps")), BackendUnavailableError);
}

TEST(PortableMemory, MpsAnswersOffApple) {
  // Locus has no MPS backend, so MPS is never available: torch.mps.device_count() is 0 there.
  EXPECT_FALSE(mps::is_available());
  EXPECT_EQ(mps::device_count(), 0);
  EXPECT_EQ(memory::memory_allocated(Device("mps")), 0);
  EXPECT_EQ(memory::max_memory_reserved(Device("mps")), 0);
  expect_all_zero(memory::memory_stats(Device("mps")));
  EXPECT_NO_THROW(memory::empty_cache(Device("mps")));
  EXPECT_NO_THROW(memory::reset_peak_memory_stats(Device("mps")));
}

// On a usable device type a missing index is an error, as in torch once CUDA is initialised
// ("Invalid device argument"): every call names the devices there are.
TEST(PortableMemory, MissingDeviceOfAUsableTypeThrows) {
  const Device missing("sim:5");
  const std::string message =
      "device sim:5 does not exist: this machine has 2 sim devices (sim:0 to sim:1); set LOCUS_SIM_DEVICES or call "
      "sim::configure for more";
  auto expect_index_error = [&](auto call, const char* what) {
    try {
      call();
      FAIL() << what;
    } catch (const IndexError& e) {
      EXPECT_EQ(std::string(e.what()), message) << what;
    }
  };
  expect_index_error([&] { memory::memory_allocated(missing); }, "memory_allocated");
  expect_index_error([&] { memory::max_memory_reserved(missing); }, "max_memory_reserved");
  expect_index_error([&] { memory::memory_stats(missing); }, "memory_stats");
  expect_index_error([&] { memory::reset_peak_memory_stats(missing); }, "reset_peak_memory_stats");
  expect_index_error([&] { memory::empty_cache(missing); }, "empty_cache");
  expect_index_error([&] { memory::memory_summary(missing); }, "memory_summary");
  expect_index_error([&] { memory::mem_get_info(missing); }, "mem_get_info");
}

TEST(PortableMemory, MissingCudaIndexThrowsOnAMachineWithCuda) {
  if (!cuda::is_available()) GTEST_SKIP() << "needs CUDA: " << cuda::unavailable_reason();
  const int missing = cuda::device_count();
  EXPECT_THROW(cuda::memory_allocated(missing), IndexError);
  EXPECT_THROW(cuda::empty_cache(missing), IndexError);
  EXPECT_THROW(cuda::reset_peak_memory_stats(missing), IndexError);
  EXPECT_THROW(cuda::memory_stats(missing), IndexError);
}

// Peaks and the cache still work where the device exists: the calls above changed nothing there.
TEST(PortableMemory, SimPeaksResetAndCacheEmpties) {
  const Device d("sim:1");
  memory::empty_cache(d);
  const int64_t base = memory::memory_allocated(d);
  const int64_t reserved = memory::memory_reserved(d);
  {
    const Tensor t = zeros({1 << 16}, d);
    EXPECT_EQ(memory::memory_allocated(d), base + (int64_t{1} << 18));
  }
  EXPECT_GE(memory::max_memory_allocated(d), base + (int64_t{1} << 18));
  EXPECT_GT(memory::memory_reserved(d), memory::memory_allocated(d));
  memory::reset_peak_memory_stats(d);
  EXPECT_EQ(memory::max_memory_allocated(d), base);
  memory::empty_cache(d);
  EXPECT_EQ(memory::memory_reserved(d), reserved);
}

}  // namespace
}  // namespace locus
