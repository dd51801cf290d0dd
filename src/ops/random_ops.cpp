// randperm, bernoulli, multinomial and normal, on the generator's uniform stream.
//
// Note [Random draws]
// Every op here draws its randomness as one rand() of float64 values, so it takes its counters
// from the same generator as rand / randn (manual_seed, get_rng_state) and the same seed gives
// the same result on every device: the Philox stream depends only on (seed, counter), never on
// where it is computed. bernoulli compares the draws with p on the tensor's device. randperm
// and multinomial turn the draws into indices on the host (a shuffle and a search are
// sequential per row; their outputs are small next to the tensors products work on) and copy
// the result to the device, so cuda returns exactly what cpu and sim return, by construction.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <vector>

#include "locus/autograd.h"
#include "locus/elementwise.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/random.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/ops/kernel_operand.h"

namespace locus {
namespace {

// `n` float64 draws in [0, 1) on the CPU (Note [Random draws]).
std::vector<double> host_draws(int64_t n) {
  const Tensor u = rand(Shape{n}, TensorOptions().dtype(kFloat64));
  const double* p = ops::dense_operand<double>(u);
  return std::vector<double>(p, p + n);
}

// PyTorch's dtype rule for randperm: not bool, and the largest value, n - 1, must fit.
void check_randperm_dtype(int64_t n, DType dtype) {
  if (dtype == DType::Bool)
    throw DTypeError(detail::error_prefix("randperm") + "\"randperm\" not implemented for 'bool'");
  if (n == 0 || is_floating_point(dtype)) return;
  const int64_t bits = static_cast<int64_t>(itemsize(dtype)) * 8 - (dtype == DType::UInt8 ? 0 : 1);
  if (bits < 63 && n - 1 > (int64_t{1} << bits) - 1)
    throw ValueError(detail::error_prefix("randperm") + "value cannot be converted to type " +
                     std::string(dtype_name(dtype)) + " without overflow");
}

// Whether some p lies outside [0, 1]; NaN fails both comparisons, so it counts, as PyTorch's
// p >= 0 && p <= 1 check.
bool outside_unit_interval(const Tensor& p) {
  return p.numel() && logical_not(logical_and(ge(p, 0), le(p, 1))).sum().item<int64_t>() != 0;
}

// `shape` float64 draws compared with p on `device`: true with probability p.
Tensor below(const Shape& shape, Device device, const Tensor& p) {
  return lt(rand(shape, TensorOptions().dtype(kFloat64).device(device)), p);
}
Tensor below(const Shape& shape, Device device, double p) {
  return lt(rand(shape, TensorOptions().dtype(kFloat64).device(device)), p);
}

}  // namespace

Tensor randperm(int64_t n, TensorOptions options) {
  const detail::PublicOpScope scope("randperm");
  if (n < 0)
    throw ValueError(detail::error_prefix("randperm") + "Trying to create tensor with negative dimension " +
                     std::to_string(n) + ": [" + std::to_string(n) + "]");
  const DType dtype = options.dtype_or(kInt64);
  check_randperm_dtype(n, dtype);
  // Fisher-Yates from the last position down: position i swaps with floor(u_i * (i + 1)).
  const std::vector<double> u = host_draws(n);
  Tensor perm = empty(Shape{n}, TensorOptions().dtype(kInt64));
  int64_t* p = ops::dense_result<int64_t>(perm);
  std::iota(p, p + n, int64_t{0});
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = std::min(static_cast<int64_t>(u[static_cast<size_t>(i)] * static_cast<double>(i + 1)), i);
    std::swap(p[i], p[j]);
  }
  Tensor out = perm.to(options.device(), dtype);
  if (options.requires_grad()) out.requires_grad_();
  return out;
}

Tensor bernoulli(const Tensor& p) {
  const detail::PublicOpScope scope("bernoulli");
  if (!is_floating_point(p.dtype()))
    throw DTypeError(detail::error_prefix("bernoulli") + "\"bernoulli_tensor_cpu_p_\" not implemented for '" +
                     std::string(dtype_name(p.dtype())) + "'");
  const NoGradGuard sampling;  // a sample has no gradient
  if (outside_unit_interval(p))
    throw ValueError(detail::error_prefix("bernoulli") + "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  return below(p.shape(), p.device(), p).to(p.dtype());
}

Tensor bernoulli(const Tensor& input, double p) {
  const detail::PublicOpScope scope("bernoulli");
  return empty_like(input).bernoulli_(p);
}

Tensor& Tensor::bernoulli_(double p) {
  const detail::PublicOpScope scope("bernoulli_");
  autograd::check_write(*this, "bernoulli_");
  if (!(p >= 0 && p <= 1)) {
    std::ostringstream os;
    os << detail::error_prefix("bernoulli_") << "bernoulli_ expects p to be in [0, 1], but got p=" << p;
    throw ValueError(os.str());
  }
  const NoGradGuard sampling;
  copy_(below(shape(), device(), p));
  return *this;
}

Tensor& Tensor::bernoulli_(const Tensor& p) {
  const detail::PublicOpScope scope("bernoulli_");
  autograd::check_write(*this, "bernoulli_");
  const NoGradGuard sampling;
  if (outside_unit_interval(p))
    throw ValueError(detail::error_prefix("bernoulli_") + "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  copy_(below(shape(), device(), p.to(device())));
  return *this;
}

Tensor Tensor::bernoulli() const { return locus::bernoulli(*this); }
Tensor Tensor::bernoulli(double p) const { return locus::bernoulli(*this, p); }

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement) {
  const detail::PublicOpScope scope("multinomial");
  const std::string prefix = detail::error_prefix("multinomial");
  if (self.dim() != 1 && self.dim() != 2) throw ShapeError(prefix + "prob_dist must be 1 or 2 dim");
  if (!is_floating_point(self.dtype()))
    throw DTypeError(prefix + "multinomial only supports floating-point dtypes for input, got: " +
                     std::string(dtype_name(self.dtype())));
  if (num_samples <= 0) throw ValueError(prefix + "cannot sample n_sample <= 0 samples");
  const int64_t categories = self.size(-1), rows = self.dim() == 2 ? self.size(0) : 1;
  if (!replacement && num_samples > categories)
    throw ValueError(prefix + "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  const Tensor probs = self.detach().to(Device(DeviceType::CPU), kFloat64).contiguous();
  const double* w = ops::dense_operand<double>(probs);
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t c = 0; c < categories; ++c) {
      const double v = w[r * categories + c];
      if (!std::isfinite(v) || v < 0)
        throw ValueError(prefix + "probability tensor contains either `inf`, `nan` or element < 0");
      total += v;
    }
    if (!(total > 0)) throw ValueError(prefix + "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  Tensor out = empty(self.dim() == 2 ? Shape{rows, num_samples} : Shape{num_samples}, TensorOptions().dtype(kInt64));
  int64_t* o = ops::dense_result<int64_t>(out);
  if (replacement) {
    // Inverse CDF: each draw u picks the first category whose cumulative weight exceeds u * total
    // (a zero-weight category never does).
    const std::vector<double> u = host_draws(rows * num_samples);
    std::vector<double> cdf(static_cast<size_t>(categories));
    for (int64_t r = 0; r < rows; ++r) {
      std::partial_sum(w + r * categories, w + (r + 1) * categories, cdf.begin());
      int64_t last = categories - 1;  // the last category with weight: rounding never picks past it
      while (w[r * categories + last] == 0) --last;
      for (int64_t s = 0; s < num_samples; ++s) {
        const double target = u[static_cast<size_t>(r * num_samples + s)] * cdf.back();
        const int64_t c = std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin();
        o[r * num_samples + s] = std::min(c, last);
      }
    }
  } else {
    // Without replacement, as PyTorch: the largest keys w / E with E ~ Exp(1), one per category
    // (ties, such as zero weights, in category order).
    const std::vector<double> u = host_draws(rows * categories);
    std::vector<double> key(static_cast<size_t>(categories));
    std::vector<int64_t> order(static_cast<size_t>(categories));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < categories; ++c) {
        const double e = -std::log1p(-u[static_cast<size_t>(r * categories + c)]);  // Exp(1), > 0 but for u = 0
        key[static_cast<size_t>(c)] = w[r * categories + c] / e;  // u = 0: w / 0 = inf (or NaN for w = 0)
        if (std::isnan(key[static_cast<size_t>(c)])) key[static_cast<size_t>(c)] = 0;
      }
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return key[static_cast<size_t>(a)] > key[static_cast<size_t>(b)]; });
      std::copy(order.begin(), order.begin() + num_samples, o + r * num_samples);
    }
  }
  return out.to(self.device());
}

Tensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  return locus::multinomial(*this, num_samples, replacement);
}

Tensor normal(double mean, double std, const Shape& size, TensorOptions options) {
  const detail::PublicOpScope scope("normal");
  const bool grad = options.requires_grad();
  Tensor t = empty(size, options.requires_grad(false));
  t.normal_(mean, std);
  if (grad) t.requires_grad_();
  return t;
}

Tensor normal(const Tensor& mean, const Tensor& std) {
  const detail::PublicOpScope scope("normal");
  const NoGradGuard sampling;  // PyTorch's normal passes no gradient to mean or std
  if (std.numel() && lt(std, 0).sum().item<int64_t>() != 0)
    throw ValueError(detail::error_prefix("normal") + "normal expects all elements of std >= 0.0");
  const Tensor both = mean + std;  // the broadcast shape, dtype and device
  return mean + std * randn(both.shape(), TensorOptions().dtype(both.dtype()).device(both.device()));
}

}  // namespace locus
