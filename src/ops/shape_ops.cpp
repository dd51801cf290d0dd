// Shape ops: chunk, split, unbind, repeat, repeat_interleave, flip, roll, tril/triu, diag,
// diagonal, movedim, swapaxes, unflatten, meshgrid and the *_as forms. Views where PyTorch
// returns views; the copies are compositions of differentiable ops (narrow, expand, cat,
// where, index_select), so each gets its gradient from them.

#include <algorithm>
#include <sstream>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/ops/index_helpers.h"
#include "src/ops/kernel_operand.h"

namespace locus {
namespace {

std::string prefix(const char* op) { return detail::error_prefix(op); }

int64_t wrap(int64_t d, int64_t ndim, const char* op) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (d < -n || d >= n)
    throw IndexError(prefix(op) + "Dimension out of range (expected to be in range of [" + std::to_string(-n) + ", " +
                     std::to_string(n - 1) + "], but got " + std::to_string(d) + ")");
  return d < 0 ? d + n : d;
}

std::string list_text(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

Tensor int64_on(const std::vector<int64_t>& values, Device device) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, TensorOptions().dtype(DType::Int64));
  std::copy(values.begin(), values.end(), ops::dense_result<int64_t>(t));
  return t.to(device);
}

// Values of a small int64 tensor on the host (repeats, class indices).
std::vector<int64_t> host_int64(const Tensor& t) { return t.to(Device("cpu"), DType::Int64).contiguous().to_vector<int64_t>(); }

// A copy where `r` still shares x's memory (PyTorch's copying ops never return a view).
Tensor own(const Tensor& r, const Tensor& x) { return r.shares_storage(x) ? r.clone() : r; }

}  // namespace

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  if (x.dim() == 0) throw ValueError(prefix("split") + "split expects at least a 1-dimensional tensor");
  const int64_t d = wrap(dim, x.dim(), "split");
  const int64_t n = x.size(d);
  if (split_size < 0) throw ValueError(prefix("split") + "split expects split_size be non-negative, but got split_size=" + std::to_string(split_size));
  if (split_size == 0 && n != 0)
    throw ValueError(prefix("split") + "split_size can only be 0 if dimension size is 0, but got dimension size of " + std::to_string(n));
  std::vector<Tensor> out;
  if (n == 0) return {x.narrow(d, 0, 0)};
  {
    NoGradGuard pieces;  // one node for all of them, below (the pieces are still views of x)
    for (int64_t start = 0; start < n; start += split_size) out.push_back(x.narrow(d, start, std::min(split_size, n - start)));
  }
  if (autograd::needs_grad({&x})) autograd::record_split("SplitBackward0", x, d, false, out);
  return out;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& split_sizes, int64_t dim) {
  if (x.dim() == 0) throw ValueError(prefix("split") + "split expects at least a 1-dimensional tensor");
  const int64_t d = wrap(dim, x.dim(), "split");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) throw ValueError(prefix("split_with_sizes") + "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=" + list_text(split_sizes));
    total += s;
  }
  if (total != x.size(d))
    throw ValueError(prefix("split_with_sizes") + "split_with_sizes expects split_sizes to sum exactly to " + std::to_string(x.size(d)) +
                     " (input tensor's size at dimension " + std::to_string(d) + "), but got split_sizes=" + list_text(split_sizes));
  std::vector<Tensor> out;
  {
    NoGradGuard pieces;  // one node for all of them, below (the pieces are still views of x)
    int64_t start = 0;
    for (int64_t s : split_sizes) out.push_back(x.narrow(d, start, s)), start += s;
  }
  if (autograd::needs_grad({&x}) && !out.empty()) autograd::record_split("SplitWithSizesBackward0", x, d, false, out);
  return out;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  if (x.dim() == 0) throw ValueError(prefix("chunk") + "chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) throw ValueError(prefix("chunk") + "chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
  const int64_t d = wrap(dim, x.dim(), "chunk");
  const int64_t n = x.size(d);
  const int64_t size = (n + chunks - 1) / chunks;
  // As PyTorch: an empty dim gives `chunks` empty pieces, not one.
  if (size == 0) return std::vector<Tensor>(static_cast<size_t>(chunks), x.narrow(d, 0, 0));
  return split(x, size, d);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  if (x.dim() == 0) throw IndexError(prefix("unbind") + "Dimension specified as 0 but tensor has no dimensions");
  const int64_t d = wrap(dim, x.dim(), "unbind");
  std::vector<Tensor> out;
  {
    NoGradGuard pieces;  // one node for all of them, below (the pieces are still views of x)
    for (int64_t i = 0; i < x.size(d); ++i) out.push_back(x.select(d, i));
  }
  if (autograd::needs_grad({&x}) && !out.empty()) autograd::record_split("UnbindBackward0", x, d, true, out);
  return out;
}

Tensor Tensor::repeat(const Shape& repeats) const {
  if (static_cast<int64_t>(repeats.size()) < dim())
    throw ValueError(prefix("repeat") + "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  for (int64_t r : repeats)
    if (r < 0) throw ValueError(prefix("repeat") + "Trying to create tensor with negative dimension " + std::to_string(r) + ": " + list_text({repeats.begin(), repeats.end()}));
  // [s0, s1] tiled [r0, r1] is [1, s0, 1, s1] expanded to [r0, s0, r1, s1], then merged.
  Tensor r = *this;
  while (r.dim() < static_cast<int64_t>(repeats.size())) r = r.unsqueeze(0);
  Shape spread, target, final_shape;
  for (size_t i = 0; i < repeats.size(); ++i) {
    spread.push_back(1), spread.push_back(r.size(static_cast<int64_t>(i)));
    target.push_back(repeats[i]), target.push_back(r.size(static_cast<int64_t>(i)));
    final_shape.push_back(repeats[i] * r.size(static_cast<int64_t>(i)));
  }
  if (repeats.size() == 0) return clone();
  return r.reshape(spread).expand(target).clone().view(final_shape);
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  if (repeats < 0) throw ValueError(prefix("repeat_interleave") + "repeats can not be negative");
  Tensor r = dim ? x : x.reshape({-1});
  const int64_t d = dim ? wrap(*dim, r.dim(), "repeat_interleave") : 0;
  if (r.dim() == 0) r = r.reshape({1});
  Shape target = r.shape();
  target.insert(static_cast<size_t>(d + 1), repeats);
  Shape final_shape = r.shape();
  final_shape[static_cast<size_t>(d)] *= repeats;
  return r.unsqueeze(d + 1).expand(target).clone().view(final_shape);
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  if (repeats.dim() > 1) throw ValueError(prefix("repeat_interleave") + "repeats must be 0-dim or 1-dim tensor");
  if (repeats.dtype() != DType::Int64 && repeats.dtype() != DType::Int32)
    throw DTypeError(prefix("repeat_interleave") + "repeats has to be Long or Int tensor");
  Tensor r = dim ? x : x.reshape({-1});
  if (r.dim() == 0) r = r.reshape({1});
  const int64_t d = dim ? wrap(*dim, r.dim(), "repeat_interleave") : 0;
  std::vector<int64_t> counts = host_int64(repeats.reshape({-1}));
  if (counts.size() == 1) counts.assign(static_cast<size_t>(r.size(d)), counts[0]);
  if (static_cast<int64_t>(counts.size()) != r.size(d))
    throw ValueError(prefix("repeat_interleave") + "repeats must have the same size as input along dim");
  std::vector<int64_t> index;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) throw ValueError(prefix("repeat_interleave") + "repeats can not be negative");
    index.insert(index.end(), static_cast<size_t>(counts[i]), static_cast<int64_t>(i));
  }
  return index_select(r, d, int64_on(index, x.device()));
}

Tensor repeat_interleave(const Tensor& repeats) {
  if (repeats.dim() > 1) throw ValueError(prefix("repeat_interleave") + "repeats must be 0-dim or 1-dim tensor");
  const std::vector<int64_t> counts = host_int64(repeats.reshape({-1}));
  std::vector<int64_t> index;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) throw ValueError(prefix("repeat_interleave") + "repeats can not be negative");
    index.insert(index.end(), static_cast<size_t>(counts[i]), static_cast<int64_t>(i));
  }
  return int64_on(index, repeats.device());
}

Tensor flip(const Tensor& x, const Shape& dims) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), false);
  Tensor r = x;
  for (int64_t given : dims) {
    const int64_t d = wrap(given, x.dim(), "flip");
    if (seen[static_cast<size_t>(d)]) throw ValueError(prefix("flip") + "dim " + std::to_string(d) + " appears multiple times in the list of dims");
    seen[static_cast<size_t>(d)] = true;
    if (x.dim() == 0) continue;
    const int64_t n = x.size(d);
    std::vector<int64_t> index(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) index[static_cast<size_t>(i)] = n - 1 - i;
    r = index_select(r, d, int64_on(index, x.device()));
  }
  return own(r, x);
}

Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims) {
  if (dims.size() == 0) {
    if (shifts.size() != 1) throw ValueError(prefix("roll") + "`shifts` required");
    return roll(x.reshape({-1}), shifts, {0}).view(x.shape());
  }
  if (shifts.size() != dims.size())
    throw ValueError(prefix("roll") + "shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) + ", dims:" +
                     std::to_string(dims.size()));
  Tensor r = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap(dims[i], x.dim(), "roll");
    const int64_t n = r.size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    // out[j] = x[(j - s) mod n]: the last s elements, then the first n - s.
    r = cat({r.narrow(d, n - s, s), r.narrow(d, 0, n - s)}, d);
  }
  return own(r, x);
}

namespace {

Tensor triangle(const Tensor& x, int64_t diagonal, bool lower, const char* op) {
  if (x.dim() < 2) wrap(-2, x.dim(), op);  // PyTorch reports the missing dim as out of range
  const int64_t m = x.size(-2), n = x.size(-1);
  const TensorOptions o = TensorOptions().dtype(DType::Int64).device(x.device());
  const Tensor offset = arange(n, o).unsqueeze(0).sub(arange(m, o).unsqueeze(1));  // column - row
  const Tensor keep = lower ? offset.le(diagonal) : offset.ge(diagonal);
  return where(keep, x, zeros({}, TensorOptions().dtype(x.dtype()).device(x.device())));
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle(x, diagonal, true, "tril"); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle(x, diagonal, false, "triu"); }

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  if (x.dim() < 2) wrap(1, x.dim(), "diagonal");  // PyTorch reports the second dim as out of range
  const int64_t d1 = wrap(dim1, x.dim(), "diagonal"), d2 = wrap(dim2, x.dim(), "diagonal");
  if (d1 == d2)
    throw ValueError(prefix("diagonal") + "diagonal dimensions cannot be identical " + std::to_string(dim1) + ", " + std::to_string(dim2));
  const int64_t s1 = x.size(d1), s2 = x.size(d2);
  const int64_t len = std::max<int64_t>(offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2), 0);
  int64_t start = x.storage_offset();
  if (len > 0) start += offset >= 0 ? offset * x.stride(d2) : -offset * x.stride(d1);
  Shape sizes, strides;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i != d1 && i != d2) sizes.push_back(x.size(i)), strides.push_back(x.stride(i));
  sizes.push_back(len), strides.push_back(x.stride(d1) + x.stride(d2));
  Tensor view(detail::make_intrusive<detail::TensorImpl>(x.impl()->storage(), x.dtype(), sizes, strides, start));
  autograd::mark_view(x, view);
  if (autograd::needs_grad({&x})) {
    const Shape shape = x.shape();
    autograd::record_view("DiagonalBackward0", x, view, [=](const Tensor& g) {
      Tensor z = zeros(shape, TensorOptions().dtype(g.dtype()).device(g.device()));
      diagonal(z, offset, d1, d2).copy_(g);
      return z;
    });
  }
  return view;
}

Tensor diag(const Tensor& x, int64_t k) {
  if (x.dim() == 2) return diagonal(x, k, 0, 1).clone();
  if (x.dim() != 1) throw ValueError(prefix("diag") + "diag(): Supports 1D or 2D tensors. Got " + std::to_string(x.dim()) + "D");
  const int64_t m = x.size(0) + (k < 0 ? -k : k);
  Tensor out = zeros({m, m}, TensorOptions().dtype(x.dtype()).device(x.device()));
  {
    NoGradGuard no_grad;
    diagonal(out, k, 0, 1).copy_(x);
  }
  if (autograd::needs_grad({&x}))
    autograd::record_view("DiagEmbedBackward0", x, out, [k](const Tensor& g) { return diagonal(g, k, 0, 1).clone(); });
  return out;
}

Tensor movedim(const Tensor& x, const Shape& source, const Shape& destination) {
  const std::vector<int64_t> src_list(source.begin(), source.end()), dst_list(destination.begin(), destination.end());
  if (source.size() != destination.size())
    throw ValueError(prefix("movedim") + "movedim: Invalid source or destination dims: source (" + list_text(src_list) +
                     " dims) should contain the same number of dims as destination (" + list_text(dst_list) + " dims)");
  const int64_t n = x.dim();
  std::vector<int64_t> order(static_cast<size_t>(n), -1);
  std::vector<bool> used(static_cast<size_t>(std::max<int64_t>(n, 1)), false);
  std::vector<bool> taken(static_cast<size_t>(std::max<int64_t>(n, 1)), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap(source[i], n, "movedim"), d = wrap(destination[i], n, "movedim");
    if (used[static_cast<size_t>(s)]) throw ValueError(prefix("movedim") + "movedim: repeated dim in `source` (" + list_text(src_list) + ")");
    if (taken[static_cast<size_t>(d)]) throw ValueError(prefix("movedim") + "movedim: repeated dim in `destination` (" + list_text(dst_list) + ")");
    used[static_cast<size_t>(s)] = taken[static_cast<size_t>(d)] = true;
    if (n) order[static_cast<size_t>(d)] = s;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (order[static_cast<size_t>(i)] >= 0) continue;
    while (used[static_cast<size_t>(next)]) ++next;
    order[static_cast<size_t>(i)] = next++;
  }
  return n ? x.permute(Shape(order)) : x.view({});
}

Tensor movedim(const Tensor& x, int64_t source, int64_t destination) { return movedim(x, Shape{source}, Shape{destination}); }
Tensor swapaxes(const Tensor& x, int64_t axis0, int64_t axis1) { return x.transpose(axis0, axis1); }
Tensor swapdims(const Tensor& x, int64_t dim0, int64_t dim1) { return x.transpose(dim0, dim1); }

Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes) {
  const int64_t d = wrap(dim, x.dim(), "unflatten");
  if (sizes.size() == 0) throw ValueError(prefix("unflatten") + "unflatten: sizes must be non-empty");
  Shape resolved = sizes;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (infer >= 0) throw ValueError(prefix("unflatten") + "only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      known *= sizes[i];
    }
  }
  const int64_t n = x.dim() ? x.size(d) : 1;
  if (infer >= 0 && known != 0 && n % known == 0) resolved[static_cast<size_t>(infer)] = n / known;
  int64_t product = 1;
  for (int64_t s : resolved) product *= s;
  if (product != n || (infer >= 0 && known == 0)) {
    std::ostringstream os;
    os << prefix("unflatten") << "unflatten: Provided sizes " << sizes << " don't multiply up to the size of dim " << dim << " (" << n
       << ") in the input tensor";
    throw ValueError(os.str());
  }
  Shape shape;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i == d) for (int64_t s : resolved) shape.push_back(s);
    else shape.push_back(x.size(i));
  }
  return x.view(shape);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing) {
  if (indexing != "ij" && indexing != "xy")
    throw ValueError(prefix("meshgrid") + "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: " + std::string(indexing));
  if (tensors.empty()) throw ValueError(prefix("meshgrid") + "torch.meshgrid: Expects at least one tensor");
  std::vector<Tensor> in = tensors;
  for (const Tensor& t : in) {
    if (t.dim() > 1)
      throw ValueError(prefix("meshgrid") + "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: " + std::to_string(t.dim()) + "D");
    if (t.dtype() != in[0].dtype()) throw DTypeError(prefix("meshgrid") + "torch.meshgrid: expects all tensors to have the same dtype");
    if (t.device() != in[0].device()) throw DeviceMismatchError(in[0].device(), t.device(), "tensors", "meshgrid");
  }
  // "xy" is "ij" with the first two inputs and outputs swapped, as PyTorch computes it.
  const bool swap = indexing == "xy" && in.size() >= 2;
  if (swap) std::swap(in[0], in[1]);
  Shape shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  std::vector<Tensor> grids;
  for (size_t i = 0; i < in.size(); ++i) {
    Shape view(in.size(), 1);
    view[i] = -1;
    grids.push_back(in[i].view(view).expand(shape));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

// ---- methods -------------------------------------------------------------------------------

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return locus::chunk(*this, chunks, dim); }
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const { return locus::split(*this, split_size, dim); }
std::vector<Tensor> Tensor::split(const std::vector<int64_t>& split_sizes, int64_t dim) const { return locus::split(*this, split_sizes, dim); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return locus::unbind(*this, dim); }
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const { return locus::repeat_interleave(*this, repeats, dim); }
Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim) const {
  return locus::repeat_interleave(*this, repeats, dim);
}
Tensor Tensor::flip(const Shape& dims) const { return locus::flip(*this, dims); }
Tensor Tensor::roll(const Shape& shifts, const Shape& dims) const { return locus::roll(*this, shifts, dims); }
Tensor Tensor::tril(int64_t diagonal) const { return locus::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return locus::triu(*this, diagonal); }
Tensor& Tensor::tril_(int64_t diagonal) {
  if (autograd::record_in_place(*this, "tril_", {}, [&] { return locus::tril(*this, diagonal); })) return *this;
  autograd::check_write(*this, "tril_");
  copy_(locus::tril(*this, diagonal));
  return *this;
}
Tensor& Tensor::triu_(int64_t diagonal) {
  if (autograd::record_in_place(*this, "triu_", {}, [&] { return locus::triu(*this, diagonal); })) return *this;
  autograd::check_write(*this, "triu_");
  copy_(locus::triu(*this, diagonal));
  return *this;
}
Tensor Tensor::diag(int64_t diagonal) const { return locus::diag(*this, diagonal); }
Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const { return locus::diagonal(*this, offset, dim1, dim2); }
Tensor Tensor::movedim(const Shape& source, const Shape& destination) const { return locus::movedim(*this, source, destination); }
Tensor Tensor::movedim(int64_t source, int64_t destination) const { return locus::movedim(*this, source, destination); }
Tensor Tensor::swapaxes(int64_t axis0, int64_t axis1) const { return transpose(axis0, axis1); }
Tensor Tensor::swapdims(int64_t dim0, int64_t dim1) const { return transpose(dim0, dim1); }
Tensor Tensor::unflatten(int64_t dim, const Shape& sizes) const { return locus::unflatten(*this, dim, sizes); }
Tensor Tensor::expand_as(const Tensor& other) const { return expand(other.shape()); }
Tensor Tensor::view_as(const Tensor& other) const { return view(other.shape()); }
Tensor Tensor::reshape_as(const Tensor& other) const { return reshape(other.shape()); }

}  // namespace locus
