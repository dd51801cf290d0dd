// CollectiveCall: the records the debug check exchanges, and their comparison.

#include "src/distributed/collective_check.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

namespace locus::distributed {
namespace {

constexpr const char* kNames[] = {"barrier", "all_reduce", "broadcast", "all_gather", "reduce_scatter"};
constexpr const char* kOps[] = {"sum", "avg", "min", "max", "product"};

int kind_of(const char* name) {
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i)
    if (std::strcmp(kNames[i], name) == 0) return i;
  return 0;
}

}  // namespace

CollectiveCall CollectiveCall::of(const char* name, const Tensor& t, int root, int op) {
  CollectiveCall c;
  c.kind = kind_of(name);
  c.dtype = static_cast<int32_t>(t.dtype());
  c.root = root;
  c.op = op;
  c.ndim = static_cast<int32_t>(t.dim());
  c.truncated = t.dim() > kMaxDims;
  c.numel = t.numel();
  for (int64_t d = 0; d < std::min<int64_t>(t.dim(), kMaxDims); ++d) c.dims[d] = t.size(d);
  return c;
}

CollectiveCall CollectiveCall::barrier() { return CollectiveCall{}; }

std::string CollectiveCall::name() const { return kNames[kind]; }

std::string CollectiveCall::describe() const {
  std::ostringstream os;
  os << name() << "(";
  if (kind != 0) {
    os << dtype_name(static_cast<DType>(dtype)) << " [";
    for (int d = 0; d < std::min(ndim, kMaxDims); ++d) os << (d ? ", " : "") << dims[d];
    if (truncated) os << ", ...";
    os << "]";
    if (name() == "all_reduce" || name() == "reduce_scatter") os << ", " << kOps[op];
    if (root >= 0) os << ", root " << root;
  }
  return os.str() + ")";
}

bool CollectiveCall::same_as(const CollectiveCall& o) const {
  return std::memcmp(this, &o, sizeof(CollectiveCall)) == 0;
}

std::string describe_mismatch(const std::vector<CollectiveCall>& calls) {
  bool same = true;
  for (const CollectiveCall& c : calls) same = same && c.same_as(calls.front());
  if (same) return {};
  // Group the ranks by what they called: "ranks 0, 2 called all_reduce(...); rank 1 called ...".
  std::map<std::string, std::string> by_call;
  for (size_t r = 0; r < calls.size(); ++r) {
    std::string& ranks = by_call[calls[r].describe()];
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  std::string out = "the ranks called different collectives: ";
  bool first = true;
  for (const auto& [call, ranks] : by_call) {
    out += (first ? "" : "; ") + std::string(ranks.find(',') == std::string::npos ? "rank " : "ranks ") + ranks + " called " + call;
    first = false;
  }
  return out;
}

bool collective_debug_enabled() {
  const char* v = std::getenv("LOCUS_DISTRIBUTED_DEBUG");
  return v && std::strcmp(v, "detail") == 0;
}

}  // namespace locus::distributed
