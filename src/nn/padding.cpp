// F::pad and F::one_hot, composed of differentiable ops (narrow, cat, expand, index_select,
// comparisons), so pad's gradient comes from them.

#include <sstream>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional/padding.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/ops/index_helpers.h"

namespace locus::nn::functional {
namespace {

std::string prefix() { return detail::error_prefix("pad"); }

// One dim's (before, after) padding of `x` in `mode`; negative sizes crop.
Tensor pad_dim(const Tensor& x, int64_t d, int64_t before, int64_t after, const PadFuncOptions& o) {
  const int64_t n = x.size(d);
  if (n + before + after < 0) {
    std::ostringstream os;
    os << prefix() << "The input size " << n << ", plus negative padding " << before << " and " << after
       << " resulted in a negative output size, which is invalid. Check dimension " << d << " of your input.";
    throw ValueError(os.str());
  }
  Tensor r = x;
  if (before < 0) r = r.narrow(d, -before, r.size(d) + before), before = 0;
  if (after < 0) r = r.narrow(d, 0, r.size(d) + after), after = 0;
  if (before == 0 && after == 0) return r;
  std::vector<Tensor> parts;
  const int64_t m = r.size(d);
  auto piece = [&](int64_t count, bool left) -> Tensor {
    Shape shape = r.shape();
    shape[static_cast<size_t>(d)] = count;
    switch (o.mode()) {
      case PadMode::Constant: return full(shape, o.value(), TensorOptions().dtype(x.dtype()).device(x.device()));
      case PadMode::Replicate: return r.narrow(d, left ? 0 : m - 1, 1).expand(shape);
      case PadMode::Circular: return r.narrow(d, left ? m - count : 0, count);
      case PadMode::Reflect: {
        // Mirrored about the edge element: before takes positions count..1, after m-2..m-1-count.
        std::vector<int64_t> index;
        for (int64_t i = 0; i < count; ++i) index.push_back(left ? count - i : m - 2 - i);
        return index_select(r, d, tensor(index, TensorOptions().device(x.device())));
      }
    }
    return Tensor();
  };
  if (o.mode() == PadMode::Reflect && (before >= m || after >= m)) {
    std::ostringstream os;
    os << prefix() << "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (" << before << ", "
       << after << ") at dimension " << d << " of input " << x.shape();
    throw ValueError(os.str());
  }
  if (o.mode() == PadMode::Circular && (before > m || after > m)) {
    std::ostringstream os;
    os << prefix() << "Padding value causes wrapping around more than once: padding (" << before << ", " << after
       << ") at dimension " << d << " of input " << x.shape();
    throw ValueError(os.str());
  }
  if (o.mode() == PadMode::Replicate && m == 0) throw ValueError(prefix() + "padding a dimension of size 0 needs constant mode");
  if (before > 0) parts.push_back(piece(before, true));
  parts.push_back(r);
  if (after > 0) parts.push_back(piece(after, false));
  return cat(parts, d);
}

}  // namespace

Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  const detail::PublicOpScope scope("pad");
  const std::vector<int64_t>& p = options.pad();
  if (p.size() % 2 != 0) throw ValueError(prefix() + "Padding length must be divisible by 2");
  const int64_t pairs = static_cast<int64_t>(p.size()) / 2;
  if (pairs > input.dim()) throw ValueError(prefix() + "Padding length too large");
  if (options.mode() == PadMode::Circular && input.dim() != pairs + 2) {
    // PyTorch 1.13 pads circularly only with the batch and channel dims in front.
    throw ValueError(prefix() + "Invalid padding size, expected " + std::to_string(2 * (input.dim() - 2)) + " but got " +
                     std::to_string(p.size()) + " (circular padding needs [N, C, ...] with one pair per spatial dim)");
  }
  if (options.mode() != PadMode::Constant) {
    // PyTorch 1.13 pads 1, 2 or 3 trailing dims this way, of a tensor with one or two more.
    if (pairs < 1 || pairs > 3 || input.dim() < pairs + 1 || input.dim() > pairs + 2) {
      std::ostringstream os;
      const char* mode = options.mode() == PadMode::Reflect ? "reflect" : options.mode() == PadMode::Replicate ? "replicate" : "circular";
      os << prefix() << mode << " padding of " << pairs
         << " dims expects a " << pairs + 1 << "D or " << pairs + 2 << "D input, got " << input.dim() << "D";
      throw NotImplementedError(os.str());
    }
  }
  Tensor r = input;
  for (int64_t i = 0; i < pairs; ++i) r = pad_dim(r, input.dim() - 1 - i, p[2 * i], p[2 * i + 1], options);
  return r.shares_storage(input) ? r.clone() : r;
}

Tensor one_hot(const Tensor& tensor, int64_t num_classes) {
  const detail::PublicOpScope scope("one_hot");
  if (tensor.dtype() != DType::Int64) throw DTypeError(detail::error_prefix("one_hot") + "one_hot is only applicable to index tensor.");
  const std::vector<int64_t> values = tensor.to(Device("cpu")).contiguous().to_vector<int64_t>();
  if (values.empty() && num_classes == -1)
    throw ValueError(detail::error_prefix("one_hot") + "Can not infer total number of classes from empty tensor.");
  int64_t lo = 0, hi = -1;
  for (size_t i = 0; i < values.size(); ++i) {
    lo = i ? std::min(lo, values[i]) : values[i];
    hi = i ? std::max(hi, values[i]) : values[i];
  }
  if (lo < 0) throw ValueError(detail::error_prefix("one_hot") + "Class values must be non-negative.");
  if (num_classes == -1) num_classes = hi + 1;
  else if (!values.empty() && hi >= num_classes)
    throw ValueError(detail::error_prefix("one_hot") + "Class values must be smaller than num_classes.");
  const Tensor classes = arange(num_classes, TensorOptions().dtype(DType::Int64).device(tensor.device()));
  return eq(tensor.unsqueeze(-1), classes).to(DType::Int64);
}

}  // namespace locus::nn::functional
