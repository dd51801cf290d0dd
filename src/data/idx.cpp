// The IDX reader (MNIST's file format) and the MNIST / Fashion-MNIST loader.

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "locus/data.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"

namespace locus::data {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw IOError("cannot read IDX file '" + path + "': " + problem);
}

// The whole file, decompressed when it is gzip (zlib reads raw files through the same calls).
std::vector<unsigned char> read_all(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail(path, std::filesystem::exists(path) ? "it cannot be opened" : "no such file");
  std::vector<unsigned char> bytes;
  unsigned char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      const std::string msg = gzerror(f, &code);
      gzclose(f);
      fail(path, "decompression failed (" + msg + "); the file is corrupt or truncated");
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  gzclose(f);
  return bytes;
}

uint32_t big_endian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

Tensor read_idx(const std::string& path) {
  const std::vector<unsigned char> bytes = read_all(path);
  if (bytes.size() < 4) fail(path, "it is " + std::to_string(bytes.size()) + " bytes long, shorter than the 4-byte header");
  if (bytes[0] != 0 || bytes[1] != 0) fail(path, "it does not start with the IDX magic (two zero bytes)");
  const unsigned type = bytes[2], ndim = bytes[3];
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
  const size_t header = 4 + 4 * size_t{ndim};
  if (bytes.size() < header) fail(path, "truncated inside the header");
  // The element count is checked against the bytes actually present before anything is sized
  // from it: a product that wraps once made a 16-byte file "hold" 2^64 elements, and the copy
  // below read far past the buffer.
  Shape shape;
  const size_t data_bytes = bytes.size() - header;
  size_t count = 1;
  bool overflow = false;
  for (unsigned d = 0; d < ndim; ++d) {
    const uint32_t n = big_endian32(&bytes[4 + 4 * d]);
    shape.push_back(n);
    overflow = overflow || __builtin_mul_overflow(count, size_t{n}, &count);
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) count = 0, overflow = false;
  if (overflow || count > data_bytes / item) {
    std::ostringstream os;
    os << "truncated: the header promises shape " << shape << " of " << item << "-byte elements, the file has "
       << data_bytes << " bytes of data";
    fail(path, os.str());
  }
  if (data_bytes > count * item)
    fail(path, std::to_string(data_bytes - count * item) + " bytes after the data the header describes");
  Tensor out;
  try {
    out = empty(shape, dtype);
  } catch (const ShapeError& e) {  // an empty shape whose strides cannot be represented
    fail(path, e.what());
  }
  const unsigned char* src = bytes.data() + header;
  auto* dst = static_cast<unsigned char*>(out.data_ptr());
  if (item == 1) {
    if (count) std::memcpy(dst, src, count);  // an empty tensor may have no buffer at all
  } else {
    for (size_t i = 0; i < count; ++i) {
      const unsigned char* e = src + i * item;
      for (size_t b = 0; b < item; ++b) dst[i * item + b] = e[item - 1 - b];  // big-endian to host
    }
  }
  return out;
}

std::shared_ptr<TensorDataset> load_mnist(const std::string& dir, bool train) {
  const std::string prefix = dir + "/" + (train ? "train" : "t10k");
  auto find = [&](const std::string& stem) {
    for (const std::string& p : {prefix + stem + ".gz", prefix + stem})
      if (std::filesystem::exists(p)) return p;
    throw IOError("MNIST files not found: neither '" + prefix + stem + ".gz' nor '" + prefix + stem +
                  "' exists (install Debian's dataset-fashion-mnist, or pass the directory that holds them)");
  };
  const Tensor images = read_idx(find("-images-idx3-ubyte"));
  const Tensor labels = read_idx(find("-labels-idx1-ubyte"));
  if (images.dim() != 3 || labels.dim() != 1 || images.size(0) != labels.size(0)) {
    std::ostringstream os;
    os << "MNIST files in '" << dir << "' disagree: images " << images.shape() << ", labels " << labels.shape();
    throw IOError(os.str());
  }
  const int64_t n = images.size(0);
  Tensor x = div(images.to(kFloat32), 255.0).view({n, images.size(1) * images.size(2)});
  return std::make_shared<TensorDataset>(x, labels.to(kInt64));
}

}  // namespace locus::data
