#pragma once
/// \file tensor.h
/// Tensor: a handle to a strided, typed view of memory on one device.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "locus/detail/tensor_impl.h"
#include "locus/detail/tensor_substitution.h"
#include "locus/device.h"
#include "locus/dtype.h"
#include "locus/host_values.h"
#include "locus/memory_format.h"
#include "locus/scalar.h"
#include "locus/shape.h"
#include "locus/tensor_accessor.h"
#include "locus/tensor_options.h"

namespace locus {

class Tensor;
namespace cuda {
class Stream;
}
namespace autograd {
class Node;
}

namespace indexing {
/// A Python-style slice for Tensor::index, LibTorch's `at::indexing::Slice`: `Slice(1, 3)` is
/// `1:3`, `Slice(None, None, 2)` is `::2`. Negative bounds count from the end; bounds past the
/// ends are clipped, as in PyTorch; the step must be positive.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  Slice(std::optional<int64_t> start_ = std::nullopt, std::optional<int64_t> stop_ = std::nullopt,
        std::optional<int64_t> step_ = std::nullopt)
      : start(start_), stop(stop_), step(step_.value_or(1)) {}
};
class TensorIndex;  // locus/indexing.h, included at the end of this header
}  // namespace indexing
using indexing::Slice;

struct ValuesIndices;  // defined in ops.h: {values, indices} of max/min along a dim

/// A tensor: dtype, shape, strides and a device-resident buffer, shared by views.
/// Copying a Tensor copies the handle (like a Python reference), never the data.
/// Methods are thread-compatible: concurrent reads are safe, concurrent writes to one
/// tensor need outside synchronisation, as in PyTorch.
class Tensor {
 public:
  /// An undefined tensor (defined() is false).
  Tensor() = default;
  explicit Tensor(detail::intrusive_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}
  /// Another handle to the same tensor. While a module is being replicated on this thread, a
  /// copy of one of its parameters or buffers refers to the replica's tensor instead (Note
  /// [Replicating modules], src/nn/replicate.cpp); everywhere else this is a plain copy.
  Tensor(const Tensor& other) : impl_(other.impl_) {
    if (detail::substituting_threads.load(std::memory_order_relaxed) != 0) [[unlikely]]
      detail::substitute_tensor(impl_);
  }
  Tensor(Tensor&& other) noexcept = default;
  Tensor& operator=(const Tensor& other) = default;
  Tensor& operator=(Tensor&& other) noexcept = default;

  // ---- metadata -------------------------------------------------------------------------
  /// False for a default-constructed handle; every other call needs a defined tensor.
  bool defined() const noexcept { return static_cast<bool>(impl_); }
  Device device() const { return impl()->device(); }
  DType dtype() const { return impl()->dtype(); }
  const Shape& shape() const { return impl()->sizes(); }
  /// LibTorch's name for shape().
  const Shape& sizes() const { return impl()->sizes(); }
  /// The dtype, device and requires_grad of this tensor as factory options
  /// (`zeros(shape, x.options())` makes a tensor like x).
  TensorOptions options() const {
    return TensorOptions().dtype(dtype()).device(device()).requires_grad(requires_grad());
  }
  /// Size of dim `d` (negative counts from the end). IndexError when out of range.
  int64_t size(int64_t d) const;
  const Shape& strides() const { return impl()->strides(); }
  int64_t stride(int64_t d) const;
  int64_t dim() const { return static_cast<int64_t>(impl()->sizes().size()); }
  int64_t numel() const { return impl()->numel(); }
  size_t itemsize() const { return locus::itemsize(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  int64_t storage_offset() const { return impl()->offset(); }
  bool is_contiguous() const { return impl()->is_contiguous(); }
  /// True when the elements are dense in `format`'s order (is_contiguous(ChannelsLast): a 4-d
  /// tensor stored NHWC); dimensions of size 1 may have any stride. As PyTorch: false for a
  /// channels-last format of another rank, and Preserve asks plain contiguity.
  bool is_contiguous(MemoryFormat format) const;
  /// ChannelsLast (or ChannelsLast3d) when the strides grow channels first, then the spatial
  /// dims from the last, then the batch (PyTorch's test, on strides alone: a contiguous
  /// [N, 1, H, W] suggests Contiguous, the same shape with strides [HW, 1, W, 1] ChannelsLast),
  /// else Contiguous.
  MemoryFormat suggest_memory_format() const;
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_sim() const { return device().is_sim(); }
  bool is_floating_point() const { return locus::is_floating_point(dtype()); }
  /// True when the memory is page-locked host memory (pin_memory()).
  bool is_pinned() const { return impl()->storage()->pinned(); }
  /// Tells the allocator this tensor's memory is also used by work queued on `stream`, so the
  /// block is not handed out again until that work is done (torch's Tensor.record_stream).
  /// Needed only when a tensor made on one stream is used on another and freed before the
  /// other stream's work finishes. ValueError when the stream is on another device.
  void record_stream(const cuda::Stream& stream) const;
  bool requires_grad() const { return impl()->requires_grad(); }
  /// Sets the flag in place (floating dtypes only, else DTypeError); returns *this.
  Tensor& requires_grad_(bool r = true);
  /// LibTorch's set_requires_grad(r): requires_grad_(r).
  Tensor& set_requires_grad(bool r) { return requires_grad_(r); }
  /// True when both handles refer to the same tensor object (Python's `is`).
  bool is_same(const Tensor& other) const noexcept { return impl_ == other.impl_; }
  /// True when both views share one buffer.
  bool shares_storage(const Tensor& other) const noexcept;

  // ---- moves between devices and dtypes --------------------------------------------------
  /// Copy to `device` (dtype kept). Returns *this (same object) when already there and `copy` is
  /// false. Host to CUDA with non_blocking is asynchronous from pinned memory; device to host
  /// with non_blocking returns at once and every host read of the result waits for the copy.
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  /// Converts the dtype on the same device; same object when nothing changes and !copy.
  Tensor to(DType dtype, bool non_blocking = false, bool copy = false) const;
  /// Both at once (PyTorch's `x.to(device=..., dtype=...)`).
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false) const;
  /// Same device and dtype as `other`.
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  /// Dtype conversions by name, as Python's x.half() / x.float() / x.double() / x.long() (with
  /// a trailing _ where the name is a C++ keyword).
  Tensor half() const { return to(DType::Float16); }
  Tensor bfloat16() const { return to(DType::BFloat16); }
  Tensor float_() const { return to(DType::Float32); }
  Tensor double_() const { return to(DType::Float64); }
  Tensor long_() const { return to(DType::Int64); }
  Tensor int_() const { return to(DType::Int32); }
  Tensor bool_() const { return to(DType::Bool); }
  /// To `cuda:index` (the current CUDA device when -1).
  Tensor cuda(int index = -1, bool non_blocking = false) const;
  /// To the CPU; same object when already there.
  Tensor cpu() const;
  /// A copy in page-locked host memory (CPU tensors only); same object when already pinned.
  Tensor pin_memory() const;
  /// Copies `src` into this tensor (any devices, dtypes converting, src broadcast to this
  /// shape). Returns *this.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);

  // ---- host access ----------------------------------------------------------------------
  /// The single element as T, from any device (waits for pending copies).
  /// ValueError unless numel() == 1.
  template <class T>
  T item() const;
  /// The single element as a Scalar of the tensor's kind.
  Scalar item() const;
  /// All elements in row-major order. CPU only (ValueError naming the device and `.cpu()`),
  /// and not on a tensor that requires grad (ValueError pointing at `.detach()`); T must match
  /// the dtype (DTypeError).
  template <class T>
  std::vector<T> to_vector() const;
  /// The values with their shape, as Python's tolist(): from any device, converted to T, of a
  /// tensor that may require grad (the values are copied out). `t.tolist<float>().at({i, j})`.
  template <class T>
  HostValues<T> tolist() const;
  /// Raw pointer to the first element on the tensor's own device. DTypeError if T mismatches.
  /// Waits first for a non-blocking copy still using the memory, so the pointer is safe to use.
  template <class T>
  T* data_ptr() const;
  /// Untyped pointer to the first element on the tensor's own device; does not wait for
  /// pending copies (for passing to libraries that order work themselves).
  void* data_ptr() const { return impl()->data(); }
  /// LibTorch's accessor: indexed access to a CPU tensor's elements (`a[i][j]`), through its
  /// strides. DTypeError when T is not the dtype's type, ShapeError unless the tensor has N dims,
  /// ValueError for a tensor that is not on the CPU.
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const& {
    check_accessor(dtype_of<std::remove_const_t<T>>(), N);
    return TensorAccessor<T, N>(data_ptr<std::remove_const_t<T>>(), sizes().data(), strides().data());
  }
  /// Refused on a temporary: the accessor would point into a destroyed tensor.
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;

  // ---- autograd ---------------------------------------------------------------------------
  /// A view of the same data that does not require grad and is cut from the graph.
  Tensor detach() const;
  /// LibTorch's data(): the values without the graph, sharing the buffer (detach()).
  Tensor data() const { return detach(); }
  /// Back-propagates from this tensor through the recorded graph, adding gradients into the
  /// grad() of every leaf that requires grad (only of `inputs` when given), on the leaf's own
  /// device. Without `gradient` the tensor must hold one element (a loss); otherwise `gradient`
  /// has its shape. ValueError when the tensor does not require grad. The graph's saved tensors
  /// are freed as it runs unless `retain_graph` (default: `create_graph`); `create_graph`
  /// records the backward itself, so the gradients can be differentiated again (LibTorch's
  /// Tensor::backward; docs/autograd.md says which ops have second derivatives).
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, std::optional<std::vector<Tensor>> inputs = std::nullopt) const;
  /// The gradient accumulated into this leaf by backward() (undefined until then); for a
  /// non-leaf, the gradient the last backward computed for it when retain_grad() was called.
  Tensor grad() const;
  /// The node that produced this tensor in the recorded graph (`y.grad_fn()->name()` is
  /// "MulBackward0"); null for leaves and for tensors made without recording.
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  /// Which output of grad_fn() this tensor is (0 for single-output ops).
  uint32_t output_nr() const { return impl()->output_nr(); }
  /// The version of this tensor's data: every in-place write into it (or into a view of the
  /// same buffer) adds one; backward compares it with the version a saved tensor had.
  int64_t _version() const { return impl()->storage()->version(); }
  /// True for a tensor made by a view op (it shares its base's data).
  bool is_view() const { return static_cast<bool>(impl()->view_base()); }
  /// The tensor a view views (undefined for a tensor that is not a view).
  Tensor _base() const { return impl()->view_base() ? Tensor(impl()->view_base()) : Tensor(); }
  /// Keeps the gradient of this non-leaf tensor in grad() after backward (leaves keep theirs
  /// anyway; nothing happens for them). ValueError on a tensor that does not require grad.
  void retain_grad() const;
  /// True when grad() of this tensor is kept: a leaf that requires grad, or retain_grad() was called.
  bool retains_grad() const;
  /// Calls `hook(grad)` with the gradient computed for this tensor, before it flows on (or,
  /// for a leaf, before it is added into grad()). A hook returning a Tensor replaces the
  /// gradient with it; one returning void only looks. Returns an id for remove_hook.
  /// ValueError on a tensor that does not require grad.
  template <class Hook>
  unsigned register_hook(Hook&& hook) const {
    if constexpr (std::is_void_v<std::invoke_result_t<Hook&, Tensor>>) {
      return register_gradient_hook([h = std::forward<Hook>(hook)](const Tensor& g) mutable {
        h(g);
        return Tensor();
      });
    } else {
      return register_gradient_hook([h = std::forward<Hook>(hook)](const Tensor& g) mutable { return Tensor(h(g)); });
    }
  }
  /// Removes a hook by the id register_hook returned (nothing when it is gone already).
  void remove_hook(unsigned id) const;
  /// Calls `hook(*this)` each time backward() has added into this leaf's grad() (PyTorch's
  /// register_post_accumulate_grad_hook: what DistributedDataParallel starts its all-reduces
  /// from). Returns an id for remove_post_accumulate_grad_hook. ValueError on a tensor that is
  /// not a leaf requiring grad.
  uint64_t register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;
  /// Removes a hook by the id registration returned (nothing when it is gone already).
  void remove_post_accumulate_grad_hook(uint64_t id) const;
  /// Replaces the gradient (an undefined tensor clears it, as `p.grad = None`).
  void set_grad(const Tensor& g) const;
  /// True for tensors not produced by a recorded op (user-made tensors, parameters).
  bool is_leaf() const;
  /// register_hook's untemplated half: `hook` returns the replacement, or an undefined tensor.
  unsigned register_gradient_hook(std::function<Tensor(const Tensor&)> hook) const;
  /// Makes this handle (and every copy of it) refer to `src`'s data, dtype and device, keeping
  /// requires_grad (PyTorch's `p.data = src`). How Module::to moves parameters in place, so an
  /// optimizer holding them keeps working.
  void set_data(const Tensor& src) const;

  // ---- views ----------------------------------------------------------------------------
  /// Same data with a new shape; one entry may be -1. ShapeError when the strides don't allow it.
  Tensor view(const Shape& shape) const;
  /// view() when possible, else a contiguous copy.
  Tensor reshape(const Shape& shape) const;
  Tensor permute(const Shape& dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  /// Transpose of a tensor with at most 2 dims.
  Tensor t() const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t d) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor narrow(int64_t d, int64_t start, int64_t length) const;
  /// Drops dim `d`, keeping position `index` (negative counts from the end).
  Tensor select(int64_t d, int64_t index) const;
  /// Broadcast view to `shape` (-1 keeps a size); no copy.
  Tensor expand(const Shape& shape) const;
  /// Elements `start` to `stop` (exclusive) with `step` along `d`, Python rules.
  Tensor slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) const;
  /// LibTorch's indexing, `x.index({Slice(), 1})` for PyTorch's `x[:, 1]` (locus/indexing.h):
  /// integers, slices, None and Ellipsis give a view; tensors of indices and bool masks gather.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  /// The same with the entries in a vector built at run time.
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  /// `x[i]`: select(0, i).
  Tensor operator[](int64_t i) const { return select(0, i); }
  /// This tensor when contiguous, else a contiguous copy.
  Tensor contiguous() const;
  /// This tensor when dense in `format`'s order, else a copy in it (`ChannelsLast` needs a 4-d
  /// tensor, `ChannelsLast3d` a 5-d one: ValueError otherwise). Differentiable like clone.
  Tensor contiguous(MemoryFormat format) const;
  /// A copy with its own memory, same device and dtype, contiguous.
  Tensor clone() const;
  /// A copy laid out in `format`; Preserve keeps a channels-last tensor channels-last (the
  /// layout suggest_memory_format names) and makes anything else contiguous.
  Tensor clone(MemoryFormat format) const;

  // ---- operations (the free functions of elementwise.h and ops.h, as methods) ------------
  // In-place forms (trailing underscore) write into this tensor, which keeps its dtype: the
  // result must cast to it (DTypeError otherwise, as in PyTorch).
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& o) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(const Scalar& o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(const Scalar& o) const;
  /// Division with PyTorch's rounding_mode ("trunc", "floor" or std::nullopt).
  Tensor div(const Tensor& o, std::optional<std::string_view> rounding_mode) const;
  Tensor div(const Scalar& o, std::optional<std::string_view> rounding_mode) const;
  Tensor floor_divide(const Tensor& o) const;
  Tensor floor_divide(const Scalar& o) const;
  Tensor remainder(const Tensor& o) const;
  Tensor remainder(const Scalar& o) const;
  Tensor fmod(const Tensor& o) const;
  Tensor fmod(const Scalar& o) const;
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& o);
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& o);
  Tensor& mul_(const Tensor& o);
  Tensor& mul_(const Scalar& o);
  Tensor& div_(const Tensor& o);
  Tensor& div_(const Scalar& o);
  Tensor pow(const Tensor& e) const;
  Tensor pow(const Scalar& e) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor exp() const;
  Tensor expm1() const;
  Tensor log() const;
  Tensor log1p() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor erf() const;
  Tensor relu() const;
  Tensor gelu() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor trunc() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor logical_not() const;
  Tensor& neg_();
  Tensor& abs_();
  Tensor& sign_();
  Tensor& exp_();
  Tensor& expm1_();
  Tensor& log_();
  Tensor& log1p_();
  Tensor& sqrt_();
  Tensor& rsqrt_();
  Tensor& sin_();
  Tensor& cos_();
  Tensor& tanh_();
  Tensor& sigmoid_();
  Tensor& erf_();
  Tensor& relu_();
  Tensor& floor_();
  Tensor& ceil_();
  Tensor& round_();
  Tensor& trunc_();
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor tan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor log2() const;
  Tensor log10() const;
  Tensor exp2() const;
  Tensor reciprocal() const;
  Tensor square() const;
  Tensor frac() const;
  Tensor atan2(const Tensor& o) const;
  Tensor hypot(const Tensor& o) const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor nan_to_num(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  Tensor& tan_();
  Tensor& sinh_();
  Tensor& cosh_();
  Tensor& asin_();
  Tensor& acos_();
  Tensor& atan_();
  Tensor& log2_();
  Tensor& log10_();
  Tensor& exp2_();
  Tensor& reciprocal_();
  /// In place: x keeps its dtype, so a bool tensor is a DTypeError (its square is int64).
  Tensor& square_();
  Tensor& frac_();
  Tensor& atan2_(const Tensor& o);
  Tensor& hypot_(const Tensor& o);
  Tensor& nan_to_num_(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);
  Tensor& clamp_min_(const Scalar& min);
  Tensor& clamp_max_(const Scalar& max);
  /// In place: the result is computed, then written into this tensor (shape and dtype kept).
  Tensor& lerp_(const Tensor& end, const Scalar& weight);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
  Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
  Tensor eq(const Tensor& o) const;
  Tensor eq(const Scalar& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(const Scalar& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(const Scalar& o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(const Scalar& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(const Scalar& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(const Scalar& o) const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  /// `allclose(*this, other, rtol, atol, equal_nan)`, LibTorch's `a.allclose(b)`.
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  /// `equal(*this, other)`, LibTorch's `a.equal(b)`.
  bool equal(const Tensor& other) const;
  /// `where(condition, *this, other)`.
  Tensor where(const Tensor& condition, const Tensor& other) const;
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(const Shape& dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  /// Sum over one dim: `x.sum(1)`, `x.sum(1, true)`.
  Tensor sum(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean() const;
  Tensor mean(const Shape& dims, bool keepdim = false) const;
  Tensor mean(int64_t dim, bool keepdim = false) const;
  /// The reductions of ops.h as methods: `x.prod()`, `x.amax({1})`, `x.var(1)`, `x.norm()`, ...
  Tensor prod(std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor amax(const Shape& dims = {}, bool keepdim = false) const;
  Tensor amax(int64_t dim, bool keepdim = false) const;
  Tensor amin(const Shape& dims = {}, bool keepdim = false) const;
  Tensor amin(int64_t dim, bool keepdim = false) const;
  Tensor logsumexp(const Shape& dims, bool keepdim = false) const;
  Tensor logsumexp(int64_t dim, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const Scalar& p, const Shape& dims, bool keepdim = false) const;
  Tensor var(bool unbiased = true) const;
  Tensor var(const Shape& dims, bool unbiased = true, bool keepdim = false) const;
  Tensor var(std::initializer_list<int64_t> dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(const Shape& dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std(std::initializer_list<int64_t> dims, bool unbiased = true, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor count_nonzero(const Shape& dims = {}) const;
  /// Sorting, selection and scans of ops.h as methods: `auto [v, i] = x.sort(1, true);`.
  ValuesIndices sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  ValuesIndices topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  ValuesIndices kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor median() const;
  ValuesIndices median(int64_t dim, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  /// The positions of the nonzero elements, [n, dim()] (ops.h).
  Tensor nonzero() const;
  Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor max() const;
  Tensor min() const;
  /// Largest values along `dim` and their (first) positions.
  ValuesIndices max(int64_t dim, bool keepdim = false) const;
  ValuesIndices min(int64_t dim, bool keepdim = false) const;
  Tensor argmax() const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin() const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  /// Products of include/locus/products.h: `beta * *this + alpha * (mat1 @ mat2)` and friends.
  Tensor bmm(const Tensor& mat2) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor mv(const Tensor& vec) const;
  Tensor dot(const Tensor& tensor) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor ger(const Tensor& vec2) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  // ---- shapes, masks and indexing (locus/shape_ops.h has the free functions) ----------
  /// `x.index_put_({Slice(), 0}, v)` is PyTorch's `x[:, 0] = v`: `values` broadcast to the
  /// indexed part. Returns *this.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& values);
  /// `x[...] = number`.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value);
  /// The same with the entries in a vector built at run time.
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& values);
  /// LibTorch's `index_put_(List<optional<Tensor>>, values, accumulate)`: one index tensor per
  /// leading dim (an undefined tensor is a full slice); with `accumulate`, repeated positions
  /// add up (deterministic on the CPU).
  Tensor& index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate);
  /// `index_put_` on a copy.
  Tensor index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false) const;
  /// Views: `chunks` pieces along `dim` (locus::chunk).
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  /// Views of `split_size` along `dim` (locus::split).
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  /// Views of the given sizes along `dim`.
  std::vector<Tensor> split(const std::vector<int64_t>& split_sizes, int64_t dim = 0) const;
  /// Every position along `dim` as a view.
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  /// Tiles the tensor `repeats[i]` times along dim i (a copy, as PyTorch's Tensor.repeat).
  Tensor repeat(const Shape& repeats) const;
  /// Each element `repeats` times along `dim` (flattened without one).
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  /// Element i `repeats[i]` times along `dim`.
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt) const;
  /// Reversed along `dims` (a copy).
  Tensor flip(const Shape& dims) const;
  /// Rotated by `shifts` along `dims` (flattened without dims).
  Tensor roll(const Shape& shifts, const Shape& dims = {}) const;
  /// The lower triangle of the last two dims.
  Tensor tril(int64_t diagonal = 0) const;
  /// The upper triangle of the last two dims.
  Tensor triu(int64_t diagonal = 0) const;
  /// tril in place.
  Tensor& tril_(int64_t diagonal = 0);
  /// triu in place.
  Tensor& triu_(int64_t diagonal = 0);
  /// locus::diag: a vector to a matrix, or a matrix's diagonal.
  Tensor diag(int64_t diagonal = 0) const;
  /// A view of the diagonal of dims dim1 and dim2, moved to the end.
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  /// A view with dims `source` at positions `destination`.
  Tensor movedim(const Shape& source, const Shape& destination) const;
  /// A view with one dim moved.
  Tensor movedim(int64_t source, int64_t destination) const;
  /// transpose, by NumPy's name.
  Tensor swapaxes(int64_t axis0, int64_t axis1) const;
  /// transpose, by another name.
  Tensor swapdims(int64_t dim0, int64_t dim1) const;
  /// Splits dim `dim` into `sizes` (one entry may be -1); a view where the strides allow.
  Tensor unflatten(int64_t dim, const Shape& sizes) const;
  /// expand(other.shape()).
  Tensor expand_as(const Tensor& other) const;
  /// view(other.shape()).
  Tensor view_as(const Tensor& other) const;
  /// reshape(other.shape()).
  Tensor reshape_as(const Tensor& other) const;
  /// `value` where the bool `mask` is true (mask and self broadcast together).
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  /// `value` must be 0-dim.
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  /// masked_fill in place (mask broadcast to self).
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  /// masked_fill in place with a 0-dim value.
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
  /// The elements where `mask` is true, 1-D.
  Tensor masked_select(const Tensor& mask) const;
  /// A copy filled from `source`, in order, where `mask` is true.
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  /// masked_scatter in place.
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);
  /// A copy with `src` written at `index` along `dim` (locus::scatter).
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  /// A copy with `value` written at `index` along `dim`.
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  /// scatter in place.
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  /// scatter of a number in place.
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value);
  /// A copy with `src` added at `index` along `dim` (deterministic on the CPU).
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  /// scatter_add in place.
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  /// A copy with `alpha * source` added at positions `index` along `dim`.
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  /// index_add in place.
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
  /// gather with `indices` broadcast against self off `dim`.
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  /// Sets every element to `value`; ValueError when the dtype cannot hold it (1e6 in float16).
  Tensor& fill_(const Scalar& value);
  Tensor& zero_();
  /// Fills with uniform values in [from, to) (floating dtypes; `to` itself can appear after
  /// rounding to a narrow dtype, as in PyTorch) from the generator (include/locus/random.h).
  Tensor& uniform_(double from = 0, double to = 1);
  /// Fills with normal values of the given mean and standard deviation (floating dtypes).
  Tensor& normal_(double mean = 0, double std = 1);
  /// Sets each element to 1 with probability p, else 0 (any dtype).
  Tensor& bernoulli_(double p = 0.5);
  /// Sets each element to 1 with probability p[i] (p broadcast to this tensor's shape).
  Tensor& bernoulli_(const Tensor& p);
  /// torch.bernoulli(self): samples with this tensor's values as probabilities.
  Tensor bernoulli() const;
  /// A tensor like this one of Bernoulli(p) samples.
  Tensor bernoulli(double p) const;
  /// torch.multinomial(self, num_samples, replacement).
  Tensor multinomial(int64_t num_samples, bool replacement = false) const;

  /// The implementation object; throws ValueError on an undefined tensor.
  detail::TensorImpl* impl() const {
    if (!impl_) throw_undefined();
    return impl_.get();
  }
  const detail::intrusive_ptr<detail::TensorImpl>& impl_ptr() const noexcept { return impl_; }

 private:
  [[noreturn]] static void throw_undefined();
  // accessor()'s checks: dtype, number of dims, CPU.
  void check_accessor(DType expected, size_t dims) const;
  detail::intrusive_ptr<detail::TensorImpl> impl_;
};

/// Prints like PyTorch: `tensor([1., 2., 3.], device='sim:0')`. Waits for pending copies.
std::ostream& operator<<(std::ostream& os, const Tensor& t);
/// The printed form as a string.
std::string to_string(const Tensor& t);

}  // namespace locus

#include "locus/indexing.h"  // TensorIndex holds a Tensor, so it follows the class

LOCUS_API_END
