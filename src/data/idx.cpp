// The IDX reader (MNIST's file format) and the MNIST / Fashion-MNIST loader.

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "locus/data.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/regular_file.h"

namespace locus::data {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw IOError("cannot read IDX file '" + path + "': " + problem);
}

// An IDX file opened through zlib, which reads raw files through the same calls.
class IdxFile {
 public:
  explicit IdxFile(const std::string& path) : path_(path) {
    file_size_ = detail::regular_file_size(path, [&](const std::string& why) { fail(path, why); });
    f_ = gzopen(path.c_str(), "rb");
    if (!f_) fail(path, "it cannot be opened");
    compressed_ = gzdirect(f_) == 0;
  }
  ~IdxFile() { gzclose(f_); }
  IdxFile(const IdxFile&) = delete;
  IdxFile& operator=(const IdxFile&) = delete;

  /// Up to `n` bytes into `dst`; how many arrived (fewer at the end of the file).
  size_t read(void* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - got, size_t{1} << 30));
      const int r = gzread(f_, static_cast<char*>(dst) + got, chunk);
      if (r < 0) {
        int code = 0;
        fail(path_, std::string("decompression failed (") + gzerror(f_, &code) + "); the file is corrupt or truncated");
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    return got;
  }
  /// The most bytes the file can hold once decompressed: its size when raw; for gzip, deflate's
  /// best ratio (1032:1) over its size, so a header promising more is refused before any
  /// allocation.
  uint64_t max_content_bytes() const { return compressed_ ? file_size_ * 1032 + 64 : file_size_; }

 private:
  std::string path_;
  gzFile f_ = nullptr;
  uint64_t file_size_ = 0;
  bool compressed_ = false;
};

uint32_t big_endian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

Tensor read_idx(const std::string& path) {
  IdxFile file(path);
  unsigned char magic[4];
  const size_t got = file.read(magic, 4);
  if (got < 4) fail(path, "it is " + std::to_string(got) + " bytes long, shorter than the 4-byte header");
  if (magic[0] != 0 || magic[1] != 0) fail(path, "it does not start with the IDX magic (two zero bytes)");
  const unsigned type = magic[2], ndim = magic[3];
  DType dtype;
  size_t item;
  switch (type) {
    case 0x08: dtype = kUInt8, item = 1; break;
    case 0x09: dtype = kInt8, item = 1; break;
    case 0x0B: dtype = kInt16, item = 2; break;
    case 0x0C: dtype = kInt32, item = 4; break;
    case 0x0D: dtype = kFloat32, item = 4; break;
    case 0x0E: dtype = kFloat64, item = 8; break;
    default: fail(path, "unknown element type code 0x" + std::to_string(type));
  }
  if (ndim == 0) fail(path, "the header declares 0 dimensions");
  std::vector<unsigned char> dims(4 * size_t{ndim});
  if (file.read(dims.data(), dims.size()) < dims.size()) fail(path, "truncated inside the header");
  // The byte count is checked for overflow and against what the file can hold before anything
  // is sized from it: a product that wraps once made a 16-byte file "hold" 2^64 elements.
  Shape shape;
  uint64_t bytes = item;
  bool overflow = false;
  for (unsigned d = 0; d < ndim; ++d) {
    const uint32_t n = big_endian32(&dims[4 * d]);
    shape.push_back(n);
    overflow = overflow || __builtin_mul_overflow(bytes, uint64_t{n}, &bytes);
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) bytes = 0, overflow = false;
  if (overflow || bytes > file.max_content_bytes()) {
    std::ostringstream os;
    os << "truncated: the header promises shape " << shape << " of " << item << "-byte elements, more than the file can hold";
    fail(path, os.str());
  }
  Tensor out;
  try {
    out = empty(shape, dtype);
  } catch (const ShapeError& e) {  // an empty shape whose strides cannot be represented
    fail(path, e.what());
  }
  auto* dst = static_cast<unsigned char*>(out.data_ptr());
  const size_t read = bytes ? file.read(dst, bytes) : 0;
  if (read < bytes) {
    std::ostringstream os;
    os << "truncated: the header promises shape " << shape << " of " << item << "-byte elements, the file has " << read
       << " bytes of data";
    fail(path, os.str());
  }
  unsigned char extra[4096];
  if (const size_t more = file.read(extra, sizeof extra)) {
    size_t trailing = more;
    while (const size_t k = file.read(extra, sizeof extra)) trailing += k;
    fail(path, std::to_string(trailing) + " bytes after the data the header describes");
  }
  if (item > 1)  // big-endian to host
    for (size_t i = 0; i < bytes / item; ++i) std::reverse(dst + i * item, dst + (i + 1) * item);
  return out;
}

std::shared_ptr<TensorDataset> load_mnist(const std::string& dir, bool train) {
  const datasets::MNIST mnist(dir, train ? datasets::MNIST::Mode::kTrain : datasets::MNIST::Mode::kTest);
  const int64_t n = mnist.images().size(0);
  return std::make_shared<TensorDataset>(mnist.images().view({n, -1}), mnist.targets());
}

}  // namespace locus::data
