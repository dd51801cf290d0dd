// The contiguity check behind dense_operand and dense_result (Note [Kernel operands]).

#include "src/ops/kernel_operand.h"

#include <sstream>
#include <string>

#include "locus/errors.h"

namespace locus::ops {

void require_dense(const Tensor& t, const char* what) {
  // An empty tensor has no element to read, whatever strides its views left it (PyTorch calls
  // every empty tensor contiguous; Locus's is_contiguous() still looks at the strides).
  if (t.is_contiguous() || t.numel() == 0) return;
  std::ostringstream os;
  os << "internal error: a kernel that reads dense memory was handed a non-contiguous " << what << " (shape "
     << t.shape() << ", strides [";
  for (int64_t d = 0; d < t.dim(); ++d) os << (d ? "," : "") << t.stride(d);
  os << "], storage offset " << t.storage_offset() << "); the op path must pass .contiguous() (Note [Kernel operands])";
  throw Error(os.str());
}

void require_distinct_elements(const Tensor& t, const std::string& prefix) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) == 0)
      throw ValueError(prefix + "unsupported operation: more than one element of the written-to tensor refers to a "
                                "single memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace locus::ops
