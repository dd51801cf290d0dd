// The vector products: mv, dot (on matmul, so on KernelTable::matmul) and outer / ger (a
// broadcast multiply, as PyTorch computes it). bmm, addmm and baddbmm share matmul's front end
// in matmul_ops.cpp; einsum is in einsum.cpp.

#include <sstream>

#include "locus/errors.h"
#include "locus/ops.h"
#include "locus/products.h"
#include "src/ops/public_op.h"

namespace locus {
Tensor mv(const Tensor& self, const Tensor& vec) {
  const ops::PublicOp op("mv", {{self, "self"}, {vec, "vec"}});
  if (self.dim() != 2 || vec.dim() != 1)
    throw ShapeError(detail::error_prefix("mv") + "vector + matrix @ vector expected, got 1, " + std::to_string(self.dim()) +
                     ", " + std::to_string(vec.dim()));
  if (self.size(1) != vec.size(0)) {
    std::ostringstream os;
    os << detail::error_prefix("mv") << "size mismatch, got " << self.size(0) << ", " << self.size(0) << "x" << self.size(1)
       << "," << vec.size(0);
    throw ShapeError(os.str());
  }
  if (self.dtype() != vec.dtype())
    throw DTypeError(detail::error_prefix("mv") + "expected scalar type " + std::string(dtype_name(self.dtype())) +
                     " but found " + std::string(dtype_name(vec.dtype())));
  return matmul(self, vec);
}

Tensor dot(const Tensor& self, const Tensor& tensor) {
  const ops::PublicOp op("dot", {{self, "self"}, {tensor, "tensor"}});
  if (self.dim() != 1 || tensor.dim() != 1)
    throw ShapeError(detail::error_prefix("dot") + "1D tensors expected, but got " + std::to_string(self.dim()) + "D and " +
                     std::to_string(tensor.dim()) + "D tensors");
  if (self.size(0) != tensor.size(0)) {
    std::ostringstream os;
    os << detail::error_prefix("dot") << "inconsistent tensor size, expected tensor [" << self.size(0) << "] and src ["
       << tensor.size(0) << "] to have the same number of elements, but got " << self.size(0) << " and " << tensor.size(0)
       << " elements respectively";
    throw ShapeError(os.str());
  }
  if (self.dtype() != tensor.dtype())
    throw DTypeError(detail::error_prefix("dot") + "dot : expected both vectors to have same dtype, but found " +
                     std::string(dtype_name(self.dtype())) + " and " + std::string(dtype_name(tensor.dtype())));
  return matmul(self, tensor);
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  const ops::PublicOp op("outer", {{self, "self"}, {vec2, "vec2"}});
  for (const auto& [t, name] : {std::pair{&self, "self"}, std::pair{&vec2, "vec2"}})
    if (t->dim() != 1)
      throw ShapeError(detail::error_prefix("outer") + "outer: Expected 1-D argument " + name + ", but got " +
                       std::to_string(t->dim()) + "-D");
  // A multiply, not a product with k = 1: type promotion and bool as PyTorch's outer.
  return self.reshape(Shape{self.size(0), 1}) * vec2;
}

Tensor ger(const Tensor& self, const Tensor& vec2) {
  const ops::PublicOp op("ger", {{self, "self"}, {vec2, "vec2"}});
  return outer(self, vec2);
}

Tensor Tensor::bmm(const Tensor& mat2) const { return locus::bmm(*this, mat2); }
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) const {
  return locus::addmm(*this, mat1, mat2, beta, alpha);
}
Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  return locus::baddbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::mv(const Tensor& vec) const { return locus::mv(*this, vec); }
Tensor Tensor::dot(const Tensor& tensor) const { return locus::dot(*this, tensor); }
Tensor Tensor::outer(const Tensor& vec2) const { return locus::outer(*this, vec2); }
Tensor Tensor::ger(const Tensor& vec2) const { return locus::ger(*this, vec2); }

}  // namespace locus
