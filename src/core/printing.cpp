// PyTorch-style printing: tensor([1., 2., 3.], device='sim:0').

#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <vector>

#include "locus/ops.h"
#include "locus/scalar.h"
#include "locus/shape.h"
#include "locus/tensor.h"

namespace locus {
namespace {

constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdgeItems = 3;

// How floats are shown, chosen once per tensor as PyTorch's _Formatter does.
struct FloatFormat {
  bool integer_mode = true;  // every finite value is integral: "1.", "-2."
  bool sci = false;
  int width = 1;
  std::string format(double v) const {
    char buf[64];
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci) std::snprintf(buf, sizeof buf, "%.4e", v);
    else if (integer_mode) std::snprintf(buf, sizeof buf, "%.0f.", v);
    else std::snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
  }
};

FloatFormat choose_format(const std::vector<double>& values) {
  FloatFormat f;
  double max_abs = 0, min_abs = INFINITY;
  bool any = false;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    any = true;
    if (v != std::floor(v)) f.integer_mode = false;
    max_abs = std::max(max_abs, std::abs(v));
    if (v != 0) min_abs = std::min(min_abs, std::abs(v));
  }
  if (!any) return f;
  if (f.integer_mode) {
    f.sci = max_abs > 1e8;
  } else {
    f.sci = max_abs / (min_abs == INFINITY ? 1 : min_abs) > 1000.0 || max_abs > 1e8 || (min_abs != INFINITY && min_abs < 1e-4);
  }
  for (double v : values) f.width = std::max<int>(f.width, static_cast<int>(f.format(v).size()));
  return f;
}

std::string pad(const std::string& s, int width) {
  return std::string(static_cast<size_t>(std::max<int>(0, width - static_cast<int>(s.size()))), ' ') + s;
}

// Recursively prints dims, eliding the middle of long dims when summarising.
void print_dim(std::ostream& os, const Tensor& t, const std::vector<std::string>& cells, int width, bool summarize,
               int64_t& cursor, int indent) {
  if (t.dim() == 0) {
    os << cells[static_cast<size_t>(cursor++)];
    return;
  }
  const int64_t n = t.size(0);
  const bool elide = summarize && n > 2 * kEdgeItems;
  os << "[";
  for (int64_t i = 0; i < n; ++i) {
    if (elide && i == kEdgeItems) {
      os << (t.dim() == 1 ? "..., " : "...,\n" + std::string(static_cast<size_t>(indent + 1), ' '));
      i = n - kEdgeItems - 1;
      continue;
    }
    if (t.dim() == 1) os << pad(cells[static_cast<size_t>(cursor++)], width);
    else print_dim(os, t.select(0, i), cells, width, summarize, cursor, indent + 1);
    if (i + 1 < n) {
      os << ",";
      if (t.dim() == 1) os << " ";
      else os << std::string(static_cast<size_t>(t.dim() - 1), '\n') << std::string(static_cast<size_t>(indent + 1), ' ');
    }
  }
  os << "]";
}

// The elements that will be shown, in print order (edges only when summarising).
void collect(const Tensor& t, bool summarize, std::vector<double>& out) {
  if (t.dim() == 0) {
    out.push_back(t.item<double>());
    return;
  }
  const int64_t n = t.size(0);
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
    collect(t.select(0, i), summarize, out);
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  const Tensor host = t.detach().cpu().to(kFloat64);
  const bool summarize = t.numel() > kSummarizeAbove;
  std::vector<double> values;
  if (t.numel() > 0) collect(host, summarize, values);
  std::vector<std::string> cells;
  int width = 1;
  if (is_floating_point(t.dtype())) {
    const FloatFormat f = choose_format(values);
    for (double v : values) cells.push_back(f.format(v));
    width = f.width;
  } else {
    for (double v : values) {
      if (t.dtype() == DType::Bool) cells.push_back(v != 0 ? "True" : "False");
      else cells.push_back(std::to_string(static_cast<int64_t>(v)));
      width = std::max<int>(width, static_cast<int>(cells.back().size()));
    }
  }
  os << "tensor(";
  if (t.numel() == 0 && t.dim() <= 1) os << "[]";
  else if (t.numel() == 0) os << "[], size=" << t.shape();
  else {
    int64_t cursor = 0;
    print_dim(os, host, cells, width, summarize, cursor, 7);
  }
  if (!t.device().is_cpu()) os << ", device='" << t.device() << "'";
  const bool default_dtype = t.dtype() == get_default_dtype() || t.dtype() == DType::Int64 || t.dtype() == DType::Bool;
  if (!default_dtype) os << ", dtype=" << t.dtype();
  if (t.requires_grad()) os << ", requires_grad=True";
  return os << ")";
}

std::string to_string(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << "]";
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_bool()) return os << (s.to_int64() ? "True" : "False");
  if (s.is_integral()) return os << s.to_int64();
  return os << s.to_double();
}

}  // namespace locus
