#include "src/distributed/collective_arguments.h"

#include <sstream>
#include <string>

#include "locus/errors.h"

namespace locus::distributed {

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw ValueError(std::string(op) + ": the tensor is undefined");
}

void check_root(int root, int size, const char* op) {
  if (root < 0 || root >= size)
    throw ValueError(std::string(op) + ": root " + std::to_string(root) + " is not a rank of a group of " + std::to_string(size));
}

void check_parts(const std::vector<Tensor>& parts, const Tensor& like, int size, const char* op, const char* what) {
  if (static_cast<int>(parts.size()) != size)
    throw ValueError(std::string(op) + ": " + what + " has " + std::to_string(parts.size()) + " tensors for a group of " +
                     std::to_string(size));
  for (size_t r = 0; r < parts.size(); ++r)
    if (!parts[r].defined() || !(parts[r].shape() == like.shape()) || parts[r].dtype() != like.dtype()) {
      std::ostringstream os;
      os << op << ": " << what << "[" << r << "] must be " << dtype_name(like.dtype()) << " " << like.shape();
      if (parts[r].defined()) os << ", got " << dtype_name(parts[r].dtype()) << " " << parts[r].shape();
      throw ShapeError(os.str());
    }
}

void check_flat(const Tensor& whole, const Tensor& part, int size, const char* op, const char* what) {
  if (whole.dtype() != part.dtype() || whole.numel() != static_cast<int64_t>(size) * part.numel() || !whole.is_contiguous()) {
    std::ostringstream os;
    os << op << ": " << what << " must be a contiguous " << dtype_name(part.dtype()) << " tensor of " << size << " x "
       << part.numel() << " elements, got " << (whole.is_contiguous() ? "" : "a non-contiguous ") << dtype_name(whole.dtype())
       << " " << whole.shape();
    throw ShapeError(os.str());
  }
}

int64_t check_all_gather_into_tensor(const Tensor& output, const Tensor& input, int size) {
  check_defined(output, "all_gather_into_tensor");
  check_defined(input, "all_gather_into_tensor");
  check_flat(output, input, size, "all_gather_into_tensor", "output");
  return size * static_cast<int64_t>(input.nbytes());
}

int64_t check_reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op, int size) {
  check_defined(output, "reduce_scatter_tensor");
  check_defined(input, "reduce_scatter_tensor");
  check_flat(input, output, size, "reduce_scatter_tensor", "input");
  check_reduce_op(op, output, "reduce_scatter_tensor");
  return size * static_cast<int64_t>(output.nbytes());
}

void check_reduce_op(ReduceOp reduce, const Tensor& t, const char* op) {
  if (reduce == ReduceOp::Avg && !t.is_floating_point())
    throw DTypeError(std::string(op) + ": ReduceOp::Avg needs a floating tensor, got " + std::string(dtype_name(t.dtype())));
}

}  // namespace locus::distributed
