// No corruption of one or two bits anywhere in a file Locus wrote loads different tensors
// (Note [Checksum under two keys]); files other tools wrote, without a checksum, still load.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "locus/locus.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::read_file;
using testing::write_file;
std::string temp_path(const std::string& name) { return testing::temp_path("crc", name); }




const OrderedDict<std::string, Tensor>& originals() {
  static const OrderedDict<std::string, Tensor> t{{"w", tensor({1.5f, -2.0f, 3.25f})}, {"step", tensor({7L})}, {"b", tensor({true, false})}};
  return t;
}

// True when `got` holds exactly the original names, in order, dtypes, shapes and bytes.
bool identical(const OrderedDict<std::string, Tensor>& got) {
  if (got.keys() != originals().keys()) return false;
  for (const auto& [name, t] : originals()) {
    const Tensor g = got.at(name);
    if (g.dtype() != t.dtype() || !(g.shape() == t.shape()) || std::memcmp(g.data_ptr(), t.data_ptr(), t.nbytes()) != 0)
      return false;
  }
  return true;
}

// Loads `bytes`: 1 for an IOError, 0 for the original tensors; anything else fails the test.
int refused(const std::string& path, const std::string& bytes, const std::string& label) {
  write_file(path, bytes);
  try {
    const auto got = load(path);
    EXPECT_TRUE(identical(got)) << label << ": loaded different tensors";
    return 0;
  } catch (const IOError&) {
    return 1;
  }
}

std::string saved_bytes(const std::string& path) {
  save(originals(), path);
  return read_file(path);
}

TEST(ChecksumFlips, EverySingleBitFlipIsRefusedOrLoadsTheOriginals) {
  const std::string path = temp_path("one");
  const std::string bytes = saved_bytes(path);
  int refusals = 0, total = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      refusals += refused(path, flipped, "byte " + std::to_string(i) + " bit " + std::to_string(bit));
      ++total;
    }
  // Only flips in a checksum key's name (the other key still checks), an escape's hex case or
  // padding that stays whitespace can load; every data flip is refused.
  EXPECT_GT(refusals, total * 3 / 4);
}

TEST(ChecksumFlips, ThousandsOfRandomTwoBitFlipsAreRefusedOrLoadTheOriginals) {
  const std::string path = temp_path("two");
  const std::string bytes = saved_bytes(path);
  std::mt19937_64 rng(20261123);
  std::uniform_int_distribution<uint64_t> position(0, bytes.size() * 8 - 1);
  int refusals = 0;
  constexpr int kTrials = 3000;
  for (int trial = 0; trial < kTrials; ++trial) {
    const uint64_t a = position(rng);
    uint64_t b = position(rng);
    while (b == a) b = position(rng);
    std::string flipped = bytes;
    flipped[a / 8] = static_cast<char>(flipped[a / 8] ^ (1 << (a % 8)));
    flipped[b / 8] = static_cast<char>(flipped[b / 8] ^ (1 << (b % 8)));
    refusals += refused(path, flipped, "bits " + std::to_string(a) + " and " + std::to_string(b));
  }
  EXPECT_GT(refusals, kTrials * 3 / 4);
}

// The reported case: one flip in the name of the checksum's key (which used to turn the check
// off) and one in the data.
TEST(ChecksumFlips, AFlipInAChecksumKeysNamePlusOneInTheDataIsRefused) {
  const std::string path = temp_path("key_and_data");
  const std::string bytes = saved_bytes(path);
  for (const std::string key : {"\"locus.crc32\"", "\"locus.crc32.copy\""}) {
    const size_t at = bytes.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    std::string flipped = bytes;
    flipped[at + 3] = static_cast<char>(flipped[at + 3] ^ 0x01);   // "locus" -> "lncus"
    flipped[bytes.size() - 20] = static_cast<char>(flipped[bytes.size() - 20] ^ 0x04);  // in the data of w
    write_file(path, flipped);
    try {
      load(path);
      FAIL() << key << ": loaded";
    } catch (const IOError& e) {
      EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
    }
  }
}

TEST(ChecksumFlips, TheTwoKeysHoldTheSameChecksum) {
  const std::string bytes = saved_bytes(temp_path("keys"));
  const size_t first = bytes.find("\"locus.crc32\":\""), second = bytes.find("\"locus.crc32.copy\":\"");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  const std::string a = bytes.substr(first + 15, 8), b = bytes.substr(second + 20, 8);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
}

// A file as safetensors writers make it: no __metadata__, the header padded with spaces, the
// header's order (here not the data's) kept by load().
std::string foreign_file() {
  std::string header =
      R"({"z":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})";
  while ((header.size() + 8) % 8) header += ' ';
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[static_cast<size_t>(b)] = static_cast<char>(uint64_t{header.size()} >> (8 * b));
  const int64_t a = -3;
  const float z[2] = {0.25f, 8.0f};
  out += header;
  out.append(reinterpret_cast<const char*>(&a), 8);
  out.append(reinterpret_cast<const char*>(z), 8);
  return out;
}

TEST(ChecksumFlips, AFileWithoutChecksumFromAnotherWriterLoadsInHeaderOrder) {
  const std::string path = temp_path("foreign");
  write_file(path, foreign_file());
  for (const std::optional<Device> where : {std::optional<Device>(), std::optional<Device>(Device("sim:0"))}) {
    const auto got = load(path, where);
    ASSERT_EQ(got.keys(), (std::vector<std::string>{"z", "a"}));
    EXPECT_EQ(testing::values(got["z"]), (std::vector<double>{0.25, 8}));
    EXPECT_EQ(got["a"].dtype(), kInt64);
    EXPECT_EQ(testing::values(got["a"]), std::vector<double>{-3});
  }
}

// Files from Locus before the second key: checked against the one they have.
TEST(ChecksumFlips, AFileWithOnlyTheOlderSingleKeyIsStillChecked) {
  const std::string path = temp_path("old");
  std::string bytes = saved_bytes(path);
  const std::string copy_key = ",\"locus.crc32.copy\":\"";
  const size_t at = bytes.find(copy_key);
  ASSERT_NE(at, std::string::npos);
  // Rewrite the header as an older Locus wrote it: the second key's 30 bytes become padding.
  uint64_t n = 0;
  for (int b = 0; b < 8; ++b) n |= uint64_t{static_cast<unsigned char>(bytes[static_cast<size_t>(b)])} << (8 * b);
  std::string text = bytes.substr(8, n);
  const size_t len = copy_key.size() + 8 + 1;
  text.erase(at - 8, len);
  text.append(len, ' ');
  bytes.replace(8, n, text);
  ASSERT_EQ(bytes.find("locus.crc32.copy"), std::string::npos);
  EXPECT_EQ(refused(path, bytes, "older file"), 0);
  std::string damaged = bytes;
  damaged[damaged.size() - 1] = static_cast<char>(damaged[damaged.size() - 1] ^ 0x02);
  EXPECT_EQ(refused(path, damaged, "older file, damaged"), 1);
}

}  // namespace
}  // namespace locus
