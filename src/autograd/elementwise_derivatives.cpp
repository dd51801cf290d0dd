// The backward of every elementwise op, generated from the derivative columns of the op table
// (Note [Op table] in src/ops/op_table.h). Each gradient runs in the output's dtype and is summed
// back to its input's shape and dtype; only the gradients an input needs are computed.

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/elementwise_call.h"

namespace locus::autograd {
namespace {

using ops::OpId;

// ---- helpers the table's expressions use --------------------------------------------------

// d/dx x*Phi(x) = Phi(x) + x*phi(x), in one pass (the GeluBackward op).
Tensor gelu_backward(const Tensor& g, const Tensor& x) { return ops::run_binary(ops::OpId::GeluBackward, g, x); }

// GeluBackward's derivative in x, for double backward: d/dx (a (Phi(x) + x phi(x))) =
// a phi(x) (2 - x^2), times the incoming gradient g.
Tensor gelu_backward_x(const Tensor& g, const Tensor& a, const Tensor& x) {
  const Tensor pdf = exp(x * x * -0.5) * 0.3989422804014327;
  return g * a * pdf * (2.0 - x * x);
}

// 1 where lo <= x <= hi (bounds included, as PyTorch), else 0.
Tensor within_bounds(const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  Tensor keep = ones_like(x);
  if (lo) keep = keep * (x >= *lo).to(x.dtype());
  if (hi) keep = keep * (x <= *hi).to(x.dtype());
  return keep;
}

// maximum/minimum: the winner takes the gradient, ties split it evenly (as PyTorch).
Tensor extremum_backward(const Tensor& g, const Tensor& self, const Tensor& other, bool is_max) {
  const Tensor wins = (is_max ? self > other : self < other).to(g.dtype());
  return g * (wins + (self == other).to(g.dtype()) * 0.5);
}

// d(a^b)/da = b * a^(b-1), 0 where b == 0 (so 0^0 has no NaN gradient).
Tensor pow_backward_base(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor&) {
  const Tensor d = g * b * pow(a, b - 1);
  return where(b == 0, zeros_like(d), d);
}

// d(a^b)/db = a^b * log(a), 0 where a == 0 and b >= 0 (the limit).
Tensor pow_backward_exponent(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y) {
  const Tensor d = g * y * log(a);
  return where(logical_and(a == 0, b >= 0), zeros_like(d), d);
}

// ---- the activations: PyTorch's backward formulas (derivatives.yaml and its kernels) -------

Tensor zero_where(const Tensor& condition, const Tensor& d) { return where(condition, zeros_like(d), d); }

// ReLU's gradient in one pass (the ReluBackward op): g where the output y is above 0.
Tensor threshold_backward(const Tensor& g, const Tensor& y) { return ops::run_binary(ops::OpId::ReluBackward, g, y); }

// negative_slope at and below 0, as PyTorch's leaky_relu_backward (x > 0 ? g : g * slope).
Tensor leaky_relu_backward(const Tensor& g, const Tensor& x, const ops::ElementwiseScalars& s) {
  return where(x > 0, g, g * s.alpha);
}

// scale * alpha * exp(x) at and below 0, scale above (selu: scale and alpha are its constants).
Tensor elu_backward(const Tensor& g, const Tensor& x, const ops::ElementwiseScalars& s) {
  const double negcoef = s.alpha.to_double() * s.beta.to_double();
  return where(x <= 0, g * negcoef * exp(x), g * s.beta);
}

// g * e / (e + 1) with e = exp(beta x), and g itself where beta x > threshold (the forward is x).
Tensor softplus_backward(const Tensor& g, const Tensor& x, const ops::ElementwiseScalars& s) {
  const Tensor bx = x * s.beta;
  const Tensor e = exp(bx);
  return where(bx > s.threshold, g, g * e / (e + 1));
}

// Zero outside the open interval (lo, hi): at the bounds too, unlike clamp's.
Tensor hardtanh_backward(const Tensor& g, const Tensor& x, const ops::ElementwiseScalars& s) {
  return zero_where(logical_or(x <= s.lo, x >= s.hi), g);
}

Tensor silu_backward(const Tensor& g, const Tensor& x) {
  const Tensor sig = sigmoid(x);
  return g * sig * (1 + x * (1 - sig));
}

Tensor mish_backward(const Tensor& g, const Tensor& x) {
  const Tensor sig = sigmoid(x);
  const Tensor t = tanh(log1p(exp(x)));
  return g * (t + x * sig * (1 - t * t));
}

// g / 6 inside (-3, 3): PyTorch multiplies by 1/6 rounded to float even for float64 (its
// kernel's constant is 1.0f / 6.0f), so the same constant gives PyTorch's float64 gradients.
Tensor hardsigmoid_backward(const Tensor& g, const Tensor& x) {
  constexpr double kOneSixth = static_cast<double>(1.0f / 6.0f);
  return zero_where(logical_not(logical_and(x > -3, x < 3)), g * kOneSixth);
}

// 0 below -3, g (x / 3 + 0.5) on [-3, 3], g above (PyTorch's piecewise slope).
Tensor hardswish_backward(const Tensor& g, const Tensor& x) {
  return zero_where(x < -3, where(x <= 3, g * (x / 3 + 0.5), g));
}

// g (max_deriv - sign z / (1 + z)), z = exp(-|x|): g (1 - z / (1 + z)) below 0, g z / (1 + z) above.
Tensor logsigmoid_backward(const Tensor& g, const Tensor& x) {
  const Tensor z = exp(-abs(x));
  const Tensor q = z / (z + 1);
  return where(x < 0, g * (1 - q), g * q);
}

// d/dx of 0.5 x (1 + tanh(k (x + c x^3))), as PyTorch's GeluBackward for approximate="tanh".
Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x) {
  constexpr double kBeta = 0.79788456080286535588, kKappa = 0.044715;
  const Tensor x_sq = x * x;
  const Tensor inner = (x + x_sq * x * kKappa) * kBeta;
  const Tensor t = tanh(inner);
  const Tensor left = x * 0.5, right = t + 1;
  const Tensor left_derivative = right * 0.5;
  const Tensor right_derivative = left * (1 - t * t) * kBeta * (x_sq * (3 * kKappa) + 1);
  return g * (left_derivative + right_derivative);
}

[[noreturn]] Tensor not_differentiable(const char* op) {
  throw NotImplementedError(std::string("[locus::") + op + "] has no derivative (as in PyTorch); use div(a, b, \"floor\"), "
                            "whose gradient is zero, or detach the inputs");
}

#define NO_GRAD Tensor()

// ---- the tables ---------------------------------------------------------------------------

using UnaryBackward = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& y, const std::optional<Scalar>& lo,
                                 const std::optional<Scalar>& hi, const ops::ElementwiseScalars& s);
using BinaryBackward = Tensor (*)(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y, const Scalar& alpha);

#define LOCUS_UNARY_BACKWARD(id, name, rule, grad)                                                          \
  [](const Tensor& g, const Tensor& x, const Tensor& y, const std::optional<Scalar>& lo,                  \
     const std::optional<Scalar>& hi, const ops::ElementwiseScalars& s) -> Tensor { return grad; },
constexpr UnaryBackward kUnaryBackward[] = {LOCUS_UNARY_OPS(LOCUS_UNARY_BACKWARD)};
#undef LOCUS_UNARY_BACKWARD

#define LOCUS_BINARY_BACKWARD_A(id, name, rule, grad_a, grad_b)                                                     \
  [](const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y, const Scalar& alpha) -> Tensor { return grad_a; },
#define LOCUS_BINARY_BACKWARD_B(id, name, rule, grad_a, grad_b)                                                     \
  [](const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y, const Scalar& alpha) -> Tensor { return grad_b; },
constexpr BinaryBackward kBackwardA[] = {LOCUS_BINARY_OPS(LOCUS_BINARY_BACKWARD_A)};
constexpr BinaryBackward kBackwardB[] = {LOCUS_BINARY_OPS(LOCUS_BINARY_BACKWARD_B)};
#undef LOCUS_BINARY_BACKWARD_A
#undef LOCUS_BINARY_BACKWARD_B

// Note [Which values a formula reads]
// A backward holds only the values its formula reads (relu's reads its output, mul's both
// operands, add's neither): holding more would keep buffers alive for nothing and, worse,
// make an in-place op on a value the formula never reads stop the backward with a version
// error PyTorch does not raise (`out += identity` on an add's result). The op table writes
// each formula as an expression over g, x (a, b) and y; the table below is read off the
// expression's own text at compile time: a formula reads x when the name x stands alone in it.
constexpr bool reads(std::string_view formula, char name) {
  auto is_word = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
  for (size_t i = 0; i < formula.size(); ++i)
    if (formula[i] == name && (i == 0 || !is_word(formula[i - 1])) && (i + 1 == formula.size() || !is_word(formula[i + 1])))
      return true;
  return false;
}
struct Reads {
  bool x, y;  // unary: input and output; binary: `x` is a, and b/out are below
  bool b = false;
};
#define LOCUS_UNARY_READS(id, name, rule, grad) Reads{reads(#grad, 'x'), reads(#grad, 'y')},
constexpr Reads kUnaryReads[] = {LOCUS_UNARY_OPS(LOCUS_UNARY_READS)};
#undef LOCUS_UNARY_READS
#define LOCUS_BINARY_READS_A(id, name, rule, grad_a, grad_b) Reads{reads(#grad_a, 'a'), reads(#grad_a, 'y'), reads(#grad_a, 'b')},
#define LOCUS_BINARY_READS_B(id, name, rule, grad_a, grad_b) Reads{reads(#grad_b, 'a'), reads(#grad_b, 'y'), reads(#grad_b, 'b')},
constexpr Reads kReadsA[] = {LOCUS_BINARY_OPS(LOCUS_BINARY_READS_A)};
constexpr Reads kReadsB[] = {LOCUS_BINARY_OPS(LOCUS_BINARY_READS_B)};
#undef LOCUS_BINARY_READS_A
#undef LOCUS_BINARY_READS_B
static_assert(kUnaryReads[static_cast<int>(OpId::Relu)].y && !kUnaryReads[static_cast<int>(OpId::Relu)].x);

#define LOCUS_BACKWARD_NAME(id, ...) #id "Backward0",
constexpr const char* kNames[] = {LOCUS_UNARY_OPS(LOCUS_BACKWARD_NAME) LOCUS_BINARY_OPS(LOCUS_BACKWARD_NAME)};
#undef LOCUS_BACKWARD_NAME

constexpr int kNumUnary = static_cast<int>(sizeof(kUnaryBackward) / sizeof(kUnaryBackward[0]));

Tensor as(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

void record_unary(OpId op, const Tensor& x, const ops::ElementwiseScalars& s, const Tensor& out) {
  const DType dt = out.dtype();
  const Reads r = kUnaryReads[static_cast<int>(op)];
  const Tensor X = r.x ? x.detach() : Tensor(), Y = r.y ? out.detach() : Tensor();
  const Shape shape = x.shape();
  const DType dx = x.dtype();
  std::optional<Scalar> lo, hi;
  if (s.has_lo) lo = s.lo;
  if (s.has_hi) hi = s.hi;
  const UnaryBackward backward = kUnaryBackward[static_cast<int>(op)];
  record(out, kNames[static_cast<int>(op)], [=](const Tensor& g) -> std::vector<Tensor> {
    return {sum_to(backward(g, X.defined() ? as(X, dt) : X, Y, lo, hi, s), shape, dx)};
  }, {&x}, {{X, x}, {Y, out}});
}

void record_binary(OpId op, const Tensor& a, const Tensor* b, const ops::ElementwiseScalars& s, const Tensor& out) {
  const DType dt = out.dtype();
  const Device device = out.device();
  const bool need_a = a.requires_grad(), need_b = b && b->requires_grad();
  const int i = static_cast<int>(op) - kNumUnary;
  const bool read_a = (need_a && kReadsA[i].x) || (need_b && kReadsB[i].x);
  const bool read_b = (need_a && kReadsA[i].b) || (need_b && kReadsB[i].b);
  const bool read_y = (need_a && kReadsA[i].y) || (need_b && kReadsB[i].y);
  const Tensor A = read_a ? a.detach() : Tensor(), B = b && read_b ? b->detach() : Tensor(), Y = read_y ? out.detach() : Tensor();
  const bool has_b = b != nullptr;
  const Shape sa = a.shape(), sb = b ? b->shape() : Shape();
  const DType da = a.dtype(), db = b ? b->dtype() : dt;
  const Scalar alpha = s.alpha, other = s.other;
  const BinaryBackward backward_a = kBackwardA[i], backward_b = kBackwardB[i];
  // A number operand is a constant: it takes part in the formulas as a 0-dim tensor.
  auto operand_b = [=] {
    if (has_b) return B.defined() ? as(B, dt) : B;
    return full({}, other, TensorOptions().dtype(dt).device(device));
  };
  auto backward = [=](const Tensor& g) -> std::vector<Tensor> {
    const Tensor x = A.defined() ? as(A, dt) : A, y = operand_b();
    std::vector<Tensor> grads(has_b ? 2 : 1);
    if (need_a) grads[0] = sum_to(backward_a(g, x, y, Y, alpha), sa, da);
    if (need_b) grads[1] = sum_to(backward_b(g, x, y, Y, alpha), sb, db);
    return grads;
  };
  if (b) record(out, kNames[static_cast<int>(op)], backward, {&a, b}, {{A, a}, {B, *b}, {Y, out}});
  else record(out, kNames[static_cast<int>(op)], backward, {&a}, {{A, a}, {Y, out}});
}

void record_where(const Tensor& condition, const Tensor& a, const Tensor& b, const Tensor& out) {
  const Tensor C = condition.detach();
  const Shape sa = a.shape(), sb = b.shape();
  const DType da = a.dtype(), db = b.dtype();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  record(out, "WhereBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    const Tensor zero = zeros_like(g);
    std::vector<Tensor> grads(2);
    if (need_a) grads[0] = sum_to(where(C, g, zero), sa, da);
    if (need_b) grads[1] = sum_to(where(C, zero, g), sb, db);
    return grads;
  }, {&a, &b}, {{C, condition}});
}

}  // namespace

void record_elementwise(OpId op, const Tensor* const* inputs, int n, const ops::ElementwiseScalars& scalars,
                        const Tensor& out) {
  if (op == OpId::Where) {
    if (needs_grad({inputs[1], inputs[2]})) record_where(*inputs[0], *inputs[1], *inputs[2], out);
    return;
  }
  if (ops::op_family(op) == ops::OpFamily::Unary) {
    if (needs_grad({inputs[0]})) record_unary(op, *inputs[0], scalars, out);
    return;
  }
  const Tensor* b = n > 1 ? inputs[1] : nullptr;
  if (b ? needs_grad({inputs[0], b}) : needs_grad({inputs[0]})) record_binary(op, *inputs[0], b, scalars, out);
}

}  // namespace locus::autograd
