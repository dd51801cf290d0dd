// The safetensors loader against damaged and hostile files: every rule of the format enforced
// with an IOError naming the file and the problem, sizes checked before allocation, and the
// checksum of Locus's own files catching flipped bits.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "locus/locus.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::read_file;
using testing::write_file;
std::string temp_path(const std::string& name) { return testing::temp_path("st", name); }




// A file from a header text and data bytes, as another writer would make it (no checksum).
std::string safetensors(const std::string& header, const std::string& data, int64_t claimed = -1) {
  const uint64_t n = claimed < 0 ? header.size() : static_cast<uint64_t>(claimed);
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[static_cast<size_t>(b)] = static_cast<char>(n >> (8 * b));
  return out + header + data;
}

// Expects load() of `bytes` to throw IOError "cannot load '<path>': <...problem...>".
void expect_refused(const std::string& bytes, const std::string& problem, const std::string& label) {
  const std::string path = temp_path("bad");
  write_file(path, bytes);
  try {
    load(path);
    ADD_FAILURE() << label << ": loaded";
  } catch (const IOError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cannot load '" + path + "': ", 0), 0u) << label << ": " << what;
    EXPECT_NE(what.find(problem), std::string::npos) << label << ": " << what;
  }
}

const std::string k8 = std::string(8, '\x01');  // data for two float32 values

TEST(SafetensorsChecks, AFileFromAnotherWriterLoads) {
  const std::string path = temp_path("plain");
  write_file(path, safetensors(R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b\"c":{"dtype":"I64","shape":[0],"data_offsets":[8,8]}}  )",
                               k8));
  const auto t = load(path);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at("a").shape(), Shape{2});
  EXPECT_EQ(t.at("b\"c").numel(), 0);
}

TEST(SafetensorsChecks, LayoutRules) {
  const auto entry = [](const std::string& name, int b, int e, const std::string& shape = "[2]") {
    return "\"" + name + "\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":[" + std::to_string(b) + "," +
           std::to_string(e) + "]}";
  };
  expect_refused(safetensors("{" + entry("a", 0, 8) + "," + entry("b", 0, 8) + "}", k8), "overlaps", "identical offsets");
  expect_refused(safetensors("{" + entry("a", 0, 8) + "," + entry("b", 4, 12) + "}", k8 + "1234"), "overlaps", "overlap");
  expect_refused(safetensors("{" + entry("a", 4, 12) + "}", k8 + "1234"), "a hole in the data", "hole at the start");
  expect_refused(safetensors("{" + entry("a", 0, 8) + "," + entry("b", 12, 20) + "}", k8 + "1234" + k8), "a hole", "hole");
  expect_refused(safetensors("{" + entry("a", 0, 8) + "}", k8 + "xx"), "2 bytes after the last tensor", "trailing bytes");
  expect_refused(safetensors("{" + entry("a", 0, 8) + "}", "1234"), "truncated: tensor 'a' ends at byte 8 of 4", "past the end");
  expect_refused(safetensors("{" + entry("a", 8, 0) + "}", k8), "end before they begin", "reversed");
  expect_refused(safetensors("{" + entry("a", 0, 4) + "}", "1234"), "do not match its shape", "size mismatch");
  // Shapes whose byte count wraps to 0 or to a small number.
  expect_refused(safetensors("{" + entry("a", 0, 0, "[4611686018427387904,4]") + "}", ""), "overflows", "wraps to 0");
  expect_refused(safetensors("{" + entry("a", 0, 8, "[2305843009213693953,8]") + "}", k8), "overflows", "wraps to 8");
  expect_refused(safetensors("{" + entry("a", 0, 8, "[1,-2]") + "}", k8), "expected a non-negative integer", "negative dim");
  expect_refused(safetensors("{" + entry("a", 0, 8, "[99999999999999999999]") + "}", k8), "larger than int64", "huge dim");
}

TEST(SafetensorsChecks, HeaderRules) {
  const std::string a = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  expect_refused(safetensors("{" + a + "}xyz", k8), "bytes after the header's JSON object", "garbage after JSON");
  expect_refused(safetensors("{" + a + "}{}", k8), "bytes after the header's JSON object", "two objects");
  expect_refused(safetensors(R"({"a\q":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", k8), "invalid escape", "bad escape");
  expect_refused(safetensors(R"({"a\ud800":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", k8), "surrogate", "lone surrogate");
  expect_refused(safetensors("{\"a\x01\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", k8), "control character", "raw control");
  expect_refused(safetensors("{" + a + "," + a + "}", k8 + k8), "appears twice", "duplicate name");
  expect_refused(safetensors(R"({"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", k8), "twice", "duplicate key");
  expect_refused(safetensors(R"({"a":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", k8), "dtype 'Q7'", "unknown dtype");
  expect_refused(safetensors(R"({"a":{"dtype":"F32","shape":[2]}})", k8), "lacks data_offsets", "missing offsets");
  expect_refused(safetensors(R"({"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", k8), "expected an integer", "float dim");
  expect_refused(safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", k8), "unknown field 'x'", "extra field");
  expect_refused(safetensors(R"({"__metadata__":{"k":1}})", ""), "expected '\"'", "non-string metadata");
  expect_refused(safetensors("[]", ""), "expected '{'", "not an object");
  // Sizes before allocation: a length beyond the file, or beyond the format's cap, allocates nothing.
  expect_refused(safetensors("{}", "", int64_t{1} << 40), "the header claims 1099511627776 bytes", "header past the end");
  expect_refused(safetensors("{}", "", -1).substr(0, 5), "shorter than the 8-byte header length", "short file");
}

TEST(SafetensorsChecks, PathsThatAreNotFilesAreIOErrors) {
  try {
    load(::testing::TempDir());
    ADD_FAILURE();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("it is a directory, not a file"), std::string::npos) << e.what();
  }
  try {
    load(temp_path("never_written"));
    ADD_FAILURE();
  } catch (const IOError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot load '" + temp_path("never_written") + "': no such file");
  }
  EXPECT_THROW(save({{"a", ones({2})}}, ::testing::TempDir() + "/no/such/dir/x.safetensors"), IOError);
  EXPECT_THROW(save({{"__metadata__", ones({2})}}, temp_path("meta")), ValueError);
}

// Every bit of a file Locus wrote, flipped in turn: the load throws IOError or (a flip in the
// name of one of the two checksum keys, the other still checking) returns exactly the tensors
// written. tests/serialize/checksum_flips_test.cpp adds two-bit flips.
TEST(SafetensorsChecks, EveryFlippedBitIsCaughtOrHarmless) {
  const std::string path = temp_path("flip");
  const std::map<std::string, Tensor> original = {{"w", tensor({1.5f, -2.0f, 3.25f})}, {"step", tensor({7L})}};
  save(original, path);
  const std::string bytes = read_file(path);
  int refused = 0, harmless = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      write_file(path, flipped);
      try {
        const auto got = load(path);
        ASSERT_EQ(got.size(), original.size()) << "byte " << i << " bit " << bit;
        for (const auto& [name, t] : original) {
          ASSERT_TRUE(got.count(name)) << "byte " << i << " bit " << bit;
          ASSERT_EQ(got.at(name).dtype(), t.dtype()) << "byte " << i << " bit " << bit;
          ASSERT_EQ(testing::values(got.at(name)), testing::values(t)) << "byte " << i << " bit " << bit;
        }
        ++harmless;
      } catch (const IOError&) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, harmless * 5);  // the keys' names are 27 of the file's 212 bytes
}

// Truncation at every 1/64 of a larger file.
TEST(SafetensorsChecks, EveryTruncationIsAnIOError) {
  const std::string path = temp_path("trunc");
  save({{"a", randn({64, 64})}, {"b", randint(0, 9, {100})}}, path);
  const std::string bytes = read_file(path);
  for (int k = 0; k < 64; ++k) {
    write_file(path, bytes.substr(0, bytes.size() * static_cast<size_t>(k) / 64));
    EXPECT_THROW(load(path), IOError) << "cut at " << k << "/64";
  }
  write_file(path, bytes);
  EXPECT_EQ(load(path).size(), 2u);
}

TEST(SafetensorsChecks, NamesWithQuotesAndUnicodeRoundTrip) {
  const std::string path = temp_path("names");
  const std::map<std::string, Tensor> named = {{"a\"b\\c", ones({1})}, {"tab\there", zeros({2})}, {"\xc3\xa9t\xc3\xa9", ones({3})}};
  save(named, path);
  const auto got = load(path);
  ASSERT_EQ(got.size(), 3u);
  for (const auto& [name, t] : named) EXPECT_EQ(testing::values(got.at(name)), testing::values(t)) << name;
}

}  // namespace
}  // namespace locus
