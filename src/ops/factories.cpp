// Factories: tensors made directly on their device.

#include "locus/factories.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <sstream>

#include "locus/errors.h"
#include "locus/autograd.h"
#include "src/autograd/node.h"
#include "src/core/memory_format.h"
#include "src/core/public_op.h"
#include "src/core/shape_check.h"
#include "src/ops/dispatch.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/random_counters.h"
#include "src/ops/scalar_fits.h"
#include "src/ops/strided_iter.h"
#include "src/ops/structured_call.h"
#include "src/runtime/device_runtime.h"

namespace locus {
namespace {

using ops::OpId;

struct Generator {
  std::mutex mutex;
  uint64_t seed = 0x853c49e6748fea9bULL;
  uint64_t offset = 0;
  // Reserves `n` counters so concurrent calls draw disjoint streams.
  std::pair<uint64_t, uint64_t> take(uint64_t n) {
    std::lock_guard lock(mutex);
    const uint64_t start = offset;
    offset += n;
    return {seed, start};
  }
};

Generator& generator() {
  static Generator g;
  return g;
}

// `op` names the factory in errors: "[locus::zeros] negative dimension -1 ...".
Tensor make(const Shape& shape, const TensorOptions& o, DType fallback, std::string_view op) {
  const Device device = runtime::resolve_device(o.device());
  const DType dtype = o.dtype_or(fallback);
  detail::checked_numel(shape, itemsize(dtype), op);
  if (o.requires_grad() && !is_floating_point(dtype))
    throw DTypeError("only tensors of floating dtype can require gradients, got " + std::string(dtype_name(dtype)));
  const MemoryFormat format = o.memory_format_opt().value_or(MemoryFormat::Contiguous);
  check_memory_format(shape.size(), format, std::string(op).c_str());
  Tensor t = ops::empty_on(shape, dtype, device, format, o.pinned_memory());
  if (o.requires_grad()) t.impl()->set_requires_grad(true);
  return t;
}

Tensor generate(OpId op, const Shape& shape, const TensorOptions& o, DType fallback, double low, double high);

// Writes op's values into `t` (any layout) from the generator: element i in t's logical order
// takes counter offset + i, so a seed gives the same tensor on every device and layout.
void fill_random(const Tensor& t, OpId op, double low, double high) {
  if (t.numel() == 0) return;  // no counters taken (and an empty tensor may not count as contiguous)
  // Note [Structured op path], with one twist: a layout the kernel cannot write (not
  // contiguous) is generated on the host in logical order and copied in, as the fallback does.
  const ops::StructuredCall call(op, {{t, "self"}});
  const ops::KernelTable* k = t.is_contiguous() ? call.kernels(t.dtype()) : nullptr;
  if (!k) {
    NoGradGuard filling;  // a factory's own writes are not part of any graph
    Tensor host = generate(op, t.shape(), TensorOptions().dtype(t.dtype()), t.dtype(), low, high);
    Tensor(t).copy_(host);
    return;
  }
  call.wait_for_inputs();
  ops::RandomArgs a;
  a.op = op;
  a.device = call.device_index();
  a.dtype = t.dtype();
  a.out = ops::dense_result(t);
  a.numel = t.numel();
  a.low = low;
  a.high = high;
  if (op != OpId::Arange) std::tie(a.seed, a.offset) = generator().take(static_cast<uint64_t>(t.numel()));
  if (a.numel) k->random(a);
}

Tensor generate(OpId op, const Shape& shape, const TensorOptions& o, DType fallback, double low, double high) {
  Tensor t = make(shape, o, fallback, ops::op_name(op));
  fill_random(t, op, low, high);
  return t;
}

TensorOptions like_options(const Tensor& like, const std::optional<TensorOptions>& o) {
  TensorOptions r = TensorOptions().dtype(like.dtype()).device(like.device());
  std::optional<MemoryFormat> format;
  if (o) {
    if (o->dtype_opt()) r = r.dtype(*o->dtype_opt());
    if (!(o->device() == Device(DeviceType::CPU))) r = r.device(o->device());
    r = r.requires_grad(o->requires_grad());
    format = o->memory_format_opt();
  }
  // PyTorch's *_like default: the layout of `like` (a channels-last tensor gives channels-last).
  if (!format || *format == MemoryFormat::Preserve) format = like.suggest_memory_format();
  return r.memory_format(format);
}

template <class T>
DType natural_dtype() {
  // A plain `int` literal is a Python int in the seeds' code: int64, as torch.tensor([1, 2]) gives.
  if constexpr (std::is_same_v<T, int> || std::is_same_v<T, long> || std::is_same_v<T, long long>) return DType::Int64;
  else return dtype_of<T>();
}

template <class T>
using storage_t =
    std::conditional_t<std::is_same_v<T, int> || std::is_same_v<T, long> || std::is_same_v<T, long long>, int64_t, T>;

}  // namespace

template <class T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, TensorOptions options) {
  if (detail::checked_numel(shape, sizeof(T), "tensor") != static_cast<int64_t>(values.size())) {
    std::ostringstream os;
    os << "[locus::tensor] " << values.size() << " values cannot fill shape " << shape << " (" << shape.numel() << " elements)";
    throw ShapeError(os.str());
  }
  using S = storage_t<T>;
  // std::vector<bool> has no data(); bools travel as one byte each.
  using Elem = std::conditional_t<std::is_same_v<S, bool>, uint8_t, S>;
  std::vector<Elem> copy(values.begin(), values.end());
  Tensor host(detail::make_intrusive<detail::TensorImpl>(
      detail::make_intrusive<detail::Storage>(detail::DataPtr(copy.data(), nullptr, nullptr, Device(DeviceType::CPU)),
                                              copy.size() * sizeof(Elem)),
      dtype_of<S>(), shape, Shape(), 0));
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(shape[i], 1);
  host.impl()->set_geometry(shape, strides, 0);
  Tensor t = make(shape, options, natural_dtype<T>(), "tensor");
  NoGradGuard filling;
  t.copy_(host);
  return t;
}

template <class T>
Tensor tensor(const std::vector<T>& values, TensorOptions options) {
  return tensor(values, Shape{static_cast<int64_t>(values.size())}, options);
}
Tensor tensor(const TensorLiteral& data, TensorOptions options) {
  const Shape shape = data.shape();
  const std::vector<Scalar> values = data.flatten();
  const DType dtype = options.dtype_or(data.natural_dtype());
  // Each number converts straight to the target dtype (an int64 beyond 2^53 stays exact).
  if (dtype == DType::Bool) {
    std::vector<bool> v;
    for (const Scalar& s : values) v.push_back(s.to<bool>());
    return tensor(v, shape, options.dtype(dtype));
  }
  if (is_integral(dtype)) {
    std::vector<int64_t> v;
    for (const Scalar& s : values) v.push_back(s.to_int64());
    return tensor(v, shape, options.dtype(dtype));
  }
  std::vector<double> v;
  for (const Scalar& s : values) v.push_back(s.to_double());
  return tensor(v, shape, options.dtype(dtype));
}

#define LOCUS_TENSOR_FACTORY(T)                                                         \
  template LOCUS_API Tensor tensor<T>(const std::vector<T>&, TensorOptions);            \
  template LOCUS_API Tensor tensor<T>(const std::vector<T>&, const Shape&, TensorOptions); \

LOCUS_TENSOR_FACTORY(bool)
LOCUS_TENSOR_FACTORY(uint8_t)
LOCUS_TENSOR_FACTORY(int8_t)
LOCUS_TENSOR_FACTORY(int16_t)
LOCUS_TENSOR_FACTORY(int)
LOCUS_TENSOR_FACTORY(long)
LOCUS_TENSOR_FACTORY(long long)
LOCUS_TENSOR_FACTORY(Half)
LOCUS_TENSOR_FACTORY(BFloat16)
LOCUS_TENSOR_FACTORY(float)
LOCUS_TENSOR_FACTORY(double)
#undef LOCUS_TENSOR_FACTORY

namespace {
Tensor filled(const Shape& shape, const Scalar& value, const TensorOptions& options, DType fallback, std::string_view op) {
  Tensor t = make(shape, options, fallback, op);
  NoGradGuard filling;
  return t.fill_(value);
}
}  // namespace

Tensor empty(const Shape& shape, TensorOptions options) { return make(shape, options, get_default_dtype(), "empty"); }
Tensor zeros(const Shape& shape, TensorOptions options) { return filled(shape, 0, options, get_default_dtype(), "zeros"); }
Tensor ones(const Shape& shape, TensorOptions options) { return filled(shape, 1, options, get_default_dtype(), "ones"); }
Tensor full(const Shape& shape, const Scalar& value, TensorOptions options) {
  ops::check_fits(value, options.dtype_or(value.natural_dtype()), OpId::Fill);
  return filled(shape, value, options, value.natural_dtype(), "full");
}

Tensor arange(const Scalar& end, TensorOptions options) { return arange(0, end, 1, options); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options) {
  const bool floating = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  const DType dtype = options.dtype_or(floating ? get_default_dtype() : DType::Int64);
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  if (!std::isfinite(s) || !std::isfinite(e) || !std::isfinite(st))
    throw ValueError(ops::op_prefix(OpId::Arange) + "start, end and step must be finite");
  // An integral result counts in integers, as PyTorch does: arange(0, 5, 0.5, kInt64) has step 0.
  if (!is_floating_point(dtype)) s = std::trunc(s), e = std::trunc(e), st = std::trunc(st);
  if (st == 0) throw ValueError(ops::op_prefix(OpId::Arange) + "step must be nonzero");
  if ((e - s) / st < 0) throw ValueError(ops::op_prefix(OpId::Arange) + "upper bound and step sign are inconsistent");
  const double count = std::ceil((e - s) / st);
  // Checked before the cast: a double past int64's range (or NaN) has no int64 value to become.
  if (!(count < 9.2233720368547758e18))
    throw ValueError(ops::op_prefix(OpId::Arange) + "(end - start) / step = " + std::to_string(count) + " elements is not a tensor size");
  const auto n = static_cast<int64_t>(count);
  return generate(OpId::Arange, Shape{n}, options.dtype(dtype), dtype, s, st);
}

Tensor linspace(double start, double end, int64_t steps, TensorOptions options) {
  if (steps < 0) throw ValueError(detail::error_prefix("linspace") + "number of steps must be non-negative");
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  return generate(OpId::Arange, Shape{steps}, options, get_default_dtype(), start, step);
}

Tensor eye(int64_t n, std::optional<int64_t> m, TensorOptions options) {
  if (n < 0 || m.value_or(0) < 0) throw ValueError(detail::error_prefix("eye") + "sizes must be non-negative");
  const int64_t cols = m.value_or(n);
  Tensor t = zeros(Shape{n, cols}, options);
  const int64_t diag = std::min(n, cols);
  if (diag == 0) return t;
  // The diagonal is a strided view with stride cols + 1.
  Tensor d(detail::make_intrusive<detail::TensorImpl>(t.impl()->storage(), t.dtype(), Shape{diag}, Shape{cols + 1}, 0));
  d.fill_(1);
  return t;
}

Tensor rand(const Shape& shape, TensorOptions options) {
  const Tensor t = generate(OpId::Rand, shape, options.requires_grad(false), get_default_dtype(), 0, 1);
  if (!is_floating_point(t.dtype())) throw DTypeError(ops::op_prefix(OpId::Rand) + "needs a floating dtype");
  if (options.requires_grad()) t.impl()->set_requires_grad(true);
  return t;
}

Tensor randn(const Shape& shape, TensorOptions options) {
  const Tensor t = generate(OpId::Randn, shape, options.requires_grad(false), get_default_dtype(), 0, 1);
  if (!is_floating_point(t.dtype())) throw DTypeError(ops::op_prefix(OpId::Randn) + "needs a floating dtype");
  if (options.requires_grad()) t.impl()->set_requires_grad(true);
  return t;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions options) {
  if (high <= low) throw ValueError(ops::op_prefix(OpId::Randint) + "high (" + std::to_string(high) + ") must be greater than low (" + std::to_string(low) + ")");
  return generate(OpId::Randint, shape, options, DType::Int64, static_cast<double>(low), static_cast<double>(high));
}

Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void(void*)> deleter, std::optional<Shape> strides) {
  const int64_t numel = detail::checked_numel(shape, itemsize(dtype), "from_blob");
  Shape st = strides.value_or(Shape(shape.size(), 1));
  if (!strides)
    for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * std::max<int64_t>(shape[i], 1);
  if (st.size() != shape.size()) throw ShapeError(detail::error_prefix("from_blob") + "strides and shape have different lengths");
  // The storage spans the furthest element the strides reach (nothing for an empty tensor).
  int64_t extent = numel ? 1 : 0;
  for (size_t i = 0; numel && i < shape.size(); ++i) {
    int64_t reach = 0;
    if (st[i] < 0) throw ShapeError(detail::error_prefix("from_blob") + "negative stride " + std::to_string(st[i]) + " at index " + std::to_string(i));
    if (__builtin_mul_overflow(shape[i] - 1, st[i], &reach) || __builtin_add_overflow(extent, reach, &extent) ||
        extent > INT64_MAX / static_cast<int64_t>(itemsize(dtype)))
      throw ShapeError(detail::error_prefix("from_blob") + "the strides reach past what int64 can address");
  }
  auto* ctx = deleter ? new std::function<void(void*)>(std::move(deleter)) : nullptr;
  detail::DataPtr::Deleter run_deleter = [](void* c, void* p) noexcept {
    auto* fn = static_cast<std::function<void(void*)>*>(c);
    (*fn)(p);
    delete fn;
  };
  detail::DataPtr ptr(data, ctx, ctx ? run_deleter : nullptr, Device(DeviceType::CPU));
  auto storage = detail::make_intrusive<detail::Storage>(std::move(ptr), static_cast<size_t>(extent) * itemsize(dtype));
  return Tensor(detail::make_intrusive<detail::TensorImpl>(std::move(storage), dtype, shape, std::move(st), 0));
}

// Each *_like runs its factory inside a scope, so the factory's errors name the *_like the user
// called (Note [Public op names]).
namespace {
template <class Factory>
Tensor run_like(const char* name, const Tensor& like, std::optional<TensorOptions> o, Factory&& factory) {
  const detail::PublicOpScope scope(name);
  return factory(like.shape(), like_options(like, o));
}
}  // namespace

Tensor empty_like(const Tensor& like, std::optional<TensorOptions> o) {
  return run_like("empty_like", like, o, [](const Shape& s, const TensorOptions& to) { return empty(s, to); });
}
Tensor zeros_like(const Tensor& like, std::optional<TensorOptions> o) {
  return run_like("zeros_like", like, o, [](const Shape& s, const TensorOptions& to) { return zeros(s, to); });
}
Tensor ones_like(const Tensor& like, std::optional<TensorOptions> o) {
  return run_like("ones_like", like, o, [](const Shape& s, const TensorOptions& to) { return ones(s, to); });
}
Tensor full_like(const Tensor& like, const Scalar& v, std::optional<TensorOptions> o) {
  return run_like("full_like", like, o, [&v](const Shape& s, const TensorOptions& to) { return full(s, v, to); });
}
Tensor rand_like(const Tensor& like, std::optional<TensorOptions> o) {
  return run_like("rand_like", like, o, [](const Shape& s, const TensorOptions& to) { return rand(s, to); });
}
Tensor randn_like(const Tensor& like, std::optional<TensorOptions> o) {
  return run_like("randn_like", like, o, [](const Shape& s, const TensorOptions& to) { return randn(s, to); });
}

namespace ops {
std::pair<uint64_t, uint64_t> take_random_counters(uint64_t n) { return generator().take(n); }

void give_back_random_counters(uint64_t seed, uint64_t offset, uint64_t n) {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  if (g.seed == seed && g.offset == offset + n) g.offset = offset;
}
}  // namespace ops

void manual_seed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  g.seed = seed;
  g.offset = 0;
}

RngState get_rng_state() {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  return {g.seed, g.offset};
}

void set_rng_state(const RngState& state) {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  g.seed = state.seed;
  g.offset = state.offset;
}

// uniform_ and normal_: the rand and randn streams, scaled in the kernel (RandomArgs), after
// PyTorch's checks in its order: not into a tensor autograd records, a floating dtype (the message
// names PyTorch's kernel, `kernel`), then the arguments (`bad_arguments`: their message, or empty).
namespace {
void fill_random_in_place(Tensor& t, const char* name, const char* kernel, const std::string& bad_arguments, OpId op,
                          double low, double high) {
  const detail::PublicOpScope scope(name);
  // On a tensor in the graph (a non-leaf), the new values have no history (PyTorch's
  // UniformBackward0, NormalBackward0 give zeros); the fill of the fresh tensor makes the
  // checks below.
  if (autograd::in_place_records(t, name, {})) {
    autograd::record_in_place(t, name, {}, [&] {
      Tensor fresh = empty(t.shape(), TensorOptions().dtype(t.dtype()).device(t.device()));
      fill_random_in_place(fresh, name, kernel, bad_arguments, op, low, high);
      return fresh;
    });
    return;
  }
  autograd::prepare_write(t, name);
  if (!t.is_floating_point())
    throw DTypeError(detail::error_prefix(name) + "\"" + kernel + "\" not implemented for '" +
                     std::string(dtype_name(t.dtype())) + "'");
  if (!bad_arguments.empty()) throw ValueError(detail::error_prefix(name) + bad_arguments);
  fill_random(t, op, low, high);
}
}  // namespace

Tensor& Tensor::uniform_(double from, double to) {
  std::ostringstream bad;
  if (!(from <= to)) bad << "uniform_ expects to return a [from, to) range, but found from=" << from << " > to=" << to;
  fill_random_in_place(*this, "uniform_", "check_uniform_bounds", bad.str(), OpId::Rand, from, to);
  return *this;
}

Tensor& Tensor::normal_(double mean, double std) {
  std::ostringstream bad;
  if (!(std >= 0)) bad << "normal expects std >= 0.0, but found std " << std;
  fill_random_in_place(*this, "normal_", "normal_kernel_cpu", bad.str(), OpId::Randn, mean, std);
  return *this;
}

Tensor& Tensor::fill_(const Scalar& value) {
  if (autograd::record_in_place(*this, "fill_", {}, [&] { return full(shape(), value, TensorOptions().dtype(dtype()).device(device())); }))
    return *this;
  autograd::prepare_write(*this, "fill_");
  ops::check_fits(value, dtype(), OpId::Fill);
  const ops::StructuredCall call(OpId::Fill, {{*this, "self"}});
  const ops::KernelTable* k = call.kernels(dtype());
  if (!k) return copy_(call.fall_back([&](Tensor host) { return host.fill_(value); }, *this));
  call.wait_for_inputs();
  ops::ElementwiseScalars s;
  s.other = value, s.has_other = true;
  k->elementwise[static_cast<int>(OpId::Fill)](ops::make_iter(*this, {}), s);
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

}  // namespace locus
