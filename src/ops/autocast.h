#pragma once
// Autocast on the op path: the thread's state and the one decision every front end asks for.
//
// Note [Autocast]
// amp::AutocastGuard only sets this thread's state (per device type: on or off, and the lower
// precision). The op front ends consult it in one call, autocast(op, run, tensors...), made at
// their entry: the op's policy (src/ops/autocast_lists.h, PyTorch's three lists) says which of
// the op's floating tensors on an autocast device type are cast, and to what; then the op runs
// once on the cast tensors with autocast excluded, so the ops it is made of (linear's matmul and
// add, cross_entropy's log_softmax) are not decided again. Casts are ordinary differentiable
// to() calls, so gradients arrive in each leaf's dtype. A float32 leaf that requires grad (a
// weight) is cast once per outermost guard: the cast is cached, keyed by the weight and by grad
// mode (a cast made under NoGradGuard has no graph and must not serve a recording op). The
// backward pass runs with autocast excluded: backward ops run in the dtypes forward chose.
// Outside a guard the cost is one thread-local load per op.

#include <cstdint>
#include <utility>

#include "locus/device.h"
#include "locus/dtype.h"
#include "locus/tensor.h"
#include "src/ops/autocast_lists.h"

namespace locus::ops {

/// How many casts autocast made on this thread, and how many the weight cache saved.
struct AutocastCounts {
  int64_t casts = 0;       ///< to() conversions autocast made (cache misses included)
  int64_t cache_hits = 0;  ///< casts of a weight answered by the cache
};

namespace autocast_detail {
/// Nonzero while some device type has autocast on and no autocast op is running on this thread.
extern constinit thread_local int t_active;
}  // namespace autocast_detail

/// True when an op on this thread may be cast (the fast check of every front end).
inline bool autocast_active() noexcept { return autocast_detail::t_active > 0; }

/// Whether autocast is on for `type` on this thread.
bool autocast_enabled(DeviceType type) noexcept;
/// The lower precision autocast uses for `type` on this thread.
DType autocast_lower_precision(DeviceType type) noexcept;
/// Sets `type`'s state (the guard's job); returns the previous one.
std::pair<bool, DType> set_autocast(DeviceType type, bool enabled, DType dtype) noexcept;
/// Enters a guard with its cache setting; returns the setting it replaces.
bool enter_autocast_region(bool cache_enabled) noexcept;
/// Leaves a guard, restoring the cache setting enter_autocast_region returned; the weight cache
/// is cleared when the outermost guard leaves.
void leave_autocast_region(bool previous_cache_enabled) noexcept;
/// Whether device type `type` has a product (matmul) kernel in `dtype`: autocast's
/// lower-precision ops are products, so a guard for a type without one is refused.
bool has_product_kernel(DeviceType type, DType dtype) noexcept;
/// This thread's counts.
AutocastCounts autocast_counts() noexcept;

/// `t` as an op of `policy` takes it under the thread's autocast state.
Tensor autocast_input(CastPolicy policy, const Tensor& t);

/// RAII: ops run inside it are not autocast (an op already decided, the backward pass).
class AutocastExclusion {
 public:
  /// Excludes autocast on this thread until destruction (nestable).
  AutocastExclusion() noexcept;
  ~AutocastExclusion();
  AutocastExclusion(const AutocastExclusion&) = delete;
  AutocastExclusion& operator=(const AutocastExclusion&) = delete;
};

/// The one autocast decision of a front end (Note [Autocast]): runs `run` on `tensors` cast as
/// `op`'s policy says, with autocast excluded inside. Call only when autocast_active().
template <class Run, class... Tensors>
decltype(auto) autocast(OpId op, Run&& run, const Tensors&... tensors) {
  const CastPolicy policy = autocast_policy(op);
  if (policy == CastPolicy::Keep || policy == CastPolicy::Promote) {
    const AutocastExclusion excluded;
    return run(tensors...);
  }
  auto cast = [policy](const Tensor& t) { return autocast_input(policy, t); };
  // Arguments are cast before the exclusion starts, all of them (C++ leaves their order open).
  return [&](auto... cast_tensors) -> decltype(auto) {
    const AutocastExclusion excluded;
    return run(cast_tensors...);
  }(cast(tensors)...);
}

}  // namespace locus::ops
