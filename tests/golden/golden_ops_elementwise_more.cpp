// The Locus calls of the elementwise_more family (gen_elementwise_more.py): the elementwise ops and
// activations added after the first op set, their in-place forms and their gradients.

#include <optional>

#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

std::optional<double> opt_f64(const Ctx& c, const char* key) {
  if (!c.has(key)) return std::nullopt;
  return c.f64(key);
}

// The tensor-or-number operand of lerp, and a copy of the first input for the in-place forms.
Tensor lerp_of(const Ctx& c, const Tensor& start) {
  return c.has("weight") ? lerp(start, c.x(1), c.num("weight")) : lerp(start, c.x(1), c.x(2));
}

#define LOCUS_MORE_UNARY(NAME) \
  {#NAME, [](const Ctx& c) -> Outs { return {locus::NAME(c.x(0))}; }}
#define LOCUS_MORE_BINARY(NAME) \
  {#NAME, [](const Ctx& c) -> Outs { return {locus::NAME(c.x(0), c.x(1))}; }}
#define LOCUS_MORE_INPLACE(NAME) \
  {#NAME "_", [](const Ctx& c) -> Outs { Tensor x = c.x(0).clone(); x.NAME##_(); return {x}; }}

const OpRegistrar registered{
    LOCUS_MORE_UNARY(tan),
    LOCUS_MORE_UNARY(sinh),
    LOCUS_MORE_UNARY(cosh),
    LOCUS_MORE_UNARY(asin),
    LOCUS_MORE_UNARY(acos),
    LOCUS_MORE_UNARY(atan),
    LOCUS_MORE_UNARY(log2),
    LOCUS_MORE_UNARY(log10),
    LOCUS_MORE_UNARY(exp2),
    LOCUS_MORE_UNARY(reciprocal),
    LOCUS_MORE_UNARY(square),
    LOCUS_MORE_UNARY(frac),
    LOCUS_MORE_UNARY(isnan),
    LOCUS_MORE_UNARY(isinf),
    LOCUS_MORE_UNARY(isfinite),
    LOCUS_MORE_UNARY(silu),
    LOCUS_MORE_UNARY(mish),
    LOCUS_MORE_UNARY(hardsigmoid),
    LOCUS_MORE_UNARY(hardswish),
    LOCUS_MORE_UNARY(logsigmoid),
    LOCUS_MORE_UNARY(selu),
    LOCUS_MORE_UNARY(relu6),
    LOCUS_MORE_BINARY(atan2),
    LOCUS_MORE_BINARY(hypot),
    {"nan_to_num",
     [](const Ctx& c) -> Outs {
       return {nan_to_num(c.x(0), c.f64("nan", 0.0), opt_f64(c, "posinf"), opt_f64(c, "neginf"))};
     }},
    {"leaky_relu", [](const Ctx& c) -> Outs { return {leaky_relu(c.x(0), c.f64("negative_slope", 0.01))}; }},
    {"elu", [](const Ctx& c) -> Outs { return {elu(c.x(0), c.f64("alpha", 1.0))}; }},
    {"softplus", [](const Ctx& c) -> Outs { return {softplus(c.x(0), c.f64("beta", 1.0), c.f64("threshold", 20.0))}; }},
    {"hardtanh", [](const Ctx& c) -> Outs { return {hardtanh(c.x(0), c.f64("min_val", -1.0), c.f64("max_val", 1.0))}; }},
    {"gelu_tanh", [](const Ctx& c) -> Outs { return {gelu(c.x(0), "tanh")}; }},
    {"clamp_min", [](const Ctx& c) -> Outs { return {clamp_min(c.x(0), c.num("bound"))}; }},
    {"clamp_max", [](const Ctx& c) -> Outs { return {clamp_max(c.x(0), c.num("bound"))}; }},
    {"lerp", [](const Ctx& c) -> Outs { return {lerp_of(c, c.x(0))}; }},
    {"addcmul", [](const Ctx& c) -> Outs { return {addcmul(c.x(0), c.x(1), c.x(2), c.num("value"))}; }},
    {"addcdiv", [](const Ctx& c) -> Outs { return {addcdiv(c.x(0), c.x(1), c.x(2), c.num("value"))}; }},
    // in place, on a copy of the first input, with the arguments gen_inplace gives PyTorch
    LOCUS_MORE_INPLACE(tan),
    LOCUS_MORE_INPLACE(reciprocal),
    LOCUS_MORE_INPLACE(square),
    LOCUS_MORE_INPLACE(frac),
    LOCUS_MORE_INPLACE(nan_to_num),
    {"clamp_min_", [](const Ctx& c) -> Outs { Tensor x = c.x(0).clone(); x.clamp_min_(1); return {x}; }},
    {"atan2_", [](const Ctx& c) -> Outs { Tensor x = c.x(0).clone(); x.atan2_(c.x(1)); return {x}; }},
    {"hypot_", [](const Ctx& c) -> Outs { Tensor x = c.x(0).clone(); x.hypot_(c.x(1)); return {x}; }},
    {"lerp_", [](const Ctx& c) -> Outs { Tensor x = c.x(0).clone(); x.lerp_(c.x(1), 0.25); return {x}; }},
    {"addcmul_", [](const Ctx& c) -> Outs { Tensor x = c.x(0).clone(); x.addcmul_(c.x(1), c.x(2), 0.5); return {x}; }},
    {"addcdiv_", [](const Ctx& c) -> Outs { Tensor x = c.x(0).clone(); x.addcdiv_(c.x(1), c.x(2), 0.5); return {x}; }},
};

#undef LOCUS_MORE_UNARY
#undef LOCUS_MORE_BINARY
#undef LOCUS_MORE_INPLACE

}  // namespace
}  // namespace locus::golden
