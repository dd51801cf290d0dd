// The thread's autocast state and the casts autocast makes (Note [Autocast] in autocast.h).

#include "src/ops/autocast.h"

#include <unordered_map>

#include "locus/autograd.h"
#include "src/ops/kernel_registry.h"

namespace locus::ops {

namespace autocast_detail {
constinit thread_local int t_active = 0;
}  // namespace autocast_detail

namespace {

using autocast_detail::t_active;

// A cached cast: the weight it came from (held, so its address is not reused while cached) and
// the cast, for one grad mode.
struct CachedCast {
  Tensor source;
  Tensor cast;
};

struct CacheKey {
  const void* impl;
  bool grad_mode;
  bool operator==(const CacheKey&) const = default;
};

struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const noexcept {
    return std::hash<const void*>()(k.impl) ^ static_cast<size_t>(k.grad_mode);
  }
};

struct ThreadState {
  bool enabled[kNumDeviceTypes] = {};
  DType dtype[kNumDeviceTypes] = {DType::BFloat16, DType::Float16, DType::Float16, DType::Float16};
  int enabled_types = 0;  // how many entries of `enabled` are true
  int excluded = 0;       // nesting of AutocastExclusion
  int depth = 0;          // nesting of guards
  bool cache_enabled = true;
  std::unordered_map<CacheKey, CachedCast, CacheKeyHash> cache;
  AutocastCounts counts;
};

thread_local ThreadState t_state;

void refresh_active() noexcept { t_active = t_state.excluded == 0 ? t_state.enabled_types : 0; }

int index_of(DeviceType type) noexcept { return static_cast<int>(type); }

Tensor counted_cast(const Tensor& t, DType dtype) {
  ++t_state.counts.casts;
  return t.to(dtype);
}

// PyTorch caches the casts of float32 leaves that require grad: the weights, used by several
// ops of a region. Activations change every call and are not worth holding.
Tensor cached_cast(const Tensor& t, DType dtype) {
  if (!(t_state.cache_enabled && t_state.depth > 0 && t.dtype() == DType::Float32 && t.requires_grad() && t.is_leaf()))
    return counted_cast(t, dtype);
  const CacheKey key{t.impl(), is_grad_enabled()};
  auto it = t_state.cache.find(key);
  if (it != t_state.cache.end() && it->second.cast.dtype() == dtype) {
    ++t_state.counts.cache_hits;
    return it->second.cast;
  }
  Tensor cast = counted_cast(t, dtype);
  t_state.cache[key] = CachedCast{t, cast};
  return cast;
}

}  // namespace

bool autocast_enabled(DeviceType type) noexcept { return t_state.enabled[index_of(type)]; }

DType autocast_lower_precision(DeviceType type) noexcept { return t_state.dtype[index_of(type)]; }

std::pair<bool, DType> set_autocast(DeviceType type, bool enabled, DType dtype) noexcept {
  const int i = index_of(type);
  const std::pair<bool, DType> previous{t_state.enabled[i], t_state.dtype[i]};
  t_state.enabled_types += static_cast<int>(enabled) - static_cast<int>(t_state.enabled[i]);
  t_state.enabled[i] = enabled;
  t_state.dtype[i] = dtype;
  refresh_active();
  return previous;
}

bool enter_autocast_region(bool cache_enabled) noexcept {
  ++t_state.depth;
  const bool previous = t_state.cache_enabled;
  t_state.cache_enabled = cache_enabled;
  return previous;
}

void leave_autocast_region(bool previous_cache_enabled) noexcept {
  t_state.cache_enabled = previous_cache_enabled;
  if (--t_state.depth == 0) t_state.cache.clear();
}

AutocastCounts autocast_counts() noexcept { return t_state.counts; }

Tensor autocast_input(CastPolicy policy, const Tensor& t) {
  if (!t.defined() || !is_floating_point(t.dtype()) || t.dtype() == DType::Float64) return t;
  const int i = index_of(t.device().type());
  if (!t_state.enabled[i]) return t;
  if (policy == CastPolicy::LowerPrecision) {
    const DType lower = t_state.dtype[i];
    return t.dtype() == lower ? t : cached_cast(t, lower);
  }
  if (policy == CastPolicy::Float32) return t.dtype() == DType::Float32 ? t : counted_cast(t, DType::Float32);
  return t;
}

AutocastExclusion::AutocastExclusion() noexcept {
  ++t_state.excluded;
  t_active = 0;
}

AutocastExclusion::~AutocastExclusion() {
  --t_state.excluded;
  refresh_active();
}

bool has_product_kernel(DeviceType type, DType dtype) noexcept { return has_kernel(type, OpId::Matmul, dtype); }

}  // namespace locus::ops
