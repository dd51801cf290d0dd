#pragma once
// OpId: every operation of the op table (src/ops/op_table.h), with its public name.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/ops/op_table.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::ops {

/// Every operation, in op-table order: the unary elementwise ops, the binary ones, the
/// reductions, the rest.
enum class OpId : uint8_t {
#define LOCUS_OP_ENUM(id, ...) id,
  LOCUS_UNARY_OPS(LOCUS_OP_ENUM) LOCUS_BINARY_OPS(LOCUS_OP_ENUM) LOCUS_REDUCE_OPS(LOCUS_OP_ENUM)
      LOCUS_OTHER_OPS(LOCUS_OP_ENUM)
#undef LOCUS_OP_ENUM
      kCount
};

inline constexpr int kNumOps = static_cast<int>(OpId::kCount);

/// The kernel family an op's kernel belongs to.
enum class OpFamily : uint8_t {
  Unary, Binary, Elementwise, Reduce, Softmax, Matmul, Sort, Scan, Index, Random, Unscale, Im2col, Composite
};

/// The public name ("add"; "div" for every rounding mode of div).
std::string_view op_name(OpId op) noexcept;
/// The OpId for a public name, if any (the first op of that name).
std::optional<OpId> op_from_name(std::string_view name) noexcept;
/// The family of `op`.
OpFamily op_family(OpId op) noexcept;
/// The name errors of `op` show: its own, or that of the public function it runs inside (Note
/// [Public op names] in src/core/public_op.h). For error paths only: it builds a string.
std::string error_name(OpId op);
/// The prefix of `op`'s error messages: "[locus::add] ", "[locus::cross_entropy] " inside it.
std::string op_prefix(OpId op);

}  // namespace locus::ops

LOCUS_API_END
