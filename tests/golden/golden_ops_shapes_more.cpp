// The Locus calls of the shapes_more family (gen_shapes_more.py): shape ops, masks, scatters and
// tensor indexing. `idx=` holds an index list in the generator's syntax (parse_index below).

#include <string>

#include "locus/locus.h"
#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

using namespace locus::indexing;
namespace F = nn::functional;

// "1:-1:2" -> Slice(1, -1, 2); empty fields are None.
Slice parse_slice(const std::string& tok) {
  std::optional<int64_t> part[3];
  size_t start = 0;
  for (int k = 0; k < 3; ++k) {
    const size_t colon = tok.find(':', start);
    const std::string field = tok.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!field.empty()) part[k] = std::stoll(field);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return Slice(part[0], part[1], part[2]);
}

// The generator's index syntax: comma-separated entries, `t` taking the next tensor input from
// position `first`.
std::vector<TensorIndex> parse_index(const Ctx& c, size_t first) {
  std::vector<TensorIndex> out;
  const std::string& text = c.str("idx");
  size_t start = 0, next = first;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string tok = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (tok == "...") out.emplace_back("...");
    else if (tok == "None") out.emplace_back(None);
    else if (tok == "True" || tok == "False") out.emplace_back(tok == "True");
    else if (tok == "t") out.emplace_back(c.x(next++));
    else if (tok.find(':') != std::string::npos) out.emplace_back(parse_slice(tok));
    else out.emplace_back(static_cast<int64_t>(std::stoll(tok)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<int64_t> opt_dim(const Ctx& c) { return c.has("dim") ? std::optional<int64_t>(c.i64("dim")) : std::nullopt; }

std::vector<int64_t> vec(const Shape& s) { return {s.begin(), s.end()}; }

F::PadMode pad_mode(const std::string& m) {
  if (m == "reflect") return kReflect;
  if (m == "replicate") return kReplicate;
  return kConstant;
}

const OpRegistrar registered{
    {"chunk", [](const Ctx& c) -> Outs { return chunk(c.x(0), c.i64("chunks"), c.i64("dim")); }},
    {"split",
     [](const Ctx& c) -> Outs {
       if (c.has("sizes")) return split(c.x(0), vec(c.list("sizes")), c.i64("dim"));
       return split(c.x(0), c.i64("size"), c.i64("dim"));
     }},
    {"unbind", [](const Ctx& c) -> Outs { return c.x(0).unbind(c.i64("dim")); }},
    {"repeat", [](const Ctx& c) -> Outs { return {c.x(0).repeat(c.list("reps"))}; }},
    {"repeat_interleave", [](const Ctx& c) -> Outs { return {repeat_interleave(c.x(0), c.i64("repeats"), opt_dim(c))}; }},
    {"repeat_interleave_t", [](const Ctx& c) -> Outs { return {c.x(0).repeat_interleave(c.x(1), opt_dim(c))}; }},
    {"flip", [](const Ctx& c) -> Outs { return {flip(c.x(0), c.list("dims"))}; }},
    {"roll", [](const Ctx& c) -> Outs { return {c.x(0).roll(c.list("shifts"), c.has("dims") ? c.list("dims") : Shape{})}; }},
    {"tril", [](const Ctx& c) -> Outs { return {tril(c.x(0), c.i64("diagonal"))}; }},
    {"triu", [](const Ctx& c) -> Outs { return {c.x(0).triu(c.i64("diagonal"))}; }},
    {"diag", [](const Ctx& c) -> Outs { return {diag(c.x(0), c.i64("diagonal"))}; }},
    {"diagonal", [](const Ctx& c) -> Outs { return {c.x(0).diagonal(c.i64("offset"), c.i64("dim1"), c.i64("dim2"))}; }},
    {"movedim", [](const Ctx& c) -> Outs { return {movedim(c.x(0), c.list("src"), c.list("dst"))}; }},
    {"swapaxes", [](const Ctx& c) -> Outs { return {swapaxes(c.x(0), c.i64("d0"), c.i64("d1"))}; }},
    {"swapdims", [](const Ctx& c) -> Outs { return {c.x(0).swapdims(c.i64("d0"), c.i64("d1"))}; }},
    {"unflatten", [](const Ctx& c) -> Outs { return {c.x(0).unflatten(c.i64("dim"), c.list("sizes"))}; }},
    {"expand_as", [](const Ctx& c) -> Outs { return {c.x(0).expand_as(c.x(1))}; }},
    {"view_as", [](const Ctx& c) -> Outs { return {c.x(0).view_as(c.x(1))}; }},
    {"reshape_as", [](const Ctx& c) -> Outs { return {c.x(0).reshape_as(c.x(1))}; }},
    {"meshgrid", [](const Ctx& c) -> Outs { return meshgrid(c.in, c.str("indexing")); }},
    {"pad",
     [](const Ctx& c) -> Outs {
       return {F::pad(c.x(0), F::PadFuncOptions(vec(c.list("pad"))).mode(pad_mode(c.str("mode"))).value(c.f64("value", 0)))};
     }},
    {"one_hot", [](const Ctx& c) -> Outs { return {F::one_hot(c.x(0), c.i64("classes"))}; }},
    {"masked_fill", [](const Ctx& c) -> Outs { return {c.x(0).masked_fill(c.x(1), c.num("value"))}; }},
    {"masked_fill_t", [](const Ctx& c) -> Outs { return {masked_fill(c.x(0), c.x(1), c.x(2))}; }},
    {"masked_select", [](const Ctx& c) -> Outs { return {masked_select(c.x(0), c.x(1))}; }},
    {"masked_scatter", [](const Ctx& c) -> Outs { return {c.x(0).masked_scatter(c.x(1), c.x(2))}; }},
    {"scatter", [](const Ctx& c) -> Outs { return {scatter(c.x(0), c.i64("dim"), c.x(1), c.x(2))}; }},
    {"scatter_value", [](const Ctx& c) -> Outs { return {c.x(0).scatter(c.i64("dim"), c.x(1), c.num("value"))}; }},
    {"scatter_add", [](const Ctx& c) -> Outs { return {c.x(0).scatter_add(c.i64("dim"), c.x(1), c.x(2))}; }},
    {"index_add",
     [](const Ctx& c) -> Outs { return {index_add(c.x(0), c.i64("dim"), c.x(1), c.x(2), c.has("alpha") ? c.num("alpha") : Scalar(1))}; }},
    {"take_along_dim", [](const Ctx& c) -> Outs { return {take_along_dim(c.x(0), c.x(1), opt_dim(c))}; }},
    {"index_put",
     [](const Ctx& c) -> Outs {
       std::vector<Tensor> indices(c.in.begin() + 2, c.in.end());
       return {c.x(0).index_put(indices, c.x(1), c.flag("accumulate"))};
     }},
    {"index", [](const Ctx& c) -> Outs { return {c.x(0).index(parse_index(c, 1))}; }},
    {"index_put_",
     [](const Ctx& c) -> Outs {
       Tensor y = c.x(0).clone();
       if (c.has("value")) y.index_put_(parse_index(c, 1), full({}, c.num("value"), TensorOptions().dtype(y.dtype()).device(y.device())));
       else y.index_put_(parse_index(c, 2), c.x(1));
       return {y};
     }},
};

}  // namespace
}  // namespace locus::golden
