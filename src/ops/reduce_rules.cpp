#include "src/ops/reduce_rules.h"

#include <string>

#include "locus/errors.h"
#include "locus/factories.h"
#include "src/ops/reduce_functors.h"

namespace locus::ops {
namespace {

#define LOCUS_REDUCE_RULE(id, name, rule, ...) ReduceRule::rule,
constexpr ReduceRule kReduceRules[] = {LOCUS_REDUCE_OPS(LOCUS_REDUCE_RULE)};
#undef LOCUS_REDUCE_RULE

#define LOCUS_FIRST_REDUCE(id, ...) OpId::id,
constexpr OpId kReduceOps[] = {LOCUS_REDUCE_OPS(LOCUS_FIRST_REDUCE)};
#undef LOCUS_FIRST_REDUCE

template <class F>
constexpr bool needs_elements_v = requires { F::kNeedsElements; };
#define LOCUS_NEEDS_ELEMENTS(id, ...) needs_elements_v<fn::id>,
constexpr bool kNeedsElements[] = {LOCUS_REDUCE_OPS(LOCUS_NEEDS_ELEMENTS)};
#undef LOCUS_NEEDS_ELEMENTS

int reduce_index(OpId op) noexcept { return static_cast<int>(op) - static_cast<int>(kReduceOps[0]); }

}  // namespace

bool reduce_needs_elements(OpId op) noexcept { return kNeedsElements[reduce_index(op)]; }

ReduceRule reduce_rule(OpId op) noexcept {
  return kReduceRules[reduce_index(op)];
}

ReduceDtypes resolve_reduce_dtypes(OpId op, DType input, std::optional<DType> dtype) {
  const DType in = dtype.value_or(input);
  switch (reduce_rule(op)) {
    case ReduceRule::Sum: return {in, dtype.value_or(is_floating_point(input) ? input : DType::Int64)};
    case ReduceRule::SumLike: {
      const DType result = dtype.value_or(is_floating_point(input) ? input : DType::Int64);
      return {result, result};
    }
    case ReduceRule::FloatOnly:
      if (!is_floating_point(in))
        throw DTypeError(op_prefix(op) + "needs a floating dtype, got " + std::string(dtype_name(in)) +
                         "; convert with .to(kFloat32) first");
      return {in, in};
    case ReduceRule::Floating: {
      const DType f = is_floating_point(in) ? in : get_default_dtype();
      return {f, f};
    }
    case ReduceRule::Same: return {in, in};
    case ReduceRule::AnyAll: return {DType::Bool, in == DType::UInt8 ? DType::UInt8 : DType::Bool};
    case ReduceRule::Int64: return {DType::Bool, DType::Int64};
  }
  return {in, in};
}

}  // namespace locus::ops
