// The Locus call for each op name the golden files use.

#pragma once

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tests/golden/golden_file.h"

namespace locus::golden {

/// What an op call sees: the case (for its arguments), its input tensors on the device, the device.
struct Ctx {
  const Case& c;
  std::vector<Tensor> in;
  Device dev;

  const Tensor& x(size_t k) const { return in.at(k); }
  /// The input called `name`, or an undefined tensor when the case has none (an optional bias,
  /// weight, mask or running statistic).
  Tensor named(const char* name) const {
    for (size_t k = 0; k < c.ins.size(); ++k)
      if (c.ins[k].name == name) return x(k);
    return Tensor();
  }
  bool has(const char* key) const { return c.args.count(key) != 0; }
  const std::string& str(const char* key) const {
    auto it = c.args.find(key);
    if (it == c.args.end()) throw std::runtime_error(std::string("missing argument ") + key);
    return it->second;
  }
  int64_t i64(const char* key, int64_t fallback = 0) const {
    return has(key) ? std::strtoll(str(key).c_str(), nullptr, 10) : fallback;
  }
  double f64(const char* key, double fallback = 0) const {
    return has(key) ? std::strtod(str(key).c_str(), nullptr) : fallback;
  }
  bool flag(const char* key) const { return has(key) && str(key) == "1"; }
  /// A Python number "i:3", "f:0x1.4p+1" or "b:1" as the Scalar of the same kind.
  Scalar num(const char* key) const {
    const std::string& v = str(key);
    const std::string body = v.substr(2);
    if (v[0] == 'i') return Scalar(static_cast<int64_t>(std::strtoll(body.c_str(), nullptr, 10)));
    if (v[0] == 'b') return Scalar(body == "1");
    return Scalar(std::strtod(body.c_str(), nullptr));
  }
  std::optional<Scalar> opt_num(const char* key) const {
    if (!has(key)) return std::nullopt;
    return num(key);
  }
  Shape list(const char* key) const { return parse_list(str(key)); }
  std::optional<DType> dtype() const {
    if (!has("dtype")) return std::nullopt;
    return parse_dtype(str("dtype"));
  }
  TensorOptions options() const {
    TensorOptions o = TensorOptions().device(dev);
    if (auto d = dtype()) o = o.dtype(*d);
    return o;
  }
  nn::Reduction reduction() const {
    if (!has("reduction") || str("reduction") == "mean") return nn::Reduction::Mean;
    if (str("reduction") == "sum") return nn::Reduction::Sum;
    if (str("reduction") == "none") return nn::Reduction::None;
    throw std::runtime_error("unknown reduction " + str("reduction"));
  }
  std::optional<std::string_view> rounding() const {
    if (!has("rounding")) return std::nullopt;
    return std::string_view(str("rounding"));
  }
};

using Outs = std::vector<Tensor>;
using OpFn = std::function<Outs(const Ctx&)>;

/// Every op name of the files with the Locus call that replays it: golden_ops.cpp's table and
/// every OpRegistrar's.
const std::map<std::string, OpFn>& ops();

/// Adds the calls of a new family from its own file (tests/golden/golden_ops_<family>.cpp):
/// `const OpRegistrar registered{{"topk", [](const Ctx& c) -> Outs { ... }}, ...};` at namespace
/// scope. A name registered twice is an error at start-up.
struct OpRegistrar {
  OpRegistrar(std::initializer_list<std::pair<const std::string, OpFn>> calls);
};

}  // namespace locus::golden
