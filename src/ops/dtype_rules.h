#pragma once
// How an elementwise op picks the dtype it computes in and the dtype of its result: the
// op table's rule column (Note [Op table]).

#include "locus/dtype.h"
#include "src/ops/op_id.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::ops {

/// An elementwise op's dtype rule. Every rule starts from PyTorch's result_type of the operands.
enum class DtypeRule : uint8_t {
  Same,       ///< computes and returns the promoted dtype (add, mul, maximum, sign)
  NoBool,     ///< as Same, but a bool dtype is a DTypeError (sub, neg, pow, floor, ...)
  Floating,   ///< integers and bool compute in the default float (div, exp, sin, ...)
  FloatOnly,  ///< floating dtypes only, anything else is a DTypeError (gelu)
  Bounds,     ///< clamp: the tensor and its bounds promote together
  Compare,    ///< computes in the promoted dtype, returns bool
  Logical,    ///< computes in the promoted dtype (a value's truth), returns bool
};

/// True when a kernel of an op with `rule` is ever called with compute dtype `dtype`, so the
/// backends instantiate only those.
constexpr bool rule_allows(DtypeRule rule, DType dtype) noexcept {
  switch (rule) {
    case DtypeRule::NoBool: return dtype != DType::Bool;
    case DtypeRule::Floating:
    case DtypeRule::FloatOnly: return is_floating_point(dtype);
    default: return true;
  }
}

/// True when the rule's result is bool whatever the inputs.
constexpr bool returns_bool(DtypeRule rule) noexcept { return rule == DtypeRule::Compare || rule == DtypeRule::Logical; }

/// The rule of an elementwise op from the op table (Same for the other ops).
DtypeRule dtype_rule(OpId op) noexcept;

/// The dtypes an elementwise call computes in and returns.
struct ElementwiseDtypes {
  DType compute;
  DType result;
};

/// Applies `op`'s rule to `common`, the operands' promoted dtype. DTypeError with PyTorch's
/// message where the op refuses the dtype.
ElementwiseDtypes resolve_dtypes(OpId op, DType common);

}  // namespace locus::ops

LOCUS_API_END
