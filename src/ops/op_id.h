#pragma once
// OpId: the operations that have kernels, with their public names.

#include <cstdint>
#include <optional>
#include <string_view>

namespace locus::ops {

#define LOCUS_FOR_EACH_OP(_)                                                                      \
  _(Add, "add") _(Sub, "sub") _(Mul, "mul") _(Div, "div") _(Pow, "pow") _(Maximum, "maximum")     \
  _(Minimum, "minimum") _(Eq, "eq") _(Ne, "ne") _(Lt, "lt") _(Le, "le") _(Gt, "gt") _(Ge, "ge")   \
  _(Where, "where") _(Neg, "neg") _(Abs, "abs") _(Exp, "exp") _(Log, "log") _(Sqrt, "sqrt")       \
  _(Tanh, "tanh") _(Sigmoid, "sigmoid") _(Relu, "relu") _(Gelu, "gelu") _(Clamp, "clamp")         \
  _(Sum, "sum") _(Mean, "mean") _(Max, "max") _(Min, "min") _(Argmax, "argmax")                   \
  _(Softmax, "softmax") _(LogSoftmax, "log_softmax") _(Matmul, "matmul") _(IndexSelect, "index_select") \
  _(Gather, "gather") _(Fill, "fill_") _(Copy, "copy_") _(Rand, "rand") _(Randn, "randn")         \
  _(Randint, "randint") _(Arange, "arange") _(Cat, "cat") _(Stack, "stack")

/// Every operation with a kernel entry.
enum class OpId : uint8_t {
#define LOCUS_OP_ENUM(id, name) id,
  LOCUS_FOR_EACH_OP(LOCUS_OP_ENUM)
#undef LOCUS_OP_ENUM
      kCount
};

inline constexpr int kNumOps = static_cast<int>(OpId::kCount);

/// The public name ("add").
std::string_view op_name(OpId op) noexcept;
/// The OpId for a public name, if any.
std::optional<OpId> op_from_name(std::string_view name) noexcept;

}  // namespace locus::ops
