#pragma once
// Files and small devices for the checkpoint and fault tests: per-test temporary paths, whole-file
// reads and writes, and a sim device of a chosen capacity.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "locus/locus.h"

namespace locus::testing {

/// A path in the test's temporary directory, unique per test, process and `prefix` (ctest runs
/// the tests of one file in parallel processes).
inline std::string temp_path(const std::string& prefix, const std::string& name) {
  return ::testing::TempDir() + "/locus_" + prefix + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
         "_" + std::to_string(::getpid()) + "_" + name;
}

/// A file's bytes.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Replaces a file's bytes.
inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Sim devices of `bytes` capacity for the object's lifetime.
class SmallSim {
 public:
  explicit SmallSim(uint64_t bytes) : original_(sim::config()) {
    sim::Config small = original_;
    small.memory_bytes = bytes;
    sim::configure(small);
  }
  ~SmallSim() { sim::configure(original_); }
  SmallSim(const SmallSim&) = delete;
  SmallSim& operator=(const SmallSim&) = delete;

 private:
  sim::Config original_;
};

}  // namespace locus::testing
