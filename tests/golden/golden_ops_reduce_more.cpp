// The Locus calls of the reduce_more golden family (tests/golden/gen_reduce_more.py).

#include <cmath>
#include <cstdlib>
#include <optional>

#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

// The reduced dims of a case: `dims=0,2`, `dim=1`, or none (all).
Shape dims_of(const Ctx& c) {
  if (c.has("dims")) return c.list("dims");
  if (c.has("dim")) return Shape{c.i64("dim")};
  return {};
}

std::optional<int64_t> correction_of(const Ctx& c) {
  if (c.has("correction")) return c.i64("correction");
  return std::nullopt;
}

bool unbiased_of(const Ctx& c) { return !c.has("unbiased") || c.flag("unbiased"); }

// var / std with the case's spelling: correction=, unbiased=, dims or nothing.
template <class Plain, class Dims, class Corrected>
Tensor spread(const Ctx& c, Plain plain, Dims dims, Corrected corrected) {
  if (c.has("correction")) return corrected(c.x(0), std::optional<Shape>(dims_of(c)), correction_of(c), c.flag("keepdim"));
  if (c.has("dims") || c.has("dim")) return dims(c.x(0), dims_of(c), unbiased_of(c), c.flag("keepdim"));
  return plain(c.x(0), unbiased_of(c));
}

Tensor norm_of(const Ctx& c) {
  const Tensor& x = c.x(0);
  if (c.has("p") && c.str("p") == "fro") return norm(x, "fro", dims_of(c), c.flag("keepdim"));
  const double p = c.f64("p", 2);
  if (!c.has("dims") && !c.has("dim")) return norm(x, p);
  return norm(x, p, dims_of(c), c.flag("keepdim"));
}

const OpRegistrar registered{
    {"prod",
     [](const Ctx& c) -> Outs {
       if (c.has("dim") || c.has("dims")) return {prod(c.x(0), dims_of(c)[0], c.flag("keepdim"))};
       return {prod(c.x(0))};
     }},
    {"amax", [](const Ctx& c) -> Outs { return {amax(c.x(0), dims_of(c), c.flag("keepdim"))}; }},
    {"amin", [](const Ctx& c) -> Outs { return {amin(c.x(0), dims_of(c), c.flag("keepdim"))}; }},
    {"logsumexp", [](const Ctx& c) -> Outs { return {logsumexp(c.x(0), dims_of(c), c.flag("keepdim"))}; }},
    {"norm", [](const Ctx& c) -> Outs { return {norm_of(c)}; }},
    {"var",
     [](const Ctx& c) -> Outs {
       return {spread(
           c, [](const Tensor& x, bool u) { return var(x, u); },
           [](const Tensor& x, const Shape& d, bool u, bool k) { return var(x, d, u, k); },
           [](const Tensor& x, const std::optional<Shape>& d, std::optional<int64_t> cr, bool k) { return var(x, d, cr, k); })};
     }},
    {"std",
     [](const Ctx& c) -> Outs {
       return {spread(
           c, [](const Tensor& x, bool u) { return locus::std(x, u); },
           [](const Tensor& x, const Shape& d, bool u, bool k) { return locus::std(x, d, u, k); },
           [](const Tensor& x, const std::optional<Shape>& d, std::optional<int64_t> cr, bool k) {
             return locus::std(x, d, cr, k);
           })};
     }},
    {"var_mean",
     [](const Ctx& c) -> Outs {
       auto [v, m] = c.has("dims") ? var_mean(c.x(0), dims_of(c), unbiased_of(c), c.flag("keepdim"))
                                   : var_mean(c.x(0), unbiased_of(c));
       return {v, m};
     }},
    {"std_mean",
     [](const Ctx& c) -> Outs {
       auto [s, m] = c.has("dims") ? std_mean(c.x(0), dims_of(c), unbiased_of(c), c.flag("keepdim"))
                                   : std_mean(c.x(0), unbiased_of(c));
       return {s, m};
     }},
    {"any",
     [](const Ctx& c) -> Outs { return {c.has("dim") ? any(c.x(0), c.i64("dim"), c.flag("keepdim")) : any(c.x(0))}; }},
    {"all",
     [](const Ctx& c) -> Outs { return {c.has("dim") ? all(c.x(0), c.i64("dim"), c.flag("keepdim")) : all(c.x(0))}; }},
    {"count_nonzero", [](const Ctx& c) -> Outs { return {count_nonzero(c.x(0), dims_of(c))}; }},
};

}  // namespace
}  // namespace locus::golden
