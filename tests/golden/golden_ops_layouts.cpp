// The Locus calls of the `layouts` golden family (gen_layouts.py) that no other family has: F.linear.
// Every other op of the family is replayed by the call its own family registers, with the same
// argument keys.

#include "locus/locus.h"
#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

namespace F = locus::nn::functional;

const OpRegistrar registered{
    // The bias is optional: an undefined tensor when the case has none.
    {"linear", [](const Ctx& c) -> Outs { return {F::linear(c.named("input"), c.named("weight"), c.named("bias"))}; }},
};

}  // namespace
}  // namespace locus::golden
