// Differential test against PyTorch 1.13: replays the cases that tests/golden/generate.py
// recorded with PyTorch (tests/golden/<family>.txt.gz, format in tests/golden/README.md) on every
// device, one test per family. PyTorch is needed only to regenerate the files, never to run this.

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace locus {
namespace {

// ---- known differences ------------------------------------------------------------------------
//
// A case id pattern ('*' matches any run of characters) with its reason. kDeviations are
// differences Locus makes on purpose (docs/design.md, "Deviations from PyTorch", and the public
// headers). kFindings are differences nobody decided on: bugs to fix in Locus (or to move to
// kDeviations, with a line in docs/design.md), listed so that the suite passes meanwhile. The
// cases of both still run, and an entry none of whose cases differs any more fails the test, so
// that the entry goes with the fix. `devices` limits an entry to some devices (comma-separated,
// empty: all).

struct Known {
  const char* pattern;
  const char* reason;
  const char* devices = "";
};

const std::vector<Known> kDeviations = {
    {"softmax/dim*/uint8", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"softmax/dim*/int*", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"softmax/dim*/bool", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"log_softmax/dim*/uint8", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"log_softmax/dim*/int*", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"log_softmax/dim*/bool", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"where/uint8_condition_error",
     "elementwise.h: the condition must be bool (PyTorch 1.13 still takes uint8 with a deprecation warning)"},
    {"*/zero_division/*",
     "elementwise.h: integer division by zero gives 0 on cuda (raising would need a device-host wait per op)", "cuda:0"},
};

const std::vector<Known> kFindings = {};

// Cases that run into undefined behaviour inside Locus (found by the UBSan build, which aborts
// on it): findings too, but they are skipped in sanitizer builds so that the rest can run. Other
// builds run them (their values happen to match PyTorch's).
const std::vector<Known> kUndefinedInLocus = {};

constexpr bool sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// ---- the golden files -----------------------------------------------------------------------

struct TensorData {
  std::string name;
  DType dtype = kFloat32;
  Shape shape;
  std::string view;  // "", "t", "step2" or "expand"
  bool rg = false;
  std::vector<double> f;   // floating dtypes
  std::vector<int64_t> i;  // integer and bool dtypes
  int64_t numel() const { return static_cast<int64_t>(is_floating_point(dtype) ? f.size() : i.size()); }
};

struct Case {
  int line = 0;
  std::string id, op;
  std::map<std::string, std::string> args;
  std::vector<TensorData> ins;
  std::optional<TensorData> gout;
  std::vector<TensorData> outs, grads;
  bool err = false;
  std::string err_type, err_msg;
};

std::filesystem::path golden_dir() {
  if (const char* env = std::getenv("LOCUS_GOLDEN_DIR")) return env;
  std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
  if (here.is_absolute() || std::filesystem::exists(here / "elementwise.txt.gz")) return here;
  // A relative __FILE__ (a compiler cache rewriting paths): look upward from the working dir.
  for (auto dir = std::filesystem::current_path(); !dir.empty(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / "tests/golden/elementwise.txt.gz")) return dir / "tests/golden";
    if (dir == dir.parent_path()) break;
  }
  return here;
}

std::string read_gz(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return {};
  std::string data;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) data.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return data;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

DType parse_dtype(const std::string& s) {
  static const std::map<std::string, DType> m = {
      {"bool", kBool},   {"uint8", kUInt8},     {"int8", kInt8},         {"int16", kInt16},     {"int32", kInt32},
      {"int64", kInt64}, {"float16", kFloat16}, {"bfloat16", kBFloat16}, {"float32", kFloat32}, {"float64", kFloat64}};
  auto it = m.find(s);
  if (it == m.end()) throw std::runtime_error("unknown dtype " + s);
  return it->second;
}

Shape parse_list(const std::string& s) {  // "2,3" or "[2,3]"; "" and "[]" are empty
  Shape out;
  std::string body = s;
  if (!body.empty() && body.front() == '[') body = body.substr(1, body.size() - 2);
  size_t i = 0;
  while (i < body.size()) {
    size_t j = body.find(',', i);
    if (j == std::string::npos) j = body.size();
    out.push_back(std::strtoll(body.substr(i, j - i).c_str(), nullptr, 10));
    i = j + 1;
  }
  return out;
}

// "in|out|grad [name] dtype shape [key=value ...] values..."
TensorData parse_tensor(const std::vector<std::string>& tok, bool named) {
  TensorData t;
  size_t k = 1;
  if (named) t.name = tok[k++];
  t.dtype = parse_dtype(tok[k++]);
  t.shape = parse_list(tok[k++]);
  for (; k < tok.size() && tok[k].find('=') != std::string::npos; ++k) {
    const std::string& kv = tok[k];
    const std::string key = kv.substr(0, kv.find('=')), value = kv.substr(kv.find('=') + 1);
    if (key == "view") t.view = value;
    if (key == "rg") t.rg = value == "1";
  }
  for (; k < tok.size(); ++k) {
    if (is_floating_point(t.dtype))
      t.f.push_back(std::strtod(tok[k].c_str(), nullptr));
    else
      t.i.push_back(std::strtoll(tok[k].c_str(), nullptr, 10));
  }
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  if (n != t.numel()) throw std::runtime_error("value count does not match the shape");
  return t;
}

std::vector<Case> parse_family(const std::string& text) {
  std::vector<Case> cases;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> tok = split(line);
    try {
      if (tok[0] == "case") {
        Case c;
        c.line = number;
        c.id = tok.at(1);
        c.op = tok.at(2);
        for (size_t k = 3; k < tok.size(); ++k) {
          const size_t eq = tok[k].find('=');
          c.args[tok[k].substr(0, eq)] = eq == std::string::npos ? "" : tok[k].substr(eq + 1);
        }
        cases.push_back(std::move(c));
        continue;
      }
      if (cases.empty()) throw std::runtime_error("data before the first case");
      Case& c = cases.back();
      if (tok[0] == "in") {
        TensorData t = parse_tensor(tok, true);
        if (t.name == "gout")
          c.gout = std::move(t);
        else
          c.ins.push_back(std::move(t));
      } else if (tok[0] == "out") {
        c.outs.push_back(parse_tensor(tok, false));
      } else if (tok[0] == "grad") {
        c.grads.push_back(parse_tensor(tok, true));
      } else if (tok[0] == "err") {
        c.err = true;
        c.err_type = tok.at(1);
        const size_t at = line.find(c.err_type) + c.err_type.size();
        c.err_msg = at < line.size() ? line.substr(at + 1) : "";
      } else {
        throw std::runtime_error("unknown line kind");
      }
    } catch (const std::exception& e) {
      throw std::runtime_error("golden file line " + std::to_string(number) + ": " + e.what());
    }
  }
  return cases;
}

const std::vector<std::string>& family_names() {
  static const std::vector<std::string> names = {"elementwise", "reduce", "shape", "factories",
                                                 "autograd",    "losses", "optim"};
  return names;
}

/// The parsed cases of one family, read once per process.
const std::vector<Case>& family(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<Case>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(name);
  if (it == cache.end()) {
    const auto path = golden_dir() / (name + ".txt.gz");
    const std::string text = read_gz(path);
    if (text.empty()) throw std::runtime_error("cannot read " + path.string());
    it = cache.emplace(name, parse_family(text)).first;
  }
  return it->second;
}

// ---- tensors from and to the files ----------------------------------------------------------

template <class T>
void write_values(const TensorData& d, void* dst) {
  T* p = static_cast<T*>(dst);
  const int64_t n = d.numel();
  for (int64_t k = 0; k < n; ++k) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      p[k] = T(static_cast<float>(d.f[k]));
    else if constexpr (std::is_floating_point_v<T>)
      p[k] = static_cast<T>(d.f[k]);
    else if constexpr (std::is_same_v<T, bool>)
      p[k] = d.i[k] != 0;
    else
      p[k] = static_cast<T>(d.i[k]);
  }
}

/// The contiguous CPU tensor holding d's values.
Tensor host_tensor(const TensorData& d) {
  Tensor t = empty(d.shape, TensorOptions().dtype(d.dtype));
  if (t.numel() == 0) return t;
  void* p = t.data_ptr();
  switch (d.dtype) {
    case kBool:
      write_values<bool>(d, p);
      break;
    case kUInt8:
      write_values<uint8_t>(d, p);
      break;
    case kInt8:
      write_values<int8_t>(d, p);
      break;
    case kInt16:
      write_values<int16_t>(d, p);
      break;
    case kInt32:
      write_values<int32_t>(d, p);
      break;
    case kInt64:
      write_values<int64_t>(d, p);
      break;
    case kFloat16:
      write_values<Half>(d, p);
      break;
    case kBFloat16:
      write_values<BFloat16>(d, p);
      break;
    case kFloat32:
      write_values<float>(d, p);
      break;
    case kFloat64:
      write_values<double>(d, p);
      break;
  }
  return t;
}

/// d on `dev`, as the strided view d.view names (README.md): the op sees those strides.
Tensor device_tensor(const TensorData& d, Device dev) {
  const Tensor logical = host_tensor(d);
  Tensor t;
  if (d.view.empty()) {
    t = logical.to(dev, false, /*copy=*/true);
  } else if (d.view == "t") {
    t = logical.transpose(-2, -1).contiguous().to(dev).transpose(-2, -1);
  } else if (d.view == "step2") {
    Shape base_shape = d.shape;
    base_shape[base_shape.size() - 1] *= 2;
    Tensor base = d.dtype == kBool ? full(base_shape, true, TensorOptions().dtype(kBool))
                                   : full(base_shape, 99, TensorOptions().dtype(d.dtype));
    base.slice(-1, 0, std::nullopt, 2).copy_(logical);
    t = base.to(dev).slice(-1, 0, std::nullopt, 2);
  } else if (d.view == "expand") {
    t = logical.narrow(0, 0, 1).contiguous().to(dev).expand(d.shape);
  } else {
    throw std::runtime_error("unknown view " + d.view);
  }
  if (d.rg) t.requires_grad_();
  return t;
}

struct HostValues {
  DType dtype = kFloat32;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;
};

HostValues host_values(const Tensor& t) {
  HostValues h;
  h.dtype = t.dtype();
  h.shape = t.shape();
  const Tensor c = t.detach().cpu().contiguous();
  if (is_floating_point(h.dtype))
    h.f = c.to(kFloat64).to_vector<double>();
  else
    h.i = c.to(kInt64).to_vector<int64_t>();
  return h;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g (%a)", v, v);
  return buf;
}

std::string describe(const TensorData& d) {
  std::ostringstream os;
  os << dtype_name(d.dtype) << d.shape;
  if (!d.view.empty()) os << "{view=" << d.view << "}";
  return os.str();
}

// ---- tolerances ---------------------------------------------------------------------------------

/// One unit in the last place of `v` in a 16-bit float format with `mant` fraction bits.
double ulp16(double v, int mant, int min_normal_exp) {
  const double a = std::abs(v);
  int e = std::ilogb(a == 0 ? std::ldexp(1.0, min_normal_exp) : a);
  if (e < min_normal_exp) e = min_normal_exp;
  return std::ldexp(1.0, e - mant);
}

/// Allowed |got - expected|: exact for integers (not called), one ulp for float16 and bfloat16,
/// ~1e-6 relative for float32 and 1e-12 for float64, looser where the op accumulates (sums,
/// products, softmax, losses, gradients, optimizer steps: the summation order differs).
double tolerance(double expected, DType dt, bool accumulates) {
  const double a = std::abs(expected);
  switch (dt) {
    case kFloat16:
      return ulp16(expected, 10, -14);
    case kBFloat16:
      return ulp16(expected, 7, -126);
    case kFloat32:
      return accumulates ? 1e-5 * a + 1e-6 : 1e-6 * a + 1.5e-45;
    default:
      return accumulates ? 1e-12 * a + 1e-12 : 1e-12 * a + 5e-324;
  }
}

/// Empty when `got` matches `expected`, else what differs first.
std::string compare(const TensorData& expected, const Tensor& got_tensor, bool accumulates, bool signed_zeros) {
  if (!got_tensor.defined()) return "Locus gave no tensor";
  const HostValues got = host_values(got_tensor);
  std::ostringstream os;
  if (got.dtype != expected.dtype) {
    os << "dtype " << dtype_name(got.dtype) << ", PyTorch " << dtype_name(expected.dtype);
    return os.str();
  }
  if (!(got.shape == expected.shape)) {
    os << "shape " << got.shape << ", PyTorch " << expected.shape;
    return os.str();
  }
  const int64_t n = expected.numel();
  for (int64_t k = 0; k < n; ++k) {
    if (!is_floating_point(expected.dtype)) {
      if (got.i[k] != expected.i[k]) {
        os << "element " << k << " of " << n << ": " << got.i[k] << ", PyTorch " << expected.i[k];
        return os.str();
      }
      continue;
    }
    const double e = expected.f[k], g = got.f[k];
    bool ok;
    if (std::isnan(e))
      ok = std::isnan(g);
    else if (std::isinf(e))
      ok = g == e;
    else if (!std::isfinite(g))
      ok = false;
    else
      ok = std::abs(g - e) <= tolerance(e, expected.dtype, accumulates);
    if (ok && signed_zeros && e == 0 && g == 0 && std::signbit(e) != std::signbit(g)) ok = false;
    if (!ok) {
      os << "element " << k << " of " << n << ": " << fmt(g) << ", PyTorch " << fmt(e);
      return os.str();
    }
  }
  return {};
}

// ---- the op table -------------------------------------------------------------------------------

struct Ctx {
  const Case& c;
  std::vector<Tensor> in;
  Device dev;

  const Tensor& x(size_t k) const { return in.at(k); }
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

std::vector<Tensor> run_optimizer(const Ctx& c, const std::string& kind) {
  std::vector<Tensor> params;
  for (size_t k = 0; k < 2; ++k) params.push_back(c.x(k).detach().clone().requires_grad_());
  std::unique_ptr<optim::Optimizer> opt;
  if (kind == "sgd") {
    optim::SGDOptions o;
    o.lr = c.f64("lr", o.lr);
    o.momentum = c.f64("momentum", o.momentum);
    o.dampening = c.f64("dampening", o.dampening);
    o.weight_decay = c.f64("weight_decay", o.weight_decay);
    o.nesterov = c.flag("nesterov");
    opt = std::make_unique<optim::SGD>(params, o);
  } else {
    optim::AdamOptions o = kind == "adamw" ? optim::AdamW::with_default_decay() : optim::AdamOptions();
    o.lr = c.f64("lr", o.lr);
    o.beta1 = c.f64("beta1", o.beta1);
    o.beta2 = c.f64("beta2", o.beta2);
    o.eps = c.f64("eps", o.eps);
    o.weight_decay = c.f64("weight_decay", o.weight_decay);
    if (kind == "adamw")
      opt = std::make_unique<optim::AdamW>(params, o);
    else
      opt = std::make_unique<optim::Adam>(params, o);
  }
  Outs outs;
  const size_t steps = (c.in.size() - 2) / 2;
  for (size_t s = 0; s < steps; ++s) {
    for (size_t k = 0; k < 2; ++k) params[k].set_grad(c.x(2 + 2 * s + k));
    opt->step();
    for (const Tensor& p : params) outs.push_back(p.detach().clone());
  }
  return outs;
}

#define LOCUS_GOLDEN_BINARY(NAME)                                                                                     \
  {                                                                                                                   \
#NAME,                                                                                                            \
        [](const Ctx& c)                                                                                              \
             -> Outs { return {c.has("other") ? locus::NAME(c.x(0), c.num("other")) : locus::NAME(c.x(0), c.x(1))}; } \
  }
#define LOCUS_GOLDEN_UNARY(NAME)                                      \
  {                                                                   \
#NAME, [](const Ctx& c) -> Outs { return {locus::NAME(c.x(0))}; } \
  }

const std::map<std::string, OpFn>& ops() {
  static const std::map<std::string, OpFn> table = {
      // elementwise
      {"add",
       [](const Ctx& c) -> Outs {
         if (c.has("other")) return {add(c.x(0), c.num("other"))};
         return {c.has("alpha") ? add(c.x(0), c.x(1), c.num("alpha")) : add(c.x(0), c.x(1))};
       }},
      {"sub",
       [](const Ctx& c) -> Outs {
         if (c.has("other")) return {sub(c.x(0), c.num("other"))};
         return {c.has("alpha") ? sub(c.x(0), c.x(1), c.num("alpha")) : sub(c.x(0), c.x(1))};
       }},
      {"div",
       [](const Ctx& c) -> Outs {
         if (c.has("other"))
           return {c.has("rounding") ? div(c.x(0), c.num("other"), c.rounding()) : div(c.x(0), c.num("other"))};
         return {c.has("rounding") ? div(c.x(0), c.x(1), c.rounding()) : div(c.x(0), c.x(1))};
       }},
      LOCUS_GOLDEN_BINARY(mul),
      LOCUS_GOLDEN_BINARY(floor_divide),
      LOCUS_GOLDEN_BINARY(remainder),
      LOCUS_GOLDEN_BINARY(fmod),
      LOCUS_GOLDEN_BINARY(pow),
      LOCUS_GOLDEN_BINARY(maximum),
      LOCUS_GOLDEN_BINARY(minimum),
      LOCUS_GOLDEN_BINARY(eq),
      LOCUS_GOLDEN_BINARY(ne),
      LOCUS_GOLDEN_BINARY(lt),
      LOCUS_GOLDEN_BINARY(le),
      LOCUS_GOLDEN_BINARY(gt),
      LOCUS_GOLDEN_BINARY(ge),
      LOCUS_GOLDEN_BINARY(logical_and),
      LOCUS_GOLDEN_BINARY(logical_or),
      LOCUS_GOLDEN_BINARY(logical_xor),
      {"rsub", [](const Ctx& c) -> Outs { return {c.num("other") - c.x(0)}; }},
      {"rdiv", [](const Ctx& c) -> Outs { return {c.num("other") / c.x(0)}; }},
      {"radd", [](const Ctx& c) -> Outs { return {c.num("other") + c.x(0)}; }},
      {"rmul", [](const Ctx& c) -> Outs { return {c.num("other") * c.x(0)}; }},
      {"mul_self", [](const Ctx& c) -> Outs { return {mul(c.x(0), c.x(0))}; }},
      // in place, on a copy of the left operand
      {"add_",
       [](const Ctx& c) -> Outs {
         Tensor a = c.x(0).clone();
         if (c.has("other"))
           a.add_(c.num("other"));
         else
           a.add_(c.x(1));
         return {a};
       }},
      {"sub_",
       [](const Ctx& c) -> Outs {
         Tensor a = c.x(0).clone();
         if (c.has("other"))
           a.sub_(c.num("other"));
         else
           a.sub_(c.x(1));
         return {a};
       }},
      {"mul_",
       [](const Ctx& c) -> Outs {
         Tensor a = c.x(0).clone();
         if (c.has("other"))
           a.mul_(c.num("other"));
         else
           a.mul_(c.x(1));
         return {a};
       }},
      {"div_",
       [](const Ctx& c) -> Outs {
         Tensor a = c.x(0).clone();
         if (c.has("other"))
           a.div_(c.num("other"));
         else
           a.div_(c.x(1));
         return {a};
       }},
      LOCUS_GOLDEN_UNARY(neg),
      LOCUS_GOLDEN_UNARY(abs),
      LOCUS_GOLDEN_UNARY(sign),
      LOCUS_GOLDEN_UNARY(exp),
      LOCUS_GOLDEN_UNARY(expm1),
      LOCUS_GOLDEN_UNARY(log),
      LOCUS_GOLDEN_UNARY(log1p),
      LOCUS_GOLDEN_UNARY(sqrt),
      LOCUS_GOLDEN_UNARY(rsqrt),
      LOCUS_GOLDEN_UNARY(sin),
      LOCUS_GOLDEN_UNARY(cos),
      LOCUS_GOLDEN_UNARY(tanh),
      LOCUS_GOLDEN_UNARY(sigmoid),
      LOCUS_GOLDEN_UNARY(erf),
      LOCUS_GOLDEN_UNARY(relu),
      LOCUS_GOLDEN_UNARY(gelu),
      LOCUS_GOLDEN_UNARY(floor),
      LOCUS_GOLDEN_UNARY(ceil),
      LOCUS_GOLDEN_UNARY(round),
      LOCUS_GOLDEN_UNARY(trunc),
      LOCUS_GOLDEN_UNARY(logical_not),
      {"clamp", [](const Ctx& c) -> Outs { return {clamp(c.x(0), c.opt_num("min"), c.opt_num("max"))}; }},
      {"where", [](const Ctx& c) -> Outs { return {where(c.x(0), c.x(1), c.x(2))}; }},
      // reductions
      {"sum",
       [](const Ctx& c) -> Outs {
         const bool keep = c.flag("keepdim");
         if (c.has("dims")) return {sum(c.x(0), c.list("dims"), keep, c.dtype())};
         if (c.has("dim")) return {sum(c.x(0), c.i64("dim"), keep, c.dtype())};
         return {sum(c.x(0), c.dtype())};
       }},
      {"mean",
       [](const Ctx& c) -> Outs {
         const bool keep = c.flag("keepdim");
         if (c.has("dims")) return {mean(c.x(0), c.list("dims"), keep)};
         if (c.has("dim")) return {mean(c.x(0), c.i64("dim"), keep)};
         return {mean(c.x(0))};
       }},
      {"max",
       [](const Ctx& c) -> Outs {
         if (!c.has("dim")) return {max(c.x(0))};
         auto [v, i] = max(c.x(0), c.i64("dim"), c.flag("keepdim"));
         return {v, i};
       }},
      {"min",
       [](const Ctx& c) -> Outs {
         if (!c.has("dim")) return {min(c.x(0))};
         auto [v, i] = min(c.x(0), c.i64("dim"), c.flag("keepdim"));
         return {v, i};
       }},
      {"argmax",
       [](const Ctx& c) -> Outs {
         return {c.has("dim") ? argmax(c.x(0), c.i64("dim"), c.flag("keepdim")) : argmax(c.x(0))};
       }},
      {"argmin",
       [](const Ctx& c) -> Outs {
         return {c.has("dim") ? argmin(c.x(0), c.i64("dim"), c.flag("keepdim")) : argmin(c.x(0))};
       }},
      {"softmax", [](const Ctx& c) -> Outs { return {softmax(c.x(0), c.i64("dim"))}; }},
      {"log_softmax", [](const Ctx& c) -> Outs { return {log_softmax(c.x(0), c.i64("dim"))}; }},
      // products, joins, indexing
      {"matmul", [](const Ctx& c) -> Outs { return {matmul(c.x(0), c.x(1))}; }},
      {"mm", [](const Ctx& c) -> Outs { return {mm(c.x(0), c.x(1))}; }},
      {"cat", [](const Ctx& c) -> Outs { return {cat(c.in, c.i64("dim"))}; }},
      {"stack", [](const Ctx& c) -> Outs { return {stack(c.in, c.i64("dim"))}; }},
      {"index_select", [](const Ctx& c) -> Outs { return {index_select(c.x(0), c.i64("dim"), c.x(1))}; }},
      {"gather", [](const Ctx& c) -> Outs { return {gather(c.x(0), c.i64("dim"), c.x(1))}; }},
      // views and copies
      {"reshape", [](const Ctx& c) -> Outs { return {c.x(0).reshape(c.list("shape"))}; }},
      {"view", [](const Ctx& c) -> Outs { return {c.x(0).view(c.list("shape"))}; }},
      {"flatten", [](const Ctx& c) -> Outs { return {c.x(0).flatten(c.i64("start", 0), c.i64("end", -1))}; }},
      {"permute", [](const Ctx& c) -> Outs { return {c.x(0).permute(c.list("dims"))}; }},
      {"transpose", [](const Ctx& c) -> Outs { return {c.x(0).transpose(c.i64("d0"), c.i64("d1"))}; }},
      {"t", [](const Ctx& c) -> Outs { return {c.x(0).t()}; }},
      {"squeeze",
       [](const Ctx& c) -> Outs { return {c.has("dim") ? c.x(0).squeeze(c.i64("dim")) : c.x(0).squeeze()}; }},
      {"unsqueeze", [](const Ctx& c) -> Outs { return {c.x(0).unsqueeze(c.i64("dim"))}; }},
      {"narrow", [](const Ctx& c) -> Outs { return {c.x(0).narrow(c.i64("dim"), c.i64("start"), c.i64("length"))}; }},
      {"select", [](const Ctx& c) -> Outs { return {c.x(0).select(c.i64("dim"), c.i64("index"))}; }},
      {"expand", [](const Ctx& c) -> Outs { return {c.x(0).expand(c.list("shape"))}; }},
      {"slice",
       [](const Ctx& c) -> Outs {
         std::optional<int64_t> start, stop;
         if (c.has("start")) start = c.i64("start");
         if (c.has("stop")) stop = c.i64("stop");
         return {c.x(0).slice(c.i64("dim"), start, stop, c.i64("step", 1))};
       }},
      {"contiguous", [](const Ctx& c) -> Outs { return {c.x(0).contiguous()}; }},
      {"clone", [](const Ctx& c) -> Outs { return {c.x(0).clone()}; }},
      {"to", [](const Ctx& c) -> Outs { return {c.x(0).to(*c.dtype())}; }},
      // factories
      {"arange",
       [](const Ctx& c) -> Outs {
         if (!c.has("start")) return {arange(c.num("end"), c.options())};
         return {arange(c.num("start"), c.num("end"), c.has("step") ? c.num("step") : Scalar(1), c.options())};
       }},
      {"full", [](const Ctx& c) -> Outs { return {full(c.list("shape"), c.num("value"), c.options())}; }},
      {"eye",
       [](const Ctx& c) -> Outs {
         std::optional<int64_t> m;
         if (c.has("m")) m = c.i64("m");
         return {eye(c.i64("n"), m, c.options())};
       }},
      {"linspace",
       [](const Ctx& c) -> Outs { return {linspace(c.f64("start"), c.f64("end"), c.i64("steps"), c.options())}; }},
      {"zeros", [](const Ctx& c) -> Outs { return {zeros(c.list("shape"), c.options())}; }},
      {"ones", [](const Ctx& c) -> Outs { return {ones(c.list("shape"), c.options())}; }},
      // losses
      {"mse_loss", [](const Ctx& c) -> Outs { return {nn::mse_loss(c.x(0), c.x(1), c.reduction())}; }},
      {"nll_loss",
       [](const Ctx& c) -> Outs {
         return {nn::nll_loss(c.x(0), c.x(1), nn::ClassLossOptions{c.reduction(), c.i64("ignore_index", -100)})};
       }},
      {"cross_entropy",
       [](const Ctx& c) -> Outs {
         return {nn::cross_entropy(c.x(0), c.x(1), nn::ClassLossOptions{c.reduction(), c.i64("ignore_index", -100)})};
       }},
      // optimizers: the parameters after each step
      {"sgd", [](const Ctx& c) -> Outs { return run_optimizer(c, "sgd"); }},
      {"adam", [](const Ctx& c) -> Outs { return run_optimizer(c, "adam"); }},
      {"adamw", [](const Ctx& c) -> Outs { return run_optimizer(c, "adamw"); }},
  };
  return table;
}

#undef LOCUS_GOLDEN_BINARY
#undef LOCUS_GOLDEN_UNARY

// ---- running a case -----------------------------------------------------------------------------

bool glob(const char* p, const char* s) {
  if (*p == 0) return *s == 0;
  if (*p == '*') return glob(p + 1, s) || (*s != 0 && glob(p, s + 1));
  return *s != 0 && *p == *s && glob(p + 1, s + 1);
}

bool applies(const Known& k, const std::string& device) {
  if (!*k.devices) return true;
  std::string list = std::string(",") + k.devices + ",";
  return list.find("," + device + ",") != std::string::npos;
}

std::string error_class(const std::exception& e) {
  if (dynamic_cast<const IndexError*>(&e)) return "IndexError";
  if (dynamic_cast<const ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const DTypeError*>(&e)) return "DTypeError";
  if (dynamic_cast<const DeviceMismatchError*>(&e)) return "DeviceMismatchError";
  if (dynamic_cast<const NotImplementedError*>(&e)) return "NotImplementedError";
  if (dynamic_cast<const Error*>(&e)) return "locus::Error";
  return "std::exception (not a locus::Error)";
}

std::string first_line(const std::string& s) { return s.substr(0, std::min(s.find('\n'), size_t{160})); }

/// Runs one case on `device`: empty when Locus agrees with PyTorch, else the difference.
std::string run_case(const Case& c, const std::string& device, const std::string& family_name) {
  const auto& table = ops();
  auto op = table.find(c.op);
  if (op == table.end()) return "no Locus call for op '" + c.op + "' in the op table";
  const Device dev(device);
  Ctx ctx{c, {}, dev};
  Outs outs;
  try {
    for (const TensorData& t : c.ins) ctx.in.push_back(device_tensor(t, dev));
    outs = op->second(ctx);
    if (c.gout && !c.err) outs.at(0).backward(device_tensor(*c.gout, dev));
    // cuda checks indices and class targets on the device and raises at the next
    // synchronization (Note [Deferred checks]): make it happen inside this case.
    if (dev.is_cuda()) cuda::synchronize();
  } catch (const std::exception& e) {
    const std::string got = error_class(e);
    if (!c.err) return "Locus threw " + got + ": " + first_line(e.what());
    if (!dynamic_cast<const Error*>(&e))
      return "PyTorch raised " + c.err_type + "; Locus threw " + got + ": " + first_line(e.what());
    // PyTorch's IndexError must be Locus's IndexError, and its ValueError Locus's ValueError, or
    // ShapeError where PyTorch reports a shape mismatch as ValueError (the losses' batch sizes).
    const bool class_ok = c.err_type == "IndexError"   ? got == "IndexError"
                          : c.err_type == "ValueError" ? (got == "ValueError" || got == "ShapeError")
                                                       : true;
    if (!class_ok)
      return "PyTorch raised " + c.err_type + " (" + c.err_msg + "); Locus threw " + got + ": " + first_line(e.what());
    return {};
  }
  if (c.err) {
    std::ostringstream os;
    os << "PyTorch raised " << c.err_type << " (" << c.err_msg << "); Locus returned";
    for (const Tensor& t : outs)
      os << " " << (t.defined() ? std::string(dtype_name(t.dtype())) : "undefined")
         << (t.defined() ? t.shape() : Shape{});
    return os.str();
  }
  const bool accumulates = family_name != "elementwise" && family_name != "factories" &&
                           !(family_name == "shape" && c.op != "matmul" && c.op != "mm");
  // The sign of a zero result is checked where IEEE 754 defines it (maximum(0.0, -0.0) or
  // gelu(-0.0) are not: PyTorch's own vectorized and scalar paths disagree there).
  static const std::set<std::string> kSignedZeroOps = {"add",  "sub",   "mul",   "neg",  "abs",  "floor",
                                                       "ceil", "round", "trunc", "rsub", "radd", "rmul",
                                                       "rdiv", "to",    "add_",  "sub_", "mul_", "div_"};
  const bool signed_zeros =
      (kSignedZeroOps.count(c.op) || (c.op == "div" && !c.args.count("rounding"))) && family_name != "autograd";
  // Gradient cases check the first output only (max along a dim: the values).
  const size_t n_out = c.gout ? std::min<size_t>(1, outs.size()) : outs.size();
  if (n_out != c.outs.size())
    return "Locus gave " + std::to_string(outs.size()) + " outputs, PyTorch " + std::to_string(c.outs.size());
  for (size_t k = 0; k < n_out; ++k) {
    std::string diff;
    try {
      diff = compare(c.outs[k], outs[k], accumulates, signed_zeros);
    } catch (const std::exception& e) {
      diff = std::string("reading the result threw: ") + e.what();
    }
    if (!diff.empty()) {
      std::string where = n_out > 1 ? "output " + std::to_string(k) + ": " : "";
      // The inputs at the first differing element, when they line up with the output.
      const size_t at = diff.rfind("element ", 0) == 0 ? std::strtoull(diff.c_str() + 8, nullptr, 10) : SIZE_MAX;
      std::ostringstream os;
      for (const TensorData& t : c.ins) {
        if (at == SIZE_MAX || t.numel() != c.outs[k].numel()) continue;
        os << (os.tellp() ? ", " : " (inputs there: ") << t.name << "="
           << (is_floating_point(t.dtype) ? fmt(t.f[at]) : std::to_string(t.i[at]));
      }
      if (os.tellp()) os << ")";
      return where + diff + os.str();
    }
  }
  for (const TensorData& g : c.grads) {
    size_t k = 0;
    while (k < c.ins.size() && c.ins[k].name != g.name) ++k;
    if (k == c.ins.size()) return "gradient of unknown input " + g.name;
    const Tensor grad = ctx.in[k].grad();
    if (!grad.defined()) return "grad of " + g.name + ": Locus left it undefined";
    const std::string diff = compare(g, grad, true, false);
    if (!diff.empty()) return "grad of " + g.name + ": " + diff;
  }
  return {};
}

std::string case_summary(const Case& c) {
  std::ostringstream os;
  os << "[" << c.id << "] " << c.op;
  for (const auto& [k, v] : c.args) os << " " << k << "=" << v;
  os << " (";
  for (size_t k = 0; k < c.ins.size(); ++k) os << (k ? ", " : "") << c.ins[k].name << ": " << describe(c.ins[k]);
  os << "; line " << c.line << ")";
  return os.str();
}

class Golden : public testing::OnEachDevice {
 protected:
  void run_family(const std::string& name) {
    const std::vector<Case>* cases = nullptr;
    try {
      cases = &family(name);
    } catch (const std::exception& e) {
      FAIL() << e.what() << " (set LOCUS_GOLDEN_DIR to tests/golden if the source tree moved)";
    }
    ASSERT_FALSE(cases->empty()) << name << " has no cases";
    const std::string device = GetParam();
    std::set<const Known*> reproduced, relevant;
    int deviations = 0, known = 0, failures = 0, undefined = 0;
    // LOCUS_GOLDEN_VERBOSE=1 prints every difference, known ones included, one line each.
    const bool verbose = std::getenv("LOCUS_GOLDEN_VERBOSE") != nullptr;
    // LOCUS_GOLDEN_TRACE=1 prints each case id before running it (to find a case that aborts).
    const bool trace = std::getenv("LOCUS_GOLDEN_TRACE") != nullptr;
    for (const Case& c : *cases) {
      if (trace) std::fprintf(stderr, "[ case     ] %s\n", c.id.c_str());
      if (sanitizer_build() && std::any_of(kUndefinedInLocus.begin(), kUndefinedInLocus.end(), [&](const Known& k) {
            return applies(k, device) && glob(k.pattern, c.id.c_str());
          })) {
        ++undefined;
        continue;
      }
      const Known* entry = nullptr;
      bool deviation = false;
      for (const Known& k : kDeviations)
        if (!entry && applies(k, device) && glob(k.pattern, c.id.c_str())) entry = &k, deviation = true;
      for (const Known& k : kFindings)
        if (!entry && applies(k, device) && glob(k.pattern, c.id.c_str())) entry = &k;
      if (entry) relevant.insert(entry);
      const std::string diff = run_case(c, device, name);
      if (diff.empty()) continue;
      if (verbose)
        std::printf("[ differs  ] %s on %s: %s%s\n", case_summary(c).c_str(), device.c_str(), diff.c_str(),
                    !entry      ? ""
                    : deviation ? " (deviation)"
                                : " (known finding)");
      if (entry) {
        reproduced.insert(entry);
        ++(deviation ? deviations : known);
        continue;
      }
      if (++failures <= 40 && !verbose) ADD_FAILURE() << case_summary(c) << " on " << device << ": " << diff;
    }
    if (failures > 40 || (verbose && failures))
      ADD_FAILURE() << failures - (verbose ? 0 : 40) << " more cases differ from PyTorch";
    for (const Known* k : relevant)
      if (!reproduced.count(k))
        ADD_FAILURE() << "known-difference entry '" << k->pattern << "' (" << k->reason << ") no longer differs on "
                      << device << ": delete it";
    std::printf(
        "[ golden   ] %s on %s: %zu cases, %d known findings, %d deviations%s\n", name.c_str(), device.c_str(),
        cases->size(), known, deviations,
        undefined ? (", " + std::to_string(undefined) + " skipped (undefined behaviour in Locus)").c_str() : "");
  }
};

TEST_P(Golden, Elementwise) { run_family("elementwise"); }
TEST_P(Golden, Reduce) { run_family("reduce"); }
TEST_P(Golden, Shape) { run_family("shape"); }
TEST_P(Golden, Factories) { run_family("factories"); }
TEST_P(Golden, Autograd) { run_family("autograd"); }
TEST_P(Golden, Losses) { run_family("losses"); }
TEST_P(Golden, Optim) { run_family("optim"); }

INSTANTIATE_TEST_SUITE_P(Devices, Golden, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

// Every known-difference entry names at least one case, and every case has a Locus call.
TEST(GoldenFiles, KnownEntriesAndOpsExist) {
  std::vector<const Known*> entries;
  for (const Known& k : kDeviations) entries.push_back(&k);
  for (const Known& k : kFindings) entries.push_back(&k);
  for (const Known& k : kUndefinedInLocus) entries.push_back(&k);
  std::set<const Known*> matched;
  for (const std::string& name : family_names()) {
    const std::vector<Case>* cases = nullptr;
    try {
      cases = &family(name);
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    for (const Case& c : *cases) {
      EXPECT_TRUE(ops().count(c.op)) << "no Locus call for op '" << c.op << "' (" << c.id << ")";
      for (const Known* k : entries)
        if (glob(k->pattern, c.id.c_str())) matched.insert(k);
    }
  }
  for (const Known* k : entries) EXPECT_TRUE(matched.count(k)) << "'" << k->pattern << "' matches no golden case";
}

}  // namespace
}  // namespace locus
