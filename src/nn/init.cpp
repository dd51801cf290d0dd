// nn::init: in-place initialisations, as torch.nn.init computes them.
//
// Note [Init on the host]
// The random draws come from the tensor's own device and its generator (rand, randn with the
// tensor's device), so a seed gives the same weights wherever the model lives. Two inits need
// arithmetic Locus has no tensor op for and that runs once per weight, not per step:
// trunc_normal_ needs erfinv, and orthogonal_ a QR decomposition. Both bring their draws to the
// host, transform them in double precision there (erfinv by Newton steps on std::erf; QR by
// Householder reflections, O(rows * cols^2), a few milliseconds for a 1024 x 1024 weight) and copy
// the result back. That keeps LAPACK out of Locus's dependencies for the sake of an init: the
// decomposition needs no pivoting and no blocking to be exact to rounding here.

#include "locus/nn/init.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"

namespace locus::nn::init {
namespace {

void check_floating(const char* init, const Tensor& tensor) {
  if (!tensor.defined()) throw ValueError(std::string("nn::init::") + init + ": the tensor is undefined");
  if (!tensor.is_floating_point())
    throw DTypeError(std::string("nn::init::") + init + ": needs a floating tensor, got " +
                     std::string(dtype_name(tensor.dtype())) + "; random inits fill floating tensors only");
}

// The dtype random numbers are drawn in: the tensor's when it is float32 or float64, float32
// for the 16-bit types (copy_ rounds them), as PyTorch draws in the tensor's own dtype.
TensorOptions draw_options(const Tensor& tensor) {
  const DType dtype = tensor.dtype() == kFloat64 ? kFloat64 : kFloat32;
  return TensorOptions().dtype(dtype).device(tensor.device());
}

// Overwrites `tensor` with `values` (any dtype, same shape), recording nothing for autograd.
Tensor fill_with(Tensor tensor, const Tensor& values) {
  NoGradGuard no_grad;
  tensor.copy_(values);
  return tensor;
}

// Inverse of the error function on (-1, 1): Giles' single-precision approximation ("Approximating
// the erfinv function", GPU Computing Gems, 2011), then two Newton steps on std::erf, which bring
// it to double precision. +-1 give +-inf.
double erfinv(double y) {
  if (y <= -1) return -INFINITY;
  if (y >= 1) return INFINITY;
  double w = -std::log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      p = c + p * w;
  }
  double x = p * y;
  for (int step = 0; step < 2; ++step) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}

// The fan a kaiming init scales by.
int64_t fan_for(const Tensor& tensor, FanMode mode) {
  const auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  return mode == FanMode::FanIn ? fan_in : fan_out;
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1.0 + param * param));
    case Nonlinearity::SELU: return 3.0 / 4.0;  // PyTorch's value, chosen for self-normalising nets
    default: return 1.0;  // linear, the convolutions, sigmoid
  }
}

double calculate_gain(std::string_view nonlinearity, double param) {
  static const std::pair<std::string_view, Nonlinearity> kNames[] = {
      {"linear", kLinear},   {"conv1d", kConv1D},   {"conv2d", kConv2D},
      {"conv3d", kConv3D},   {"conv_transpose1d", kConvTranspose1D}, {"conv_transpose2d", kConvTranspose2D},
      {"conv_transpose3d", kConvTranspose3D}, {"sigmoid", kSigmoid}, {"tanh", kTanh},
      {"relu", kReLU},       {"leaky_relu", kLeakyReLU}, {"selu", kSELU}};
  for (const auto& [name, kind] : kNames)
    if (name == nonlinearity) return calculate_gain(kind, param);
  throw ValueError("Unsupported nonlinearity " + std::string(nonlinearity));
}

std::pair<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  if (tensor.dim() < 2)
    throw ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  check_floating("uniform_", tensor);
  if (tensor.numel() == 0) return tensor;
  return fill_with(tensor, rand(tensor.shape(), draw_options(tensor)) * (high - low) + low);
}

Tensor normal_(Tensor tensor, double mean, double std) {
  check_floating("normal_", tensor);
  if (!(std >= 0)) throw ValueError("normal_ expects std >= 0.0, but found std " + std::to_string(std));
  if (tensor.numel() == 0) return tensor;
  return fill_with(tensor, randn(tensor.shape(), draw_options(tensor)) * std + mean);
}

Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b) {
  check_floating("trunc_normal_", tensor);
  if (!(std > 0) || !(a < b))
    throw ValueError("trunc_normal_ expects std > 0 and a < b, got std " + std::to_string(std) + ", a " +
                     std::to_string(a) + ", b " + std::to_string(b));
  if (tensor.numel() == 0) return tensor;
  // PyTorch's method: uniform between the CDF's values at a and b, mapped back through the
  // inverse CDF, so every draw lands in [a, b] (Note [Init on the host] for erfinv).
  auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = cdf((a - mean) / std), u = cdf((b - mean) / std);
  std::vector<double> v = rand(tensor.shape(), TensorOptions().dtype(kFloat64).device(tensor.device())).cpu().to_vector<double>();
  for (double& x : v) x = std::clamp(erfinv((2 * l - 1) + x * 2 * (u - l)) * std * std::sqrt(2.0) + mean, a, b);
  return fill_with(tensor, locus::tensor(v, tensor.shape(), TensorOptions().dtype(kFloat64)).to(tensor.device()));
}

Tensor constant_(Tensor tensor, const Scalar& value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(tensor, 0); }
Tensor ones_(Tensor tensor) { return constant_(tensor, 1); }

Tensor eye_(Tensor tensor) {
  if (tensor.dim() != 2) throw ValueError("Only tensors with 2 dimensions are supported");
  return fill_with(tensor, eye(tensor.size(0), tensor.size(1), TensorOptions().dtype(tensor.dtype()).device(tensor.device())));
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  const auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(tensor, -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  const auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  return normal_(tensor, 0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

// A zero-element tensor is left as it is (PyTorch warns "Initializing zero-element tensors is a
// no-op"), also where its fan is 0, which PyTorch's kaiming_normal_ divides by.
Tensor kaiming_uniform_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  check_floating("kaiming_uniform_", tensor);
  if (tensor.numel() == 0) return tensor;
  const int64_t fan = fan_for(tensor, mode);
  const double bound = std::sqrt(3.0) * calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
  return uniform_(tensor, -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  check_floating("kaiming_normal_", tensor);
  if (tensor.numel() == 0) return tensor;
  const int64_t fan = fan_for(tensor, mode);
  return normal_(tensor, 0, calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan)));
}

Tensor orthogonal_(Tensor tensor, double gain) {
  if (tensor.dim() < 2) throw ValueError("Only tensors with 2 or more dimensions are supported");
  check_floating("orthogonal_", tensor);
  if (tensor.numel() == 0) return tensor;
  const int64_t rows = tensor.size(0), cols = tensor.numel() / rows;
  // PyTorch: the QR of a normal [rows, cols] matrix (its transpose when wider than tall), Q's
  // columns signed by R's diagonal so that the result is unique. Note [Init on the host].
  const std::vector<double> drawn =
      randn({rows, cols}, TensorOptions().dtype(kFloat64).device(tensor.device())).cpu().to_vector<double>();
  const bool wide = rows < cols;
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;  // A is m x n, m >= n
  std::vector<double> a(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) (wide ? a[j * n + i] : a[i * n + j]) = drawn[i * cols + j];
  auto at = [&](std::vector<double>& mat, int64_t i, int64_t j) -> double& { return mat[i * n + j]; };
  std::vector<std::vector<double>> reflectors;  // v_k over rows k..m-1, unit length (or empty)
  std::vector<double> r_diagonal(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    double norm = 0;
    for (int64_t i = k; i < m; ++i) norm += at(a, i, k) * at(a, i, k);
    norm = std::sqrt(norm);
    const double alpha = at(a, k, k) > 0 ? -norm : norm;  // the sign that avoids cancellation
    std::vector<double> v(static_cast<size_t>(m - k));
    for (int64_t i = k; i < m; ++i) v[i - k] = at(a, i, k);
    v[0] -= alpha;
    double vnorm = 0;
    for (double x : v) vnorm += x * x;
    vnorm = std::sqrt(vnorm);
    if (vnorm > 0) {
      for (double& x : v) x /= vnorm;
      for (int64_t j = k; j < n; ++j) {  // A[k:, k:] -= 2 v (v^T A[k:, k:])
        double dot = 0;
        for (int64_t i = k; i < m; ++i) dot += v[i - k] * at(a, i, j);
        for (int64_t i = k; i < m; ++i) at(a, i, j) -= 2 * v[i - k] * dot;
      }
    } else {
      v.clear();  // the column is zero below the diagonal already: no reflection
    }
    r_diagonal[k] = at(a, k, k);
    reflectors.push_back(std::move(v));
  }
  // Q = H_0 ... H_{n-1} applied to the first n columns of the identity, last reflector first.
  std::vector<double> q(static_cast<size_t>(m * n), 0.0);
  for (int64_t j = 0; j < n; ++j) at(q, j, j) = 1;
  for (int64_t k = n - 1; k >= 0; --k) {
    const std::vector<double>& v = reflectors[k];
    if (v.empty()) continue;
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t i = k; i < m; ++i) dot += v[i - k] * at(q, i, j);
      for (int64_t i = k; i < m; ++i) at(q, i, j) -= 2 * v[i - k] * dot;
    }
  }
  std::vector<double> out(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double sign = r_diagonal[j] > 0 ? 1.0 : r_diagonal[j] < 0 ? -1.0 : 0.0;  // PyTorch's d.sign()
      const double value = at(q, i, j) * sign * gain;
      (wide ? out[j * cols + i] : out[i * cols + j]) = value;
    }
  return fill_with(tensor, locus::tensor(out, tensor.shape(), TensorOptions().dtype(kFloat64)).to(tensor.device()));
}

}  // namespace locus::nn::init
