// The LOCUS_* environment variables and index arguments: out-of-range or non-numeric values are
// a ValueError / IndexError naming the value, never undefined behaviour or a silent 0.

#include <gtest/gtest.h>

#include <cstdlib>

#include "locus/locus.h"

namespace locus {
namespace {

// Restores LOCUS_SIM_MEMORY and the sim configuration when the test ends.
class SimMemoryEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("LOCUS_SIM_MEMORY")) saved_ = v, had_ = true;
    original_ = sim::config();
  }
  void TearDown() override {
    if (had_) ::setenv("LOCUS_SIM_MEMORY", saved_.c_str(), 1);
    else ::unsetenv("LOCUS_SIM_MEMORY");
    sim::configure(original_);
  }
  std::string saved_;
  bool had_ = false;
  sim::Config original_;
};

TEST_F(SimMemoryEnv, OutOfRangeAndFractionalSizesAreValueErrors) {
  for (const char* bad : {"1e30", "inf", "-inf", "nan", "0.5", "0", "-1", "1.5", "abc", "4X", "", "1e19", "0x10"}) {
    ::setenv("LOCUS_SIM_MEMORY", bad, 1);
    try {
      sim::reset_config();
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ValueError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("LOCUS_SIM_MEMORY='") + bad + "' is not a size", 0), 0u) << e.what();
    }
  }
}

TEST_F(SimMemoryEnv, SizesWithSuffixes) {
  const std::pair<const char*, uint64_t> good[] = {{"4096", 4096}, {"512M", uint64_t{512} << 20}, {"0.5G", uint64_t{512} << 20},
                                                   {"2GiB", uint64_t{2} << 30}, {"1K", 1024}};
  for (const auto& [text, bytes] : good) {
    ::setenv("LOCUS_SIM_MEMORY", text, 1);
    sim::reset_config();
    EXPECT_EQ(sim::config().memory_bytes, bytes) << text;
  }
}

// The units people write, with their usual meanings (Note [Byte sizes]): SI powers of 1000,
// IEC powers of 1024, a bare letter binary as before.
TEST_F(SimMemoryEnv, SizesWithTheUnitsPeopleWrite) {
  const std::pair<const char*, uint64_t> good[] = {
      {"64MB", 64000000},        {"64MiB", uint64_t{64} << 20},   {"64mb", 64000000},
      {"64 MB", 64000000},       {"64Mi", uint64_t{64} << 20},    {"1G", uint64_t{1} << 30},
      {"1GiB", uint64_t{1} << 30}, {"1GB", 1000000000},           {"1gib", uint64_t{1} << 30},
      {"2Gi", uint64_t{2} << 30}, {"500KB", 500000},              {"4096B", 4096},
      {"1.5GB", 1500000000},     {"1TB", 1000000000000},          {"1T", uint64_t{1} << 40},
      {"512m", uint64_t{512} << 20}};
  for (const auto& [text, bytes] : good) {
    ::setenv("LOCUS_SIM_MEMORY", text, 1);
    sim::reset_config();
    EXPECT_EQ(sim::config().memory_bytes, bytes) << text;
  }
}

TEST_F(SimMemoryEnv, NonsenseUnitsAreStillRefused) {
  for (const char* bad : {"64XB", "MB", "64 ", " 64", "64M B", "64MBB", "64MB ", "1e30MB", "0MB", "0.0001KB", "64Mib2",
                          "64 - MB", "5PB"}) {
    ::setenv("LOCUS_SIM_MEMORY", bad, 1);
    try {
      sim::reset_config();
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ValueError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("LOCUS_SIM_MEMORY='") + bad +
                    "' is not a size: expected a whole number of bytes from 1 to 2^62, or a number and a unit: KB, MB, "
                    "GB, TB (powers of 1000), KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024), e.g. 4294967296, 64MB, "
                    "64MiB or 4G");
    }
  }
}

TEST(SimDevice, NegativeIndexIsAnIndexError) {
  EXPECT_THROW(sim::set_device(-1), IndexError);
  EXPECT_THROW(sim::set_device(-7), IndexError);
  EXPECT_EQ(current_device(DeviceType::Sim).index(), 0);
}

}  // namespace
}  // namespace locus

#include "src/distributed/rendezvous_address.h"

namespace locus {
namespace {

TEST(RendezvousInput, RankVariablesAreDecimalIntegersInRange) {
  for (const char* bad : {"-1", "+1", " 1", "1x", "0x10", "2147483648", "99999999999999999999", ""}) {
    ::setenv("LOCUS_TEST_RANK", bad, 1);
    EXPECT_THROW(distributed::rank_variable(-1, "LOCUS_TEST_RANK"), ValueError) << "'" << bad << "'";
  }
  ::setenv("LOCUS_TEST_RANK", "2147483647", 1);
  EXPECT_EQ(distributed::rank_variable(-1, "LOCUS_TEST_RANK"), 2147483647);
  EXPECT_EQ(distributed::rank_variable(5, "LOCUS_TEST_RANK"), 5);
  ::unsetenv("LOCUS_TEST_RANK");
}

TEST(RendezvousInput, StoreUrls) {
  const auto redis = distributed::parse_store_url("redis://10.0.0.1:6380");
  EXPECT_EQ(redis.host, "10.0.0.1");
  EXPECT_EQ(redis.port, 6380);
  EXPECT_EQ(distributed::parse_store_url("redis://h").port, 6379);
  EXPECT_EQ(distributed::parse_store_url("file:///tmp/s").dir, "/tmp/s");
  for (const char* bad : {"redis://h:0", "redis://h:65536", "redis://h:", "redis://h:+1", "redis://:1", "redis://h:99999999999",
                          "file://", "tcp://h:1", "h:1"})
    EXPECT_THROW(distributed::parse_store_url(bad), ValueError) << bad;
}

}  // namespace
}  // namespace locus
