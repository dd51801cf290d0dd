#pragma once
/// \file factories.h
/// Functions that make tensors. Each takes TensorOptions (or a plain Device / dtype), and
/// places the result directly on that device; `"cuda"` / `"sim"` without index mean the
/// current device of that type.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <vector>

#include "locus/scalar.h"
#include "locus/tensor.h"
#include "locus/tensor_literal.h"
#include "locus/tensor_options.h"

namespace locus {

/// A tensor from a number or a nested braced list, as torch.tensor: `tensor({{1.0, 2.0}, {3.0,
/// 4.0}})` is float32 [2, 2] (doubles take the default dtype), `tensor(3.5)` 0-dim, `tensor({1,
/// 2})` int64, `tensor({true})` bool; the options' dtype overrides (TensorLiteral).
Tensor tensor(const TensorLiteral& data, TensorOptions options = {});
/// 1-D tensor from a vector; the dtype follows T (float -> float32, int and int64_t -> int64 as
/// for Python ints, double -> float64 as LibTorch's, bool -> bool) unless the options say otherwise.
template <class T>
Tensor tensor(const std::vector<T>& values, TensorOptions options = {});
/// Values laid out row-major in `shape` (ShapeError when the counts differ).
template <class T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, TensorOptions options = {});

/// Uninitialised memory.
Tensor empty(const Shape& shape, TensorOptions options = {});
Tensor zeros(const Shape& shape, TensorOptions options = {});
Tensor ones(const Shape& shape, TensorOptions options = {});
/// Filled with `value`; the dtype follows the value's kind when not given (7 -> int64).
Tensor full(const Shape& shape, const Scalar& value, TensorOptions options = {});
/// [start, end) with `step`; integers give int64 unless a float is involved.
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, TensorOptions options = {});
/// `steps` values from start to end inclusive.
Tensor linspace(double start, double end, int64_t steps, TensorOptions options = {});
/// Identity matrix n x m (m defaults to n).
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, TensorOptions options = {});
/// Uniform on [0, 1) from the global generator (manual_seed).
Tensor rand(const Shape& shape, TensorOptions options = {});
/// Standard normal from the global generator.
Tensor randn(const Shape& shape, TensorOptions options = {});
/// Integers uniform on [low, high) (int64 unless options say otherwise).
Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions options = {});
/// Wraps existing CPU memory without copying; `deleter` (may be empty) runs when the last
/// view dies. `strides` default to contiguous.
Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void(void*)> deleter = {},
                 std::optional<Shape> strides = std::nullopt);

/// Same shape, dtype and device as `like`, unless options override dtype or device.
Tensor empty_like(const Tensor& like, std::optional<TensorOptions> options = std::nullopt);
Tensor zeros_like(const Tensor& like, std::optional<TensorOptions> options = std::nullopt);
Tensor ones_like(const Tensor& like, std::optional<TensorOptions> options = std::nullopt);
Tensor full_like(const Tensor& like, const Scalar& value, std::optional<TensorOptions> options = std::nullopt);
Tensor rand_like(const Tensor& like, std::optional<TensorOptions> options = std::nullopt);
Tensor randn_like(const Tensor& like, std::optional<TensorOptions> options = std::nullopt);

/// Seeds the global generator. The same seed gives the same values on cpu and sim.
void manual_seed(uint64_t seed);

/// Where the global generator stands: its seed and how many counters it has handed out.
struct RngState {
  uint64_t seed = 0;
  uint64_t offset = 0;
  friend bool operator==(const RngState&, const RngState&) = default;
};
/// The generator's state (torch.get_rng_state), to restore it later with set_rng_state.
RngState get_rng_state();
/// Puts the generator back where get_rng_state found it: the same random tensors follow.
void set_rng_state(const RngState& state);

}  // namespace locus

LOCUS_API_END
