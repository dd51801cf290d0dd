// View operations: new geometry over the same storage.

#include <sstream>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/autograd.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/core/memory_format.h"
#include "src/core/public_op.h"
#include "src/core/shape_check.h"
#include "src/ops/dispatch.h"

namespace locus {
namespace {

using ops::OpId;

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  return Tensor(detail::make_intrusive<detail::TensorImpl>(base.impl()->storage(), base.dtype(), std::move(sizes),
                                                         std::move(strides), offset));
}

// Records a view in the graph when `base` needs a gradient. `backward` maps the view's gradient
// to one of base's shape. A result that shares base's buffer is marked as its view, so an
// in-place op on it updates base's history (Note [Views and in-place ops]).
Tensor recorded(const Tensor& base, Tensor view, const char* name, std::function<Tensor(const Tensor&)> backward) {
  if (view.impl() == base.impl()) return view;
  if (view.impl()->storage() == base.impl()->storage()) autograd::mark_view(base, view);
  if (autograd::needs_grad({&base})) autograd::record_view(name, base, view, std::move(backward));
  return view;
}

// The backward of a view that picks elements (narrow, select, slice): the gradient lands in
// those positions of a zero tensor shaped like the base. `pick` re-applies the view.
std::function<Tensor(const Tensor&)> scatter_back(const Tensor& base, std::function<Tensor(const Tensor&)> pick) {
  const Shape shape = base.shape();
  return [shape, pick = std::move(pick)](const Tensor& g) {
    Tensor z = zeros(shape, TensorOptions().dtype(g.dtype()).device(g.device()));
    pick(z).copy_(g);
    return z;
  };
}

std::function<Tensor(const Tensor&)> reshape_back(const Tensor& base) {
  const Shape shape = base.shape();
  return [shape](const Tensor& g) { return g.reshape(shape); };
}

int64_t wrap(int64_t d, int64_t ndim, const char* op) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (d < -n || d >= n)
    throw IndexError(detail::error_prefix(op) + "dimension out of range (expected to be in range of [" +
                     std::to_string(-n) + ", " + std::to_string(n - 1) + "], but got " + std::to_string(d) + ")");
  return d < 0 ? d + n : d;
}

// Resolves one -1 entry and checks the element count. The product of the given dims is checked
// for overflow first: a wrapping product could otherwise match `numel` (an empty tensor viewed
// as [2^32, 2^32, 0] once did).
Shape infer_shape(const Shape& shape, int64_t numel, size_t itemsize, const char* op) {
  Shape out = shape;
  int64_t infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != -1) continue;
    if (infer >= 0) throw ShapeError(detail::error_prefix(op) + "only one dimension can be inferred");
    infer = static_cast<int64_t>(i);
    out[i] = 1;
  }
  const int64_t known = detail::checked_numel(out, itemsize, op);
  if (infer >= 0) {
    if (known == 0) {
      std::ostringstream os;
      os << detail::error_prefix(op) << "cannot reshape tensor of " << numel << " elements into shape " << shape
         << " because the unspecified dimension size -1 can be any value and is ambiguous";
      throw ShapeError(os.str());
    }
    if (numel % known != 0) {
      std::ostringstream os;
      os << detail::error_prefix(op) << "shape " << shape << " is invalid for input of size " << numel;
      throw ShapeError(os.str());
    }
    out[static_cast<size_t>(infer)] = numel / known;
  } else if (known != numel) {
    std::ostringstream os;
    os << detail::error_prefix(op) << "shape " << shape << " is invalid for input of size " << numel;
    throw ShapeError(os.str());
  }
  return out;
}

// Strides for viewing (sizes, strides) as `shape` without copying, if possible (PyTorch's
// computeStride: each run of dims that is contiguous in memory may be re-split freely).
std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides, const Shape& shape) {
  Shape out(shape.size(), 1);
  if (sizes.empty()) return out;  // a 0-dim tensor: every target dim is 1, any stride serves
  if (sizes.numel() == 0) {
    for (size_t i = shape.size(); i-- > 1;) out[i - 1] = out[i] * std::max<int64_t>(shape[i], 1);
    return out;
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

}  // namespace

int64_t Tensor::size(int64_t d) const { return shape()[static_cast<size_t>(wrap(d, dim(), "size"))]; }
int64_t Tensor::stride(int64_t d) const { return strides()[static_cast<size_t>(wrap(d, dim(), "stride"))]; }

Tensor Tensor::view(const Shape& shape) const {
  const Shape target = infer_shape(shape, numel(), itemsize(), "view");
  auto st = view_strides(this->shape(), strides(), target);
  if (!st) {
    std::ostringstream os;
    os << detail::error_prefix("view") << "size " << target << " is not compatible with the input's size " << this->shape() << " and stride "
       << strides() << " (at least one dimension spans two contiguous subspaces); use .reshape(...) instead";
    throw ShapeError(os.str());
  }
  return recorded(*this, make_view(*this, target, std::move(*st), storage_offset()), "ViewBackward0", reshape_back(*this));
}

Tensor Tensor::reshape(const Shape& shape) const {
  const Shape target = infer_shape(shape, numel(), itemsize(), "reshape");
  if (auto st = view_strides(this->shape(), strides(), target))
    return recorded(*this, make_view(*this, target, std::move(*st), storage_offset()), "ViewBackward0", reshape_back(*this));
  return clone().view(target);
}

Tensor Tensor::permute(const Shape& dims) const {
  if (static_cast<int64_t>(dims.size()) != dim()) {
    std::ostringstream os;
    os << detail::error_prefix("permute") << "number of dims in " << dims << " doesn't match the tensor's " << dim();
    throw ShapeError(os.str());
  }
  Shape sizes(dims.size(), 0), st(dims.size(), 0);
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<size_t>(wrap(dims[i], dim(), "permute"));
    if (seen[d]) throw ShapeError(detail::error_prefix("permute") + "repeated dim " + std::to_string(dims[i]));
    seen[d] = true;
    sizes[i] = shape()[d];
    st[i] = strides()[d];
  }
  Shape inverse(dims.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) inverse[static_cast<size_t>(wrap(dims[i], dim(), "permute"))] = static_cast<int64_t>(i);
  return recorded(*this, make_view(*this, sizes, st, storage_offset()), "PermuteBackward0",
                  [inverse](const Tensor& g) { return g.permute(inverse); });
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  if (dim() == 0) return *this;
  const auto a = static_cast<size_t>(wrap(d0, dim(), "transpose")), b = static_cast<size_t>(wrap(d1, dim(), "transpose"));
  Shape sizes = shape(), st = strides();
  std::swap(sizes[a], sizes[b]);
  std::swap(st[a], st[b]);
  return recorded(*this, make_view(*this, sizes, st, storage_offset()), "TransposeBackward0",
                  [a, b](const Tensor& g) { return g.transpose(static_cast<int64_t>(a), static_cast<int64_t>(b)); });
}

Tensor Tensor::t() const {
  if (dim() > 2) throw ShapeError(detail::error_prefix("t") + "expects a tensor with <= 2 dimensions, but self is " + std::to_string(dim()) + "D");
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::squeeze() const {
  Shape sizes, st;
  for (int64_t d = 0; d < dim(); ++d)
    if (shape()[d] != 1) sizes.push_back(shape()[d]), st.push_back(strides()[d]);
  return recorded(*this, make_view(*this, sizes, st, storage_offset()), "SqueezeBackward0", reshape_back(*this));
}

Tensor Tensor::squeeze(int64_t d) const {
  if (dim() == 0) return *this;
  const auto w = static_cast<size_t>(wrap(d, dim(), "squeeze"));
  if (shape()[w] != 1) return recorded(*this, make_view(*this, shape(), strides(), storage_offset()), "SqueezeBackward1", reshape_back(*this));
  Shape sizes = shape(), st = strides();
  sizes.erase(w);
  st.erase(w);
  return recorded(*this, make_view(*this, sizes, st, storage_offset()), "SqueezeBackward1", reshape_back(*this));
}

Tensor Tensor::unsqueeze(int64_t d) const {
  const auto w = static_cast<size_t>(wrap(d, dim() + 1, "unsqueeze"));
  Shape sizes = shape(), st = strides();
  const int64_t stride = w < sizes.size() ? sizes[w] * st[w] : 1;
  sizes.insert(w, 1);
  st.insert(w, stride);
  return recorded(*this, make_view(*this, sizes, st, storage_offset()), "UnsqueezeBackward0", reshape_back(*this));
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape(Shape{1});
  const int64_t s = wrap(start_dim, dim(), "flatten"), e = wrap(end_dim, dim(), "flatten");
  if (s > e) throw ValueError(detail::error_prefix("flatten") + "start_dim cannot come after end_dim");
  Shape target;
  for (int64_t d = 0; d < s; ++d) target.push_back(shape()[d]);
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= shape()[d];
  target.push_back(merged);
  for (int64_t d = e + 1; d < dim(); ++d) target.push_back(shape()[d]);
  return reshape(target);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  const auto w = static_cast<size_t>(wrap(d, dim(), "narrow"));
  const int64_t n = shape()[w];
  if (start < 0) start += n;
  if (start < 0 || length < 0 || start + length > n)
    throw IndexError(detail::error_prefix("narrow") + "start (" + std::to_string(start) + ") + length (" + std::to_string(length) +
                     ") exceeds dimension size (" + std::to_string(n) + ")");
  Shape sizes = shape();
  sizes[w] = length;
  return recorded(*this, make_view(*this, sizes, strides(), storage_offset() + start * strides()[w]), "SliceBackward0",
                  scatter_back(*this, [d, start, length](const Tensor& z) { return z.narrow(d, start, length); }));
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  if (dim() == 0) throw IndexError(detail::error_prefix("select") + "cannot index a 0-dim tensor");
  const auto w = static_cast<size_t>(wrap(d, dim(), "select"));
  const int64_t n = shape()[w];
  if (index < -n || index >= n)
    throw IndexError(detail::error_prefix("select") + "index " + std::to_string(index) + " is out of bounds for dimension " +
                     std::to_string(w) + " with size " + std::to_string(n));
  if (index < 0) index += n;
  Shape sizes = shape(), st = strides();
  const int64_t offset = storage_offset() + index * st[w];
  sizes.erase(w);
  st.erase(w);
  return recorded(*this, make_view(*this, sizes, st, offset), "SelectBackward0",
                  scatter_back(*this, [d, index](const Tensor& z) { return z.select(d, index); }));
}

Tensor Tensor::expand(const Shape& target) const {
  if (target.size() < shape().size()) {
    std::ostringstream os;
    os << detail::error_prefix("expand") << "the number of sizes provided (" << target.size() << ") must be at least the number of dims ("
       << dim() << ")";
    throw ShapeError(os.str());
  }
  Shape sizes(target.size(), 0), st(target.size(), 0);
  const size_t off = target.size() - shape().size();
  for (size_t i = 0; i < target.size(); ++i) {
    const int64_t want = target[i];
    if (i < off) {
      if (want < 0) throw ShapeError(detail::error_prefix("expand") + "-1 is not allowed in a new leading dimension");
      sizes[i] = want;
      st[i] = 0;
      continue;
    }
    const int64_t have = shape()[i - off];
    if (want < -1) {
      std::ostringstream os;
      os << detail::error_prefix("expand") << "negative dimension " << want << " at index " << i << " in shape " << target;
      throw ShapeError(os.str());
    }
    if (want == -1 || want == have) {
      sizes[i] = have;
      st[i] = strides()[i - off];
    } else if (have == 1) {
      sizes[i] = want;
      st[i] = 0;
    } else {
      std::ostringstream os;
      os << detail::error_prefix("expand") << "the expanded size (" << want << ") must match the existing size (" << have
         << ") at non-singleton dimension " << i << ". Target sizes: " << target << ". Tensor sizes: " << shape();
      throw ShapeError(os.str());
    }
  }
  if (sizes == shape() && st == strides()) return *this;
  detail::checked_numel(sizes, itemsize(), "expand");
  const Shape base_shape = shape();
  const DType base_dtype = dtype();
  return recorded(*this, make_view(*this, sizes, st, storage_offset()), "ExpandBackward0",
                  [base_shape, base_dtype](const Tensor& g) { return autograd::sum_to(g, base_shape, base_dtype); });
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) const {
  const auto w = static_cast<size_t>(wrap(d, dim(), "slice"));
  if (step <= 0) throw ValueError(detail::error_prefix("slice") + "step must be positive, got " + std::to_string(step));
  const int64_t n = shape()[w];
  auto clip = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  const int64_t b = start ? clip(*start) : 0;
  const int64_t e = std::max(b, stop ? clip(*stop) : n);
  Shape sizes = shape(), st = strides();
  sizes[w] = e == b ? 0 : (e - b - 1) / step + 1;  // no e - b + step - 1: a huge step would wrap
  const int64_t offset = storage_offset() + b * st[w];
  if (sizes[w] > 1) st[w] *= step;  // step < n here, so the product stays within the storage's reach
  return recorded(*this, make_view(*this, sizes, st, offset), "SliceBackward0",
                  scatter_back(*this, [d, b, e, step](const Tensor& z) { return z.slice(d, b, e, step); }));
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::contiguous(MemoryFormat format) const {
  check_memory_format(shape().size(), format, "contiguous");
  return is_contiguous(format) ? *this : clone(format);
}

Tensor Tensor::clone() const { return clone(MemoryFormat::Contiguous); }

Tensor Tensor::clone(MemoryFormat format) const {
  if (format == MemoryFormat::Preserve) format = suggest_memory_format();
  check_memory_format(shape().size(), format, "clone");
  Tensor out = ops::empty_on(shape(), dtype(), device(), format);
  {
    NoGradGuard no_grad;  // the copy itself is not the recorded op; clone is
    out.copy_(*this);
  }
  return recorded(*this, out, "CloneBackward0", [](const Tensor& g) { return g; });
}

Tensor Tensor::detach() const {
  Tensor v(detail::make_intrusive<detail::TensorImpl>(impl()->storage(), dtype(), shape(), strides(), storage_offset()));
  return v;
}

}  // namespace locus
