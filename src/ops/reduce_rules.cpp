#include "src/ops/reduce_rules.h"

#include <string>

#include "locus/errors.h"

namespace locus::ops {
void refuse_reduce_dtype(OpId op, DType dtype) {
  throw DTypeError(op_prefix(op) + "needs a floating dtype, got " + std::string(dtype_name(dtype)) +
                   "; convert with .to(kFloat32) first");
}

}  // namespace locus::ops
