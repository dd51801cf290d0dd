#include "src/ops/op_id.h"

namespace locus::ops {

namespace {
constexpr std::string_view kNames[] = {
#define LOCUS_OP_NAME(id, name) name,
    LOCUS_FOR_EACH_OP(LOCUS_OP_NAME)
#undef LOCUS_OP_NAME
};
}  // namespace

std::string_view op_name(OpId op) noexcept { return kNames[static_cast<int>(op)]; }

std::optional<OpId> op_from_name(std::string_view name) noexcept {
  for (int i = 0; i < kNumOps; ++i)
    if (kNames[i] == name) return static_cast<OpId>(i);
  return std::nullopt;
}

}  // namespace locus::ops
