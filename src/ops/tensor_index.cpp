// LibTorch's tensor indexing: Tensor::index and Tensor::index_put_ over a list of TensorIndex
// entries (integers, slices, None, Ellipsis, bools, index tensors, masks).

#include <algorithm>
#include <sstream>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/indexing.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/ops/deferred_check.h"
#include "src/ops/dispatch.h"
#include "src/ops/index_helpers.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/strided_iter.h"

namespace locus {

using indexing::TensorIndex;
using ops::OpId;

indexing::TensorIndex::TensorIndex(const char* text) : kind_(Kind::EllipsisEntry) {
  if (text == nullptr || std::string_view(text) != "...")
    throw ValueError(std::string("TensorIndex: expected \"...\" to represent an ellipsis index, but got \"") + (text ? text : "") + "\"");
}

namespace {

// Note [Two-step indexing]: as PyTorch, the basic entries (integers, slices, None, Ellipsis)
// are applied first as views, leaving each index tensor (and each mask, as its nonzero
// positions) attached to a dim of that view. With tensors, the view is permuted so their dims
// come first and flattened there, and one index_select by the linear position gathers every
// element: the result's advanced dims are the index tensors' broadcast shape, put where the
// first of them was when they were adjacent, else in front (PyTorch's rule).
struct Parsed {
  Tensor view;                    // after the basic entries
  std::vector<int64_t> dims;      // the view's dims that index tensors select along
  std::vector<Tensor> tensors;    // one int64 index tensor per entry of dims
};

Parsed parse(const Tensor& self, const std::vector<TensorIndex>& indices, OpId op) {
  using Kind = TensorIndex::Kind;
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& ix : indices) {
    switch (ix.kind()) {
      case Kind::Integer:
      case Kind::Slice: ++consumed; break;
      case Kind::Tensor: {
        const Tensor& t = ix.tensor();
        consumed += (t.dtype() == DType::Bool || t.dtype() == DType::UInt8) ? t.dim() : 1;
        break;
      }
      case Kind::EllipsisEntry: ++ellipses; break;
      case Kind::NewAxis:
      case Kind::Boolean: break;
    }
  }
  if (consumed > self.dim()) throw IndexError(ops::op_prefix(op) + "too many indices for tensor of dimension " + std::to_string(self.dim()));
  Parsed p;
  Tensor r = self;
  int64_t d = 0;
  auto add_tensor = [&](int64_t dim, Tensor t) {
    p.dims.push_back(dim);
    p.tensors.push_back(std::move(t));
  };
  auto position = [&](bool b) {
    // A bool entry is a new dim of size 1, indexed by [0] (true) or by nothing (false).
    r = r.unsqueeze(d);
    add_tensor(d, b ? zeros({1}, TensorOptions().dtype(DType::Int64)) : empty({0}, TensorOptions().dtype(DType::Int64)));
    ++d;
  };
  for (const TensorIndex& ix : indices) {
    switch (ix.kind()) {
      case Kind::Integer: {
        const int64_t n = r.size(d);
        const int64_t i = ix.integer();
        if (i < -n || i >= n)
          throw IndexError(ops::op_prefix(op) + "index " + std::to_string(i) + " is out of bounds for dimension " + std::to_string(d) +
                           " with size " + std::to_string(n));
        r = r.select(d, i);
        break;
      }
      case Kind::Slice: {
        const Slice& s = ix.slice();
        if (s.step <= 0) throw ValueError(ops::op_prefix(op) + "step must be greater than zero");
        r = r.slice(d, s.start, s.stop, s.step);
        ++d;
        break;
      }
      case Kind::NewAxis: r = r.unsqueeze(d), ++d; break;
      case Kind::EllipsisEntry:
        // As PyTorch: the first `...` spans the unindexed dims, any later one none.
        if (ellipses > 0) d += self.dim() - consumed, ellipses = 0;
        break;
      case Kind::Boolean: position(ix.boolean()); break;
      case Kind::Tensor: {
        const Tensor& t = ix.tensor();
        if (t.dtype() == DType::Bool || t.dtype() == DType::UInt8) {
          if (t.dim() == 0) {
            position(t.item<bool>());
            break;
          }
          for (int64_t k = 0; k < t.dim(); ++k) {
            if (t.size(k) != r.size(d + k)) {
              std::ostringstream os;
              os << ops::op_prefix(op) << "The shape of the mask " << t.shape() << " at index " << k
                 << " does not match the shape of the indexed tensor " << r.shape() << " at index " << d + k;
              throw IndexError(os.str());
            }
          }
          // The mask's true positions, as one index tensor per dim it covers.
          Tensor flat = ops::flat_true_positions(t.dtype() == DType::Bool ? t : t.ne(0)).to(Device("cpu"));
          int64_t stride = t.numel();
          for (int64_t k = 0; k < t.dim(); ++k) {
            stride /= std::max<int64_t>(t.size(k), 1);
            Tensor coord = t.size(k) ? div(flat, std::max<int64_t>(stride, 1), "floor").remainder(t.size(k)) : flat;
            add_tensor(d + k, coord);
          }
          d += t.dim();
        } else if (t.dtype() == DType::Int64 || t.dtype() == DType::Int32 || t.dtype() == DType::Int16 || t.dtype() == DType::Int8) {
          add_tensor(d, t.to(DType::Int64));
          ++d;
        } else {
          throw IndexError(ops::op_prefix(op) + "tensors used as indices must be long, int, byte or bool tensors");
        }
        break;
      }
    }
  }
  p.view = r;
  return p;
}

// The linear position of each indexed element within the advanced dims (row-major over
// them), in the broadcast shape of the index tensors, checked and with negatives wrapped.
Tensor linear_positions(const Parsed& p, OpId op, Shape* broadcast) {
  const Device device = p.view.device();
  Shape shape = p.tensors[0].shape();
  for (size_t k = 1; k < p.tensors.size(); ++k) {
    try {
      shape = ops::broadcast_shapes(shape, p.tensors[k].shape(), op);
    } catch (const ShapeError&) {
      std::ostringstream os;
      os << ops::op_prefix(op) << "shape mismatch: indexing tensors could not be broadcast together with shapes";
      for (size_t j = 0; j < p.tensors.size(); ++j) os << (j ? ", " : " ") << p.tensors[j].shape();
      throw IndexError(os.str());
    }
  }
  *broadcast = shape;
  Tensor linear;
  for (size_t k = 0; k < p.tensors.size(); ++k) {
    const int64_t n = p.view.size(p.dims[k]);
    Tensor t = p.tensors[k];
    if (device.is_cuda()) {
      t = t.to(device);
      t = where(t.lt(0), t.add(n), t);
      ops::check_range(op, ops::CheckKind::IndexOutOfBounds, t.contiguous(), n);
    } else {
      // Host-readable devices check now, with PyTorch's message.
      const Tensor host = t.to(Device("cpu")).contiguous();
      const int64_t* v = ops::dense_operand<int64_t>(host);
      for (int64_t i = 0; i < host.numel(); ++i)
        if (v[i] < -n || v[i] >= n)
          throw IndexError(ops::op_prefix(op) + "index " + std::to_string(v[i]) + " is out of bounds for dimension " +
                           std::to_string(p.dims[k]) + " with size " + std::to_string(n));
      t = t.to(device);
      t = where(t.lt(0), t.add(n), t);
    }
    linear = linear.defined() ? linear.mul(n).add(t) : t;
  }
  return linear.expand(shape).contiguous();
}

bool adjacent(const std::vector<int64_t>& dims) {
  for (size_t k = 1; k < dims.size(); ++k)
    if (dims[k] != dims[k - 1] + 1) return false;
  return true;
}

// The view permuted so that the advanced dims lead, in order.
Tensor advanced_first(const Parsed& p, std::vector<int64_t>* rest) {
  std::vector<int64_t> perm = p.dims;
  for (int64_t i = 0; i < p.view.dim(); ++i)
    if (std::find(p.dims.begin(), p.dims.end(), i) == p.dims.end()) perm.push_back(i), rest->push_back(p.view.size(i));
  return p.view.permute(Shape(perm));
}

// Where the broadcast dims go in the result: at the first advanced dim when adjacent, else 0.
int64_t advanced_position(const Parsed& p) { return adjacent(p.dims) ? p.dims[0] : 0; }

Tensor index_impl(const Tensor& self, const std::vector<TensorIndex>& indices) {
  const OpId op = OpId::TensorIndex;
  const detail::PublicOpScope scope("index");
  Parsed p = parse(self, indices, op);
  if (p.tensors.empty()) return p.view;
  Shape b;
  const Tensor linear = linear_positions(p, op, &b);
  std::vector<int64_t> rest;
  const Tensor moved = advanced_first(p, &rest);
  int64_t count = 1;
  for (int64_t k : p.dims) count *= p.view.size(k);
  std::vector<int64_t> flat_shape{count};
  flat_shape.insert(flat_shape.end(), rest.begin(), rest.end());
  Tensor out = index_select(moved.reshape(Shape(flat_shape)), 0, linear.reshape({-1}));
  std::vector<int64_t> out_shape(b.begin(), b.end());
  out_shape.insert(out_shape.end(), rest.begin(), rest.end());
  out = out.reshape(Shape(out_shape));
  const int64_t at = advanced_position(p);
  if (at != 0) {
    Shape src, dst;
    for (int64_t k = 0; k < static_cast<int64_t>(b.size()); ++k) src.push_back(k), dst.push_back(at + k);
    out = movedim(out, src, dst);
  }
  return out;
}

void check_values_shape(const Tensor& values, const Shape& target, OpId op) {
  bool ok = values.dim() <= static_cast<int64_t>(target.size());
  for (int64_t i = 1; ok && i <= values.dim(); ++i) {
    const int64_t v = values.size(-i), t = target[target.size() - static_cast<size_t>(i)];
    ok = v == t || v == 1;
  }
  if (!ok) {
    std::ostringstream os;
    os << ops::op_prefix(op) << "shape mismatch: value tensor of shape " << values.shape() << " cannot be broadcast to indexing result of shape "
       << target;
    throw ShapeError(os.str());
  }
}

Tensor& index_put_impl(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& given, bool accumulate) {
  const OpId op = OpId::IndexPut;
  // Recorded, the writes below are copies into views of self, which record themselves (Note
  // [Views and in-place ops]).
  if (!autograd::in_place_records(self, "index_put_", {&given})) autograd::check_write(self, "index_put_");
  const detail::PublicOpScope scope("index_put_");
  ops::common_device(op, {{self, "self"}, {given, "values"}});
  Parsed p = parse(self, indices, op);
  if (p.tensors.empty()) {
    check_values_shape(given, p.view.shape(), op);
    if (accumulate) p.view.copy_(add(p.view, given));
    else p.view.copy_(given);
    return self;
  }
  Shape b;
  const Tensor linear = linear_positions(p, op, &b);
  std::vector<int64_t> rest;
  Tensor moved = advanced_first(p, &rest);
  // The indexing result's shape, which the values broadcast to (PyTorch's rule on where the
  // advanced dims go), then the values brought into [broadcast..., rest...] order.
  std::vector<int64_t> lead(b.begin(), b.end());
  lead.insert(lead.end(), rest.begin(), rest.end());
  const int64_t at = advanced_position(p);
  std::vector<int64_t> result(rest.begin(), rest.begin() + at);
  result.insert(result.end(), b.begin(), b.end());
  result.insert(result.end(), rest.begin() + at, rest.end());
  const Shape result_shape(result);
  Shape src, dst;
  for (int64_t k = 0; k < static_cast<int64_t>(b.size()); ++k) src.push_back(k), dst.push_back(at + k);
  check_values_shape(given, result_shape, op);
  Tensor values = given.to(self.device(), self.dtype()).expand(result_shape);  // a 0-dim CPU value may join
  if (at != 0) values = movedim(values, dst, src);
  int64_t rest_numel = 1, count = 1;
  for (int64_t r : rest) rest_numel *= r;
  for (int64_t k : p.dims) count *= p.view.size(k);
  const int64_t n = linear.numel();
  const Tensor vals2d = values.reshape({n, rest_numel});
  const Tensor idx2d = linear.reshape({n, 1}).expand({n, rest_numel});
  const Tensor target = moved.reshape({count, rest_numel});
  const Tensor updated = ops::run_scatter(accumulate ? OpId::ScatterAdd : OpId::Scatter, target, 0, idx2d, vals2d);
  moved.copy_(updated.view(moved.shape()));
  return self;
}

std::vector<TensorIndex> from_tensors(const std::vector<Tensor>& indices) {
  std::vector<TensorIndex> out;
  for (const Tensor& t : indices) out.push_back(t.defined() ? TensorIndex(t) : TensorIndex(Slice()));
  return out;
}

}  // namespace

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const { return index_impl(*this, std::vector<TensorIndex>(indices)); }
Tensor Tensor::index(const std::vector<TensorIndex>& indices) const { return index_impl(*this, indices); }

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& values) {
  return index_put_impl(*this, std::vector<TensorIndex>(indices), values, false);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value) {
  return index_put_impl(*this, std::vector<TensorIndex>(indices), full({}, value, TensorOptions().dtype(dtype()).device(device())), false);
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values) {
  return index_put_impl(*this, indices, values, false);
}
Tensor& Tensor::index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  return index_put_impl(*this, from_tensors(indices), values, accumulate);
}

}  // namespace locus
