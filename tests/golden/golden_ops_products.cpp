// The products family's Locus calls (gen_products.py): bmm, addmm, baddbmm, mv, dot, outer,
// ger and einsum (matmul's call is the shape family's).

#include <algorithm>
#include <string>

#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

// beta and alpha as the case gives them (PyTorch's default 1 when absent).
Scalar scale(const Ctx& c, const char* key) { return c.has(key) ? c.num(key) : Scalar(1); }

// The file writes the equation's spaces as '_' (fields are space separated).
std::string equation(const Ctx& c) {
  std::string eq = c.str("eq");
  std::replace(eq.begin(), eq.end(), '_', ' ');
  return eq;
}

const OpRegistrar registered{
    {"bmm", [](const Ctx& c) -> Outs { return {bmm(c.x(0), c.x(1))}; }},
    {"addmm", [](const Ctx& c) -> Outs { return {addmm(c.x(0), c.x(1), c.x(2), scale(c, "beta"), scale(c, "alpha"))}; }},
    {"baddbmm",
     [](const Ctx& c) -> Outs { return {baddbmm(c.x(0), c.x(1), c.x(2), scale(c, "beta"), scale(c, "alpha"))}; }},
    {"mv", [](const Ctx& c) -> Outs { return {mv(c.x(0), c.x(1))}; }},
    {"dot", [](const Ctx& c) -> Outs { return {dot(c.x(0), c.x(1))}; }},
    {"outer", [](const Ctx& c) -> Outs { return {outer(c.x(0), c.x(1))}; }},
    {"ger", [](const Ctx& c) -> Outs { return {c.x(0).ger(c.x(1))}; }},
    {"einsum", [](const Ctx& c) -> Outs { return {einsum(equation(c), c.in)}; }},
};

}  // namespace
}  // namespace locus::golden
