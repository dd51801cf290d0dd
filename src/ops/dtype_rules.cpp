#include "src/ops/dtype_rules.h"

#include <string>

#include "locus/errors.h"

namespace locus::ops {
namespace {

#define LOCUS_RULE(id, name, rule, ...) DtypeRule::rule,
constexpr DtypeRule kElementwiseRules[] = {LOCUS_UNARY_OPS(LOCUS_RULE) LOCUS_BINARY_OPS(LOCUS_RULE)};
#undef LOCUS_RULE
constexpr int kNumElementwise = static_cast<int>(sizeof(kElementwiseRules) / sizeof(kElementwiseRules[0]));

// PyTorch's words where it has special ones, so a user searching the message finds the fix.
std::string bool_refusal(OpId op) {
  switch (op) {
    case OpId::Sub:
      return op_prefix(OpId::Sub) + "subtraction, the `-` operator, with two bool tensors is not supported; use the `^` operator "
             "or logical_xor() instead";
    case OpId::Neg:
      return op_prefix(OpId::Neg) + "negation, the `-` operator, on a bool tensor is not supported; to invert a mask, use the "
             "`~` operator or logical_not() instead";
    default:
      return op_prefix(op) + "is not supported for bool tensors; convert with .to(kInt64) first";
  }
}

}  // namespace

DtypeRule dtype_rule(OpId op) noexcept {
  const int i = static_cast<int>(op);
  return i < kNumElementwise ? kElementwiseRules[i] : DtypeRule::Same;
}

ElementwiseDtypes resolve_dtypes(OpId op, DType common) {
  switch (dtype_rule(op)) {
    case DtypeRule::NoBool:
      if (common == DType::Bool) throw DTypeError(bool_refusal(op));
      return {common, common};
    case DtypeRule::Floating: {
      const DType f = is_floating_point(common) ? common : get_default_dtype();
      return {f, f};
    }
    case DtypeRule::FloatOnly:
      if (!is_floating_point(common))
        throw DTypeError(op_prefix(op) + "needs a floating dtype, got " +
                         std::string(dtype_name(common)) + "; convert with .to(kFloat32) first");
      return {common, common};
    case DtypeRule::Bounds:  // clamp: bool tensors with bool bounds have no order to clamp in
      if (common == DType::Bool)
        throw DTypeError(op_prefix(op) + "is not supported for bool tensors with bool bounds; "
                         "convert with .to(kInt64) or give integer bounds");
      return {common, common};
    case DtypeRule::Compare:
    case DtypeRule::Logical: return {common, DType::Bool};
    default: return {common, common};
  }
}

}  // namespace locus::ops
