// load(path, device) allocates on the device first and streams the data through a bounded host
// buffer (Note [Loading without a host copy]): a checkpoint too large for the device fails
// there, naming it, before the host pays for it, and a successful load holds no host copy.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "locus/locus.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::SmallSim;
std::string temp_path(const std::string& name) { return testing::temp_path("dev", name); }



// A valid safetensors file holding one float32 tensor of `elements` zeros (as another tool
// writes it: no checksum), made sparse with ftruncate so it takes no disk.
std::string sparse_checkpoint(const std::string& path, uint64_t elements) {
  const uint64_t bytes = elements * 4;
  std::string header = "{\"huge\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(elements) + "],\"data_offsets\":[0," +
                       std::to_string(bytes) + "]}}";
  while (header.size() % 8) header += ' ';
  std::string prefix(8, '\0');
  for (int b = 0; b < 8; ++b) prefix[static_cast<size_t>(b)] = static_cast<char>(uint64_t{header.size()} >> (8 * b));
  prefix += header;
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, prefix.data(), prefix.size()), static_cast<ssize_t>(prefix.size()));
  EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(prefix.size() + bytes)), 0);
  ::close(fd);
  return path;
}

TEST(CheckpointToDevice, ATensorLargerThanTheDeviceIsOutOfMemoryNamingTheDevice) {
  const SmallSim sim(uint64_t{64} << 20);
  const std::string path = sparse_checkpoint(temp_path("32g"), uint64_t{8} << 30);  // 32 GiB
  const Device cpu("cpu");
  memory::reset_peak_memory_stats(cpu);
  const int64_t host_before = memory::max_memory_allocated(cpu);
  try {
    load(path, Device("sim:0"));
    FAIL() << "no OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(e.device(), Device("sim:0"));
    EXPECT_EQ(e.requested(), uint64_t{32} << 30);
    EXPECT_EQ(e.capacity(), uint64_t{64} << 20);
    EXPECT_NE(std::string(e.what()).find("sim:0 has a total capacity of 64.00 MiB"), std::string::npos) << e.what();
  }
  EXPECT_EQ(memory::max_memory_allocated(cpu), host_before);  // the host paid nothing
  std::remove(path.c_str());
}

// The case that used to raise the process's peak by the tensor's size before failing.
TEST(CheckpointToDevice, AOneGibTensorBoundForA64MibDeviceFailsBeforeAnyHostAllocation) {
  const SmallSim sim(uint64_t{64} << 20);
  const std::string path = sparse_checkpoint(temp_path("1g"), uint64_t{1} << 28);  // 1 GiB
  const Device cpu("cpu");
  memory::reset_peak_memory_stats(cpu);
  const int64_t host_before = memory::max_memory_allocated(cpu);
  EXPECT_THROW(load(path, Device("sim:0")), OutOfMemoryError);
  EXPECT_EQ(memory::max_memory_allocated(cpu), host_before);
  std::remove(path.c_str());
}

TEST(CheckpointToDevice, LoadingToSimHoldsAtMostTwoStagingBuffersOfHostMemory) {
  manual_seed(3);
  const std::string path = temp_path("40m");
  const Tensor big = randn({10 << 20});  // 40 MiB, five staging chunks
  const Tensor small = randint(0, 1000, {3, 5}, TensorOptions().dtype(kInt64));
  save({{"big", big}, {"small", small}, {"empty", zeros({0, 4})}, {"scalar", tensor(2.5)}}, path);
  const Device cpu("cpu");
  memory::reset_peak_memory_stats(cpu);
  const int64_t host_before = memory::max_memory_allocated(cpu);
  const auto loaded = load(path, Device("sim:0"));
  const int64_t host_peak = memory::max_memory_allocated(cpu) - host_before;
  EXPECT_LE(host_peak, int64_t{16} << 20);  // two 8 MiB staging buffers, not 40 MiB
  EXPECT_GT(host_peak, 0);                   // (and the staging did go through the host allocator)
  ASSERT_EQ(loaded.keys(), (std::vector<std::string>{"big", "small", "empty", "scalar"}));
  for (const auto& [name, t] : loaded) EXPECT_EQ(t.device(), Device("sim:0")) << name;
  const Tensor back = loaded["big"].cpu();
  EXPECT_EQ(std::memcmp(back.data_ptr(), big.data_ptr(), big.nbytes()), 0);
  EXPECT_EQ(testing::values(loaded["small"]), testing::values(small));
  EXPECT_EQ(loaded["small"].dtype(), kInt64);
  EXPECT_EQ(loaded["empty"].shape(), (Shape{0, 4}));
  EXPECT_EQ(loaded["scalar"].dim(), 0);
  EXPECT_EQ(loaded["scalar"].item<float>(), 2.5f);
  std::remove(path.c_str());
}

// The checksum is taken from the staging buffer on the way to the device: damage is still found.
TEST(CheckpointToDevice, DamagedDataBoundForADeviceIsAnIOError) {
  const std::string path = temp_path("damaged");
  save({{"w", randn({3 << 20})}}, path);  // 12 MiB: the damage lies in the second chunk
  {
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fseek(f, 10 << 20, SEEK_SET), 0);
    const int c = std::fgetc(f);
    ASSERT_EQ(std::fseek(f, 10 << 20, SEEK_SET), 0);
    std::fputc(c ^ 0x10, f);
    std::fclose(f);
  }
  const int64_t sim_before = memory::memory_allocated(Device("sim:0"));
  try {
    load(path, Device("sim:0"));
    FAIL() << "no IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
  EXPECT_EQ(memory::memory_allocated(Device("sim:0")), sim_before);  // the device tensors went too
  std::remove(path.c_str());
}

TEST(CheckpointToDevice, ATruncatedFileBoundForADeviceIsAnIOError) {
  const std::string path = temp_path("cut");
  save({{"w", randn({1000})}}, path);
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 8);
  EXPECT_THROW(load(path, Device("sim:0")), IOError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace locus
