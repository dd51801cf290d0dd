// TensorLiteral: shape, values and dtype of a nested braced list.

#include "locus/tensor_literal.h"

#include <algorithm>
#include <string>

#include "locus/errors.h"

namespace locus {

Shape TensorLiteral::shape() const {
  if (is_leaf_) return Shape{};
  Shape out{static_cast<int64_t>(items_.size())};
  if (items_.empty()) return out;
  const Shape inner = items_.front().shape();
  for (size_t i = 1; i < items_.size(); ++i) {
    const Shape other = items_[i].shape();
    if (items_[i].is_leaf_ != items_.front().is_leaf_)
      throw ValueError("tensor: a list mixes numbers and lists at one level");
    if (!(other == inner)) {
      // PyTorch's wording: the first dimension whose length differs, counted from this list.
      size_t dim = 0;
      while (dim < std::min(inner.size(), other.size()) && inner[dim] == other[dim]) ++dim;
      const int64_t expected = dim < inner.size() ? inner[dim] : 0, got = dim < other.size() ? other[dim] : 0;
      throw ValueError("tensor: expected sequence of length " + std::to_string(expected) + " at dim " +
                       std::to_string(dim + 1) + " (got " + std::to_string(got) + ")");
    }
  }
  for (int64_t d : inner) out.push_back(d);
  return out;
}

void TensorLiteral::collect(std::vector<Scalar>& out) const {
  if (is_leaf_) return out.push_back(leaf_);
  for (const TensorLiteral& item : items_) item.collect(out);
}

std::vector<Scalar> TensorLiteral::flatten() const {
  std::vector<Scalar> out;
  collect(out);
  return out;
}

TensorLiteral::Kind TensorLiteral::kind() const {
  if (is_leaf_) return kind_;
  Kind k = Kind::None;
  for (const TensorLiteral& item : items_) k = std::max(k, item.kind());
  return k;
}

DType TensorLiteral::natural_dtype() const {
  switch (kind()) {
    case Kind::Bool: return DType::Bool;
    case Kind::Int: return DType::Int64;
    case Kind::Float32: return DType::Float32;
    default: return get_default_dtype();
  }
}

}  // namespace locus
