// A strict reader of the safetensors header: the subset of JSON the format uses (objects,
// strings, arrays of non-negative integers), rejecting anything else, so a damaged header is an
// IOError rather than a different tensor.

#include "src/serialize/safetensors_header.h"

#include <cstdio>
#include <set>

#include "locus/errors.h"

namespace locus::serialize {

void fail(const std::string& path, const std::string& problem) { throw IOError("cannot load '" + path + "': " + problem); }

const char* safetensors_dtype(DType d) noexcept {
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

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') out += '\\', out += ch;
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += ch;
  }
  return out + "\"";
}

namespace {

class Reader {
 public:
  Reader(const std::string& s, const std::string& path) : s_(s), path_(path) {}

  [[noreturn]] void error(const std::string& what) const {
    fail(path_, "malformed header: " + what + " at byte " + std::to_string(i_));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) error(std::string("expected '") + c + "'");
  }
  bool at_end() {
    ws();
    return i_ == s_.size();
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) error("unterminated string");
      const auto c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return out;
      if (c < 0x20) error("a control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (i_ >= s_.size()) error("unterminated escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': append_utf8(out, code_point()); break;
        default: error(std::string("an invalid escape '\\") + e + "'");
      }
    }
  }

  uint64_t integer() {
    ws();
    if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') error("expected a non-negative integer");
    if (s_[i_] == '0' && i_ + 1 < s_.size() && s_[i_ + 1] >= '0' && s_[i_ + 1] <= '9') error("a number with a leading zero");
    uint64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(s_[i_++] - '0');
      if (v > (uint64_t{INT64_MAX} - digit) / 10) error("a number larger than int64");
      v = v * 10 + digit;
    }
    if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) error("expected an integer");
    return v;
  }

 private:
  unsigned hex4() {
    if (i_ + 4 > s_.size()) error("a truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') v |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= static_cast<unsigned>(h - 'A' + 10);
      else error("an invalid \\u escape");
    }
    return v;
  }
  unsigned code_point() {
    const unsigned hi = hex4();
    if (hi >= 0xDC00 && hi <= 0xDFFF) error("a lone low surrogate");
    if (hi < 0xD800 || hi > 0xDBFF) return hi;
    if (i_ + 2 > s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u') error("a high surrogate without its low half");
    i_ += 2;
    const unsigned lo = hex4();
    if (lo < 0xDC00 || lo > 0xDFFF) error("a high surrogate without its low half");
    return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
  }
  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

DType dtype_named(const std::string& name, const std::string& tensor, const std::string& path) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == safetensors_dtype(static_cast<DType>(i))) return static_cast<DType>(i);
  fail(path, "tensor '" + tensor + "' has dtype '" + name + "', which Locus does not have");
}

TensorEntry tensor_entry(Reader& r, const std::string& name, const std::string& path) {
  TensorEntry t;
  t.name = name;
  std::set<std::string> keys;
  r.expect('{');
  if (r.eat('}')) fail(path, "tensor '" + name + "' lacks dtype, shape and data_offsets");
  do {
    const std::string key = r.string();
    r.expect(':');
    if (!keys.insert(key).second) fail(path, "tensor '" + name + "' has '" + key + "' twice");
    if (key == "dtype") {
      t.dtype = dtype_named(r.string(), name, path);
    } else if (key == "shape") {
      r.expect('[');
      if (!r.eat(']')) {
        do t.shape.push_back(static_cast<int64_t>(r.integer()));
        while (r.eat(','));
        r.expect(']');
      }
    } else if (key == "data_offsets") {
      r.expect('[');
      t.begin = r.integer();
      r.expect(',');
      t.end = r.integer();
      r.expect(']');
    } else {
      fail(path, "tensor '" + name + "' has an unknown field '" + key + "'");
    }
  } while (r.eat(','));
  r.expect('}');
  for (const char* needed : {"dtype", "shape", "data_offsets"})
    if (!keys.count(needed)) fail(path, "tensor '" + name + "' lacks " + needed);
  return t;
}

}  // namespace

Header parse_header(const std::string& text, const std::string& path) {
  Reader r(text, path);
  Header h;
  std::set<std::string> names;
  r.expect('{');
  if (!r.eat('}')) {
    do {
      const std::string name = r.string();
      r.expect(':');
      if (!names.insert(name).second) fail(path, "the name '" + name + "' appears twice in the header");
      if (name == "__metadata__") {
        r.expect('{');
        if (!r.eat('}')) {
          do {
            const std::string key = r.string();
            r.expect(':');
            if (h.metadata.count(key)) fail(path, "__metadata__ has '" + key + "' twice");
            h.metadata[key] = r.string();
          } while (r.eat(','));
          r.expect('}');
        }
        continue;
      }
      h.tensors.push_back(tensor_entry(r, name, path));
    } while (r.eat(','));
    r.expect('}');
  }
  if (!r.at_end()) r.error("bytes after the header's JSON object");
  return h;
}

}  // namespace locus::serialize
