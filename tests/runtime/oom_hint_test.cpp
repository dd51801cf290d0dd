// An out-of-memory error that would read as a contradiction ("Tried to allocate 4.00 MiB ... of
// which 4.00 MiB is free") says why in the same message (Note [Out-of-memory hints]).

#include <string>

#include "tests/test_util.h"

namespace locus {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// sim:0 with `capacity` bytes for one test, the configuration restored after it.
class SmallSimDevice : public ::testing::Test {
 protected:
  void SetUp() override { original_ = sim::config(); }
  void TearDown() override { sim::configure(original_); }
  void with_capacity(int64_t capacity) {
    sim::Config small = original_;
    small.memory_bytes = static_cast<uint64_t>(capacity);
    sim::configure(small);
  }
  // A float32 tensor of `bytes` on sim:0.
  static Tensor block(int64_t bytes) { return empty({bytes / 4}, Device("sim:0")); }
  sim::Config original_;
};

TEST_F(SmallSimDevice, OutOfMemoryExplainsTheSegmentRounding) {
  with_capacity(24 * kMiB);
  const Tensor big = block(20 * kMiB);  // one 20 MiB segment, 4 MiB left
  try {
    block(4 * kMiB);  // fits the free 4 MiB, but takes a new 20 MiB segment
    FAIL() << "no OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "sim out of memory. Tried to allocate 4.00 MiB. sim:0 has a total capacity of 24.00 MiB of which 4.00 MiB "
              "is free. 20.00 MiB is allocated by tensors and 0 bytes is reserved but unallocated. Hint: the allocator "
              "takes device memory in whole segments, and this request needed a new 20.00 MiB segment, more than the "
              "4.00 MiB free. Free tensors you no longer need, or use smaller batches.");
    EXPECT_EQ(e.segment(), uint64_t(20 * kMiB));
    EXPECT_EQ(e.requested(), uint64_t(4 * kMiB));
  }
  EXPECT_EQ(block(kMiB / 2).numel(), kMiB / 8);  // small blocks come from a 2 MiB segment, which fits
}

TEST_F(SmallSimDevice, OutOfMemoryNamesFragmentation) {
  with_capacity(24 * kMiB);
  Tensor a = block(6 * kMiB), b = block(6 * kMiB), c = block(6 * kMiB);  // one 20 MiB segment
  a = Tensor();
  c = Tensor();  // free: 6 MiB before b and 8 MiB after it, in the segment b still holds
  try {
    block(9 * kMiB);
    FAIL() << "no OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "sim out of memory. Tried to allocate 9.00 MiB. sim:0 has a total capacity of 24.00 MiB of which 4.00 MiB "
              "is free. 6.00 MiB is allocated by tensors and 14.00 MiB is reserved but unallocated. Hint: the 14.00 MiB "
              "reserved but unallocated is split into free blocks of segments that live tensors still use, none of "
              "which this request can use (fragmentation); empty_cache() cannot return them, freeing those tensors "
              "can. Free tensors you no longer need, or use smaller batches.");
  }
  b = Tensor();  // the segment is whole again and serves the request
  EXPECT_EQ(block(9 * kMiB).numel(), 9 * kMiB / 4);
}

TEST_F(SmallSimDevice, OutOfMemoryWithoutAPuzzleHasNoHint) {
  with_capacity(24 * kMiB);
  const Tensor big = block(20 * kMiB);
  try {
    block(12 * kMiB);  // plainly more than the 4 MiB free
    FAIL() << "no OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "sim out of memory. Tried to allocate 12.00 MiB. sim:0 has a total capacity of 24.00 MiB of which 4.00 "
              "MiB is free. 20.00 MiB is allocated by tensors and 0 bytes is reserved but unallocated. Free tensors you "
              "no longer need, or use smaller batches.");
  }
}

}  // namespace
}  // namespace locus
