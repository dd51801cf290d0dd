// PyTorch's result_type: dimensioned tensors outrank 0-dim tensors, which outrank numbers,
// unless the lower tier brings a higher category (bool < integer < floating).

#include "locus/ops.h"
#include "src/ops/type_promotion.h"

namespace locus {
namespace {

int category(DType t) { return t == DType::Bool ? 0 : is_integral(t) ? 1 : 2; }

// Combines the winner of a higher tier with that of a lower one.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (category(*lower) > category(*higher)) return promote_types(*higher, *lower);
  return higher;
}

struct Tiers {
  std::optional<DType> dimensioned, zero_dim, number;
  void add(const Tensor& t) {
    auto& slot = t.dim() > 0 ? dimensioned : zero_dim;
    slot = slot ? promote_types(*slot, t.dtype()) : t.dtype();
  }
  void add(const Scalar& s) {
    const DType d = s.natural_dtype();
    number = number ? promote_types(*number, d) : d;
  }
  DType result() const { return *combine(dimensioned, combine(zero_dim, number)); }
};

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return a.dtype();
  Tiers t;
  t.add(a);
  t.add(b);
  return t.result();
}

DType result_type(const Tensor& a, const Scalar& b) {
  Tiers t;
  t.add(a);
  t.add(b);
  return t.result();
}

namespace ops {

DType promote_operands(const Tensor* const* tensors, int count, const Scalar* numbers, int nnumbers) {
  if (count == 1 && nnumbers == 0) return tensors[0]->dtype();
  if (count == 2 && nnumbers == 0 && tensors[0]->dtype() == tensors[1]->dtype()) return tensors[0]->dtype();
  Tiers t;
  for (int i = 0; i < count; ++i) t.add(*tensors[i]);
  for (int i = 0; i < nnumbers; ++i) t.add(numbers[i]);
  return t.result();
}

}  // namespace ops

}  // namespace locus
