#pragma once
// How a reduction of the op table picks the dtype its kernel folds and the dtype of its result:
// the ReduceRule column of LOCUS_REDUCE_OPS (Note [Op table]).

#include <optional>

#include "locus/dtype.h"
#include "src/ops/reduce_functors.h"
#include "src/ops/op_id.h"

namespace locus::ops {

/// A reduction's dtype rule, applied to the input's dtype (or the `dtype=` argument).
enum class ReduceRule : uint8_t {
  Sum,        ///< folds the input's dtype (or dtype=); floating results kept, integers and bool give int64
  SumLike,    ///< as Sum, but folds in the result's dtype (prod: integers multiply in int64)
  FloatOnly,  ///< floating dtypes only, anything else is a DTypeError (mean, norm, var, std)
  Floating,   ///< integers and bool fold in the default float (logsumexp)
  Same,       ///< the input's dtype, bool included (amax, amin)
  AnyAll,     ///< folds truth values; the result is bool, or uint8 for uint8 (as PyTorch)
  Int64,      ///< folds truth values into an int64 count (count_nonzero)
};

/// The dtypes a reduction folds in (its kernel's input) and returns.
struct ReduceDtypes {
  DType compute;
  DType result;
};

/// The rule of `op` (a reduction of the op table): its ReduceRule column.
constexpr ReduceRule reduce_rule(OpId op) noexcept {
  switch (op) {
#define LOCUS_REDUCE_RULE_CASE(id, name, rule, ...) \
  case OpId::id:                                    \
    return ReduceRule::rule;
    LOCUS_REDUCE_OPS(LOCUS_REDUCE_RULE_CASE)
#undef LOCUS_REDUCE_RULE_CASE
    default: return ReduceRule::Same;
  }
}

/// The DTypeError of a FloatOnly reduction given `dtype`.
[[noreturn]] void refuse_reduce_dtype(OpId op, DType dtype);

/// Applies `op`'s rule to the input's dtype and the optional `dtype=` argument. DTypeError
/// where the op refuses the dtype, naming it and the conversion that helps. Inline: with `op`
/// known at the call, the rule's switch folds away.
inline ReduceDtypes resolve_reduce_dtypes(OpId op, DType input, std::optional<DType> dtype) {
  const DType in = dtype.value_or(input);
  switch (reduce_rule(op)) {
    case ReduceRule::Sum: return {in, dtype.value_or(is_floating_point(input) ? input : DType::Int64)};
    case ReduceRule::SumLike: {
      const DType result = dtype.value_or(is_floating_point(input) ? input : DType::Int64);
      return {result, result};
    }
    case ReduceRule::FloatOnly:
      if (!is_floating_point(in)) refuse_reduce_dtype(op, in);
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

/// True for a reduction without an identity (amax, amin: its functor says kNeedsElements), which
/// refuses an empty slice, as PyTorch.
constexpr bool reduce_needs_elements(OpId op) noexcept {
  switch (op) {
#define LOCUS_NEEDS_ELEMENTS_CASE(id, ...) \
  case OpId::id:                           \
    return fn::needs_elements_v<fn::id>;
    LOCUS_REDUCE_OPS(LOCUS_NEEDS_ELEMENTS_CASE)
#undef LOCUS_NEEDS_ELEMENTS_CASE
    default: return false;
  }
}

/// True when the kernels of `op` are ever called with input dtype `dtype`, so the backends
/// instantiate only those.
constexpr bool reduce_kernel_takes(ReduceRule rule, DType dtype) noexcept {
  switch (rule) {
    case ReduceRule::FloatOnly:
    case ReduceRule::Floating: return is_floating_point(dtype);
    case ReduceRule::SumLike: return is_floating_point(dtype) || dtype == DType::Int64;
    case ReduceRule::AnyAll:
    case ReduceRule::Int64: return dtype == DType::Bool;
    case ReduceRule::Sum:
    case ReduceRule::Same: return true;
  }
  return true;
}

}  // namespace locus::ops
