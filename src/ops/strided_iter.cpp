#include "src/core/device_ordinal.h"
#include "src/ops/strided_iter.h"

#include <sstream>
#include <utility>

#include "locus/errors.h"

namespace locus::ops {

bool StridedIter::contiguous() const noexcept {
  if (shape.size() > 1) return false;
  if (shape.empty()) return true;
  for (int k = 0; k < noperands; ++k)
    if (strides[k][0] != static_cast<int64_t>(itemsize(dtypes[k]))) return false;
  return true;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, OpId op) {
  if (a == b) return a;
  const size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      std::ostringstream os;
      os << op_prefix(op) << "shapes " << a << " and " << b << " cannot be broadcast: dimension " << i
         << " is " << da << " in one and " << db << " in the other (sizes must match or one must be 1)";
      throw ShapeError(os.str());
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

StridedIter make_iter(const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  StridedIter it;
  const Shape& shape = out.shape();
  const size_t nd = shape.size();
  if (nd > 64) throw ShapeError("tensors with more than 64 dimensions are not supported");
  it.noperands = 1 + static_cast<int>(inputs.size());
  it.numel = out.numel();
  it.device = detail::ordinal(out.device());
  const Tensor* ops[StridedIter::kMaxOperands] = {&out};
  int k = 1;
  for (const Tensor* t : inputs) ops[k++] = t;

  // The common case, every operand contiguous and of the output's shape: one dim, no walk.
  bool flat = out.is_contiguous();
  for (k = 1; k < it.noperands && flat; ++k) flat = ops[k]->is_contiguous() && ops[k]->shape() == shape;
  if (flat) {
    it.shape = Shape{it.numel};
    for (k = 0; k < it.noperands; ++k) {
      const detail::TensorImpl* impl = ops[k]->impl();
      it.strides[k] = Shape{static_cast<int64_t>(itemsize(impl->dtype()))};
      it.data[k] = static_cast<char*>(impl->data());
      it.dtypes[k] = impl->dtype();
    }
    return it;
  }

  // Byte strides of every operand over the output's dims (0 where broadcast).
  int64_t strides[StridedIter::kMaxOperands][64];
  for (k = 0; k < it.noperands; ++k) {
    const detail::TensorImpl* impl = ops[k]->impl();
    const Shape& s = impl->sizes();
    const Shape& st = impl->strides();
    const auto item = static_cast<int64_t>(itemsize(impl->dtype()));
    const size_t off = nd - s.size();
    for (size_t d = 0; d < nd; ++d)
      strides[k][d] = d < off || s[d - off] == 1 ? 0 : st[d - off] * item;
    it.data[k] = static_cast<char*>(impl->data());
    it.dtypes[k] = impl->dtype();
  }
  // Note [Walk order]
  // The walk visits the dims in the output's memory order, outermost first, so that a result laid
  // out channels-last (Note [Channels-last outputs]) with operands of the same layout merges into
  // one dense run like a contiguous one instead of a strided walk of C-element steps. The dims
  // are ordered by the first operand (the output first) whose two strides differ, broadcast
  // (stride 0) ones telling nothing: TensorIterator's rule. Elementwise results do not depend on
  // the order. A contiguous output keeps the logical order, so the common case pays nothing.
  size_t order[64];
  for (size_t d = 0; d < nd; ++d) order[d] = d;
  if (!out.is_contiguous()) {
    const auto goes_inside = [&](size_t a, size_t b) {  // dim a belongs inside dim b
      for (k = 0; k < it.noperands; ++k) {
        const int64_t sa = strides[k][a], sb = strides[k][b];
        if (sa != 0 && sb != 0 && sa != sb) return sa < sb;
      }
      return false;
    };
    for (size_t i = 1; i < nd; ++i)
      for (size_t j = i; j > 0 && goes_inside(order[j - 1], order[j]); --j) std::swap(order[j - 1], order[j]);
  }
  // Drop size-1 dims and merge a dim into the next-inner one where every operand allows it.
  int64_t kept_shape[64];
  int64_t kept_strides[StridedIter::kMaxOperands][64];
  int nk = 0;
  for (size_t i = 0; i < nd; ++i) {
    const size_t d = order[i];
    if (shape[d] == 1) continue;
    if (nk > 0) {
      bool merge = true;
      for (k = 0; k < it.noperands && merge; ++k) merge = kept_strides[k][nk - 1] == strides[k][d] * shape[d];
      if (merge) {
        kept_shape[nk - 1] *= shape[d];
        for (k = 0; k < it.noperands; ++k) kept_strides[k][nk - 1] = strides[k][d];
        continue;
      }
    }
    kept_shape[nk] = shape[d];
    for (k = 0; k < it.noperands; ++k) kept_strides[k][nk] = strides[k][d];
    ++nk;
  }
  if (nk == 0 && it.numel == 1) {  // a single element: one dim of size 1
    kept_shape[0] = 1;
    for (k = 0; k < it.noperands; ++k) kept_strides[k][0] = 0;
    nk = 1;
  }
  it.shape = Shape(std::span<const int64_t>(kept_shape, static_cast<size_t>(nk)));
  for (k = 0; k < it.noperands; ++k) it.strides[k] = Shape(std::span<const int64_t>(kept_strides[k], static_cast<size_t>(nk)));
  return it;
}

}  // namespace locus::ops
