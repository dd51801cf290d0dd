// The Locus calls of the sort_scan golden family (tests/golden/gen_sort_scan.py).

#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

Outs pair(const ValuesIndices& r) { return {r.values, r.indices}; }

const OpRegistrar registered{
    {"sort", [](const Ctx& c) -> Outs { return pair(sort(c.x(0), c.i64("dim", -1), c.flag("descending"))); }},
    {"argsort", [](const Ctx& c) -> Outs { return {argsort(c.x(0), c.i64("dim", -1), c.flag("descending"))}; }},
    {"topk",
     [](const Ctx& c) -> Outs {
       return pair(topk(c.x(0), c.i64("k"), c.i64("dim", -1), !c.has("largest") || c.flag("largest")));
     }},
    {"kthvalue",
     [](const Ctx& c) -> Outs { return pair(kthvalue(c.x(0), c.i64("k"), c.i64("dim", -1), c.flag("keepdim"))); }},
    {"median",
     [](const Ctx& c) -> Outs {
       if (!c.has("dim")) return {median(c.x(0))};
       return pair(median(c.x(0), c.i64("dim"), c.flag("keepdim")));
     }},
    {"nonzero", [](const Ctx& c) -> Outs { return {nonzero(c.x(0))}; }},
    {"unique",
     [](const Ctx& c) -> Outs {
       const auto [values, inverse, counts] = unique(c.x(0), true, c.flag("return_inverse"), c.flag("return_counts"));
       Outs outs{values};
       if (c.flag("return_inverse")) outs.push_back(inverse);
       if (c.flag("return_counts")) outs.push_back(counts);
       return outs;
     }},
    {"cumsum", [](const Ctx& c) -> Outs { return {cumsum(c.x(0), c.i64("dim"), c.dtype())}; }},
    {"cumprod", [](const Ctx& c) -> Outs { return {cumprod(c.x(0), c.i64("dim"), c.dtype())}; }},
};

}  // namespace
}  // namespace locus::golden
