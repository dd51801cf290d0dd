#include "src/ops/op_id.h"

#include "src/core/public_op.h"

namespace locus::ops {
namespace {

#define LOCUS_ELEMENTWISE_NAME(id, name, ...) #name,
#define LOCUS_OTHER_NAME(id, name, ...) name,
constexpr std::string_view kNames[] = {LOCUS_UNARY_OPS(LOCUS_ELEMENTWISE_NAME) LOCUS_BINARY_OPS(LOCUS_ELEMENTWISE_NAME)
                                           LOCUS_REDUCE_OPS(LOCUS_ELEMENTWISE_NAME) LOCUS_OTHER_OPS(LOCUS_OTHER_NAME)};
#undef LOCUS_ELEMENTWISE_NAME
#undef LOCUS_OTHER_NAME

#define LOCUS_UNARY_FAMILY(...) OpFamily::Unary,
#define LOCUS_BINARY_FAMILY(...) OpFamily::Binary,
#define LOCUS_REDUCE_FAMILY(...) OpFamily::Reduce,
#define LOCUS_OTHER_FAMILY(id, name, family) OpFamily::family,
constexpr OpFamily kFamilies[] = {LOCUS_UNARY_OPS(LOCUS_UNARY_FAMILY) LOCUS_BINARY_OPS(LOCUS_BINARY_FAMILY)
                                      LOCUS_REDUCE_OPS(LOCUS_REDUCE_FAMILY) LOCUS_OTHER_OPS(LOCUS_OTHER_FAMILY)};
#undef LOCUS_UNARY_FAMILY
#undef LOCUS_BINARY_FAMILY
#undef LOCUS_REDUCE_FAMILY
#undef LOCUS_OTHER_FAMILY

static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumOps && sizeof(kFamilies) / sizeof(kFamilies[0]) == kNumOps);

}  // namespace

std::string_view op_name(OpId op) noexcept { return kNames[static_cast<int>(op)]; }
OpFamily op_family(OpId op) noexcept { return kFamilies[static_cast<int>(op)]; }

std::string error_name(OpId op) { return std::string(detail::public_op_name(op_name(op))); }
std::string op_prefix(OpId op) { return detail::error_prefix(op_name(op)); }

std::optional<OpId> op_from_name(std::string_view name) noexcept {
  for (int i = 0; i < kNumOps; ++i)
    if (kNames[i] == name) return static_cast<OpId>(i);
  return std::nullopt;
}

}  // namespace locus::ops
