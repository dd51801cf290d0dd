// The checks behind dense_operand and dense_result, and those of a written tensor's layout
// (Note [Kernel operands]).

#include "src/ops/kernel_operand.h"

#include <sstream>
#include <string>
#include <utility>

#include "locus/errors.h"

namespace locus::ops {

void require_dense(const Tensor& t, MemoryFormat format, const char* what) {
  // An empty tensor has no element to read, whatever strides its views left it (PyTorch calls
  // every empty tensor contiguous; Locus's is_contiguous() still looks at the strides).
  if (t.numel() == 0 || t.is_contiguous(format)) return;
  std::ostringstream os;
  os << "internal error: a kernel that reads dense memory was handed a non-contiguous " << what << " (shape "
     << t.shape() << ", strides [";
  for (int64_t d = 0; d < t.dim(); ++d) os << (d ? "," : "") << t.stride(d);
  os << "], storage offset " << t.storage_offset() << "); the op path must pass .contiguous(" << format
     << ") (Note [Kernel operands])";
  throw Error(os.str());
}

void require_dense(const Tensor& t, const char* what) { require_dense(t, MemoryFormat::Contiguous, what); }

void require_distinct_elements(const Tensor& t, const std::string& prefix) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) == 0)
      throw ValueError(prefix + "unsupported operation: more than one element of the written-to tensor refers to a "
                                "single memory location. Please clone() the tensor before performing the operation.");
}

void require_no_partial_overlap(const Tensor& out, const Tensor& input, const std::string& prefix) {
  if (!out.defined() || !input.defined() || out.numel() == 0 || input.numel() == 0) return;
  if (out.impl()->storage().get() != input.impl()->storage().get()) return;
  // Dense memory in some order (contiguous or channels-last) spans one range; any other layout is
  // PyTorch's "too hard" case: allowed.
  const auto dense = [](const Tensor& t) { return t.is_contiguous(t.suggest_memory_format()); };
  if (!dense(out) || !dense(input)) return;
  const auto range = [](const Tensor& t) {
    const int64_t start = t.storage_offset() * static_cast<int64_t>(t.itemsize());
    return std::pair<int64_t, int64_t>(start, start + t.numel() * static_cast<int64_t>(t.itemsize()));
  };
  const auto [out_start, out_end] = range(out);
  const auto [in_start, in_end] = range(input);
  const bool same_view = out_start == in_start && out_end == in_end && out.dtype() == input.dtype() &&
                         out.strides() == input.strides();
  if (same_view || out_end <= in_start || in_end <= out_start) return;
  throw ValueError(prefix + "unsupported operation: some elements of the input tensor and the written-to tensor refer "
                            "to a single memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace locus::ops
