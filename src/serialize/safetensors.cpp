// The safetensors format: an 8-byte little-endian header length, a JSON header mapping each
// name to {dtype, shape, data_offsets}, then the raw little-endian data.

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/serialize.h"

namespace locus {
namespace {

const char* st_dtype(DType d) {
  switch (d) {
    case DType::Bool: return "BOOL";
    case DType::UInt8: return "U8";
    case DType::Int8: return "I8";
    case DType::Int16: return "I16";
    case DType::Int32: return "I32";
    case DType::Int64: return "I64";
    case DType::Float16: return "F16";
    case DType::BFloat16: return "BF16";
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
  }
  return "F32";
}

std::optional<DType> from_st_dtype(const std::string& s) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == st_dtype(static_cast<DType>(i))) return static_cast<DType>(i);
  return std::nullopt;
}

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw IOError("cannot load '" + path + "': " + problem);
}

// A minimal reader for the header's JSON: an object of objects with strings, integer arrays.
struct Cursor {
  const std::string& s;
  size_t i = 0;
  const std::string& path;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(path, std::string("malformed header: expected '") + c + "' at byte " + std::to_string(i));
  }
  std::string str() {
    expect('"');
    std::string out;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      out += s[i++];
    }
    expect('"');
    return out;
  }
  int64_t integer() {
    ws();
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(s.substr(i, 24), &used);
    } catch (...) {
      fail(path, "malformed header: expected a number at byte " + std::to_string(i));
    }
    i += used;
    return v;
  }
  void skip_value() {  // __metadata__ and unknown fields
    ws();
    if (eat('"')) {
      --i;
      str();
    } else if (eat('{') || eat('[')) {
      int depth = 1;
      bool in_str = false;
      while (i < s.size() && depth) {
        const char c = s[i++];
        if (in_str) { if (c == '\\') ++i; else if (c == '"') in_str = false; }
        else if (c == '"') in_str = true;
        else if (c == '{' || c == '[') ++depth;
        else if (c == '}' || c == ']') --depth;
      }
    } else {
      while (i < s.size() && s[i] != ',' && s[i] != '}') ++i;
    }
  }
};

}  // namespace

void save(const std::map<std::string, Tensor>& tensors, const std::string& path) {
  std::ostringstream header;
  std::vector<Tensor> hosts;
  size_t offset = 0;
  header << "{";
  bool first = true;
  for (const auto& [name, t] : tensors) {
    const Tensor h = t.detach().cpu().contiguous();
    // A host read: a non-blocking device-to-host copy into `h` must land first (Note [Host
    // reads wait]); the untyped pointer below does not wait by itself.
    h.impl()->storage()->wait_for_pending_work();
    hosts.push_back(h);
    header << (first ? "" : ",") << "\"" << name << "\":{\"dtype\":\"" << st_dtype(h.dtype()) << "\",\"shape\":[";
    for (int64_t d = 0; d < h.dim(); ++d) header << (d ? "," : "") << h.size(d);
    header << "],\"data_offsets\":[" << offset << "," << offset + h.nbytes() << "]}";
    offset += h.nbytes();
    first = false;
  }
  header << "}";
  std::string text = header.str();
  while (text.size() % 8) text += ' ';  // data starts 8-byte aligned
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IOError("cannot save to '" + path + "': cannot create '" + tmp + "'");
    uint64_t n = text.size();
    unsigned char len[8];
    for (int b = 0; b < 8; ++b) len[b] = static_cast<unsigned char>(n >> (8 * b));
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const Tensor& h : hosts) out.write(static_cast<const char*>(h.data_ptr()), static_cast<std::streamsize>(h.nbytes()));
    out.flush();
    if (!out) throw IOError("cannot save to '" + path + "': write failed (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IOError("cannot save to '" + path + "': " + ec.message());
}

std::map<std::string, Tensor> load(const std::string& path, std::optional<Device> map_location) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::filesystem::exists(path) ? "it cannot be opened" : "no such file");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 8) fail(path, "truncated: shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int b = 0; b < 8; ++b) n |= uint64_t{static_cast<unsigned char>(bytes[static_cast<size_t>(b)])} << (8 * b);
  if (n > bytes.size() - 8) fail(path, "truncated: the header claims " + std::to_string(n) + " bytes");
  const std::string header = bytes.substr(8, n);
  const size_t data_start = 8 + n, data_size = bytes.size() - data_start;
  std::map<std::string, Tensor> out;
  Cursor c{header, 0, path};
  c.expect('{');
  if (!c.eat('}')) {
    do {
      const std::string name = c.str();
      c.expect(':');
      if (name == "__metadata__") {
        c.skip_value();
        continue;
      }
      std::optional<DType> dtype;
      Shape shape;
      int64_t begin = -1, end = -1;
      c.expect('{');
      do {
        const std::string key = c.str();
        c.expect(':');
        if (key == "dtype") {
          const std::string d = c.str();
          dtype = from_st_dtype(d);
          if (!dtype) fail(path, "tensor '" + name + "' has unsupported dtype " + d);
        } else if (key == "shape") {
          c.expect('[');
          if (!c.eat(']')) {
            do shape.push_back(c.integer());
            while (c.eat(','));
            c.expect(']');
          }
        } else if (key == "data_offsets") {
          c.expect('[');
          begin = c.integer();
          c.expect(',');
          end = c.integer();
          c.expect(']');
        } else {
          c.skip_value();
        }
      } while (c.eat(','));
      c.expect('}');
      if (!dtype || begin < 0) fail(path, "tensor '" + name + "' lacks dtype or data_offsets");
      const auto expected = static_cast<int64_t>(static_cast<size_t>(shape.numel()) * itemsize(*dtype));
      if (end - begin != expected) fail(path, "tensor '" + name + "' has data_offsets that do not match its shape");
      if (static_cast<size_t>(end) > data_size)
        fail(path, "truncated: tensor '" + name + "' ends at byte " + std::to_string(end) + " of " +
                       std::to_string(data_size) + " bytes of data");
      Tensor t = empty(shape, *dtype);
      std::memcpy(t.data_ptr(), bytes.data() + data_start + begin, static_cast<size_t>(expected));
      out[name] = map_location ? t.to(*map_location) : t;
    } while (c.eat(','));
    c.expect('}');
  }
  return out;
}

}  // namespace locus
