// The IDX reader and its errors, TensorDataset, and the DataLoader's batching rules.

#include <zlib.h>

#include <fstream>
#include <set>
#include <stdexcept>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

std::string write_file(const std::string& name, const std::vector<unsigned char>& bytes, bool gzip) {
  const std::string path = ::testing::TempDir() + "/" + name;
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
  }
  return path;
}

TEST(Idx, ReadsRawAndGzipAndBigEndianTypes) {
  const std::vector<unsigned char> u8{0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 255};
  for (bool gz : {false, true}) {
    const Tensor t = data::read_idx(write_file(gz ? "u8.gz" : "u8", u8, gz));
    EXPECT_EQ(t.dtype(), kUInt8);
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(values(t), (std::vector<double>{1, 2, 3, 4, 5, 255}));
  }
  const std::vector<unsigned char> i32{0, 0, 0x0C, 1, 0, 0, 0, 2, 0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0xFE};
  EXPECT_EQ(values(data::read_idx(write_file("i32", i32, false))), (std::vector<double>{256, -2}));
}

TEST(Idx, BadFilesNameTheFileAndTheProblem) {
  const auto message = [](const std::string& path) {
    try {
      data::read_idx(path);
    } catch (const IOError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string truncated = write_file("trunc.gz", {0, 0, 0x08, 1, 0, 0, 0, 10, 1, 2, 3}, true);
  EXPECT_EQ(message(truncated), "cannot read IDX file '" + truncated +
                                    "': truncated: the header promises shape [10] of 1-byte elements, the file has 3 bytes of data");
  const std::string bad_magic = write_file("magic", {7, 7, 8, 1, 0, 0, 0, 0}, false);
  EXPECT_NE(message(bad_magic).find("IDX magic"), std::string::npos);
  EXPECT_NE(message(::testing::TempDir() + "/absent.idx").find("no such file"), std::string::npos);
  // A gzip stream cut in the middle.
  std::vector<unsigned char> big{0, 0, 0x08, 1, 0, 1, 0, 0};
  big.resize(8 + 65536, 7);
  const std::string whole = write_file("whole.gz", big, true);
  std::ifstream in(whole, std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = write_file("cut.gz", std::vector<unsigned char>(gz.begin(), gz.begin() + static_cast<long>(gz.size() / 2)), false);
  EXPECT_NE(message(cut).find(cut), std::string::npos);
  EXPECT_THROW(data::load_mnist(::testing::TempDir() + "/nowhere", true), IOError);
}

// Regression: a header whose dims multiply past 2^64 wrapped to a small count, and the reader
// copied (and, for multi-byte types, byte-swapped) past the end of its buffer.
TEST(Idx, HeadersWhoseSizeWrapsAreRejectedRawAndGzip) {
  const auto expect_io_error = [](const std::string& path, const std::string& fragment) {
    try {
      data::read_idx(path);
      ADD_FAILURE() << path << " was accepted";
    } catch (const IOError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  for (bool gz : {false, true}) {
    const std::string tag = gz ? ".gz" : "";
    // 65536^4 = 2^64 elements: the product wraps to exactly 0.
    expect_io_error(write_file("wrap0" + tag, {0, 0, 0x08, 4, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, gz), "truncated");
    // (2^32 - 1)^2 int32 elements with 8 bytes of data: 4-byte copies would run far past the buffer.
    expect_io_error(write_file("wrap_i32" + tag, {0, 0, 0x0C, 2, 255, 255, 255, 255, 255, 255, 255, 255, 1, 2, 3, 4, 5, 6, 7, 8}, gz),
                    "truncated");
    // 2^32 - 1 int16 elements, 2 bytes present.
    expect_io_error(write_file("big_i16" + tag, {0, 0, 0x0B, 1, 255, 255, 255, 255, 1, 2}, gz), "truncated");
    // Header shorter than its dims.
    expect_io_error(write_file("short" + tag, {0, 0, 0x08, 3, 0, 0, 0, 1}, gz), "inside the header");
    // An empty tensor whose strides cannot be represented.
    expect_io_error(write_file("empty_huge" + tag,
                               {0, 0, 0x08, 4, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0}, gz),
                    "too large");
  }
  // An empty but well-formed file still loads.
  EXPECT_EQ(data::read_idx(write_file("empty_ok", {0, 0, 0x08, 2, 0, 0, 0, 0, 0, 0, 0, 3}, false)).shape(), (Shape{0, 3}));
}

std::shared_ptr<data::TensorDataset> numbers(int64_t n) {
  return std::make_shared<data::TensorDataset>(arange(0, n, 1, kFloat32).view({n, 1}), arange(n));
}

TEST(DataLoader, BatchesShuffleDropLastAndWorkers) {
  auto ds = numbers(10);
  data::DataLoaderOptions o;
  o.batch_size(4);
  data::DataLoader plain(ds, o);
  EXPECT_EQ(plain.size(), 3);
  std::vector<int64_t> sizes;
  std::vector<double> seen;
  for (const data::Example<>& b : plain) {
    sizes.push_back(b.data.size(0));
    for (double v : values(b.target)) seen.push_back(v);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(seen, (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  o.drop_last(true);
  o.shuffle(true);
  o.seed(7);
  auto epoch_order = [&](data::DataLoaderOptions opts, int epochs) {
    data::DataLoader loader(ds, opts);
    std::vector<std::vector<double>> out;
    for (int e = 0; e < epochs; ++e) {
      std::vector<double> order;
      for (const data::Example<>& b : loader) {
        EXPECT_EQ(b.data.size(0), 4);
        EXPECT_EQ(values(b.data.view({-1})), values(b.target));  // rows stay paired
        for (double v : values(b.target)) order.push_back(v);
      }
      out.push_back(order);
    }
    return out;
  };
  const auto a = epoch_order(o, 2);
  EXPECT_EQ(a[0].size(), 8u);
  EXPECT_NE(a[0], a[1]);  // a new permutation each epoch
  EXPECT_EQ(epoch_order(o, 2), a);  // same seed, same orders
  o.workers(3);
  EXPECT_EQ(epoch_order(o, 2), a);  // workers change nothing but speed
  o.device(Device("sim:1"));
  o.pin_memory(true);
  data::DataLoader on_device(ds, o);
  for (const data::Example<>& b : on_device) {
    EXPECT_EQ(b.data.device(), Device("sim:1"));
    EXPECT_EQ(b.target.device(), Device("sim:1"));
  }
  EXPECT_THROW(data::DataLoader(ds, {0}), ValueError);
}

// Example i is {i, i}; get(throw_at) throws.
class Throwing : public data::Dataset {
 public:
  explicit Throwing(int64_t throw_at) : throw_at_(throw_at) {}
  int64_t size() const override { return 12; }
  data::Example<> get(int64_t index) const override {
    if (index == throw_at_) throw std::out_of_range("bad row " + std::to_string(index));
    return {tensor(index), tensor(index)};
  }

 private:
  int64_t throw_at_;
};

TEST(DataLoader, WorkersRethrowInOrderAndStopOnDestruction) {
  for (const size_t workers : {0u, 2u}) {
    data::DataLoader loader(std::make_shared<Throwing>(5), data::DataLoaderOptions(2).workers(workers).max_jobs(3));
    std::vector<double> firsts;
    try {
      for (const data::Example<>& b : loader) firsts.push_back(values(b.target)[0]);
      FAIL() << "no exception";
    } catch (const std::out_of_range& e) {
      EXPECT_STREQ(e.what(), "bad row 5");
    }
    EXPECT_EQ(firsts, (std::vector<double>{0, 2}));
  }
  data::DataLoader early(std::make_shared<Throwing>(-1), data::DataLoaderOptions(1).workers(3));
  for (const data::Example<>& b : early)
    if (values(b.target)[0] == 1) break;
  for (const data::Example<>& b : early) {  // a new epoch abandons the last one
    EXPECT_EQ(values(b.target)[0], 0);
    break;
  }
  EXPECT_THROW(data::DataLoader(numbers(3), data::DataLoaderOptions(2).max_jobs(0)), ValueError);
}

TEST(DataLoader, FashionMnistWhenInstalled) {
  if (!std::ifstream(std::string(data::kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto test = data::load_mnist(data::kFashionMnistDir, false);
  EXPECT_EQ(test->size(), 10000);
  EXPECT_EQ(test->data().shape(), (Shape{10000, 784}));
  EXPECT_GE(min(test->data()).item<float>(), 0.f);
  EXPECT_LE(max(test->data()).item<float>(), 1.f);
  EXPECT_EQ(max(test->targets()).item<int64_t>(), 9);
}

}  // namespace
}  // namespace locus
