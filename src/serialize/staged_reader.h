#pragma once
// Reading a checkpoint's data section straight into tensors on their device (Note [Loading
// without a host copy] in staged_reader.cpp).

#include <cstdint>
#include <cstdio>
#include <string>

#include "locus/tensor.h"

namespace locus::serialize {

/// Reads consecutive runs of a file into contiguous tensors on one device: directly for the
/// CPU, through two bounded host staging buffers (pinned where the device copies
/// asynchronously) for any other device. Not thread-safe; one per load.
class StagedReader {
 public:
  /// `file` is positioned at the first byte to read; `path` names it in errors; `largest` is
  /// the most bytes one read_into will ask for (the staging buffers need be no larger).
  StagedReader(std::FILE* file, std::string path, Device target, uint64_t largest);
  /// Waits for copies still reading the staging buffers before they are freed.
  ~StagedReader();
  StagedReader(const StagedReader&) = delete;
  StagedReader& operator=(const StagedReader&) = delete;

  /// Reads the next `t.nbytes()` bytes of the file into `t` (contiguous, on the target device),
  /// continuing the CRC-32 `crc` over them. IOError naming the file when it ends early.
  void read_into(const Tensor& t, uint32_t& crc);
  /// Waits until every byte read has reached its tensor.
  void finish();

  /// The size of each staging buffer: the most host memory a load holds beyond its tensors is
  /// twice this.
  static constexpr uint64_t kStagingBytes = uint64_t{8} << 20;

 private:
  void read_exactly(void* dst, uint64_t n);

  std::FILE* file_;
  std::string path_;
  Device target_;
  uint64_t capacity_;  // of each staging buffer
  bool asynchronous_ = false;
  Tensor staging_[2];  // allocated at the first read that needs them
  int next_ = 0;
};

}  // namespace locus::serialize
