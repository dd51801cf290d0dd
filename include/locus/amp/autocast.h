#pragma once
/// \file amp/autocast.h
/// Autocast (torch.autocast): inside an AutocastGuard, matmul-like ops run in float16 or
/// bfloat16 and precision-hungry ones (softmax, exp, log, pow, sum, mean, the losses) in
/// float32, on the device type the guard names. docs/mixed_precision.md has the lists.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>

#include "locus/device.h"
#include "locus/dtype.h"

namespace locus::amp {

/// The lower precision autocast uses on `type` when none is named: float16 on cuda and sim,
/// bfloat16 on cpu (as PyTorch).
DType default_autocast_dtype(DeviceType type) noexcept;

/// RAII, per thread, nestable: `with torch.autocast(device_type, dtype):`. Ops on tensors of
/// `type` follow the autocast lists while it lives; leaving it restores the state it found.
/// Unlike PyTorch, a device type or dtype autocast cannot serve is a ValueError saying why,
/// never a warning that switches autocast off. Casts of a float32 weight (a leaf that requires
/// grad) are made once and kept until the outermost guard of the thread ends.
class AutocastGuard {
 public:
  /// Autocast on `type` in `dtype` (default_autocast_dtype(type) when not given); `enabled`
  /// false switches it off inside (nothing is checked then); `cache_enabled` false casts weights
  /// anew at every use.
  explicit AutocastGuard(DeviceType type, std::optional<DType> dtype = std::nullopt, bool enabled = true,
                         bool cache_enabled = true);
  /// `AutocastGuard(kCUDA, false)`: autocast off for `type` inside (`enabled=False`).
  AutocastGuard(DeviceType type, bool enabled);
  /// Restores the state the guard found (and ends the weight cache with the outermost guard).
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType type_;
  bool previous_enabled_;
  DType previous_dtype_;
  bool previous_cache_enabled_ = true;
};

/// Whether autocast is on for `type` on this thread.
bool is_autocast_enabled(DeviceType type) noexcept;
/// The lower precision in force for `type` on this thread (its default when autocast is off).
DType autocast_dtype(DeviceType type) noexcept;

/// How many conversions autocast made on this thread since it started, and how many uses of a
/// weight the cast cache answered instead.
struct AutocastCounts {
  int64_t casts = 0;       ///< conversions made (each cached weight counted once per region)
  int64_t cache_hits = 0;  ///< weight uses served by the cache
};
/// This thread's counts (compare two readings around a region).
AutocastCounts autocast_counts() noexcept;

/// Checks that autocast can run `dtype` on `type` (as the guard does): ValueError saying why not.
void check_autocast_support(DeviceType type, DType dtype);

}  // namespace locus::amp

LOCUS_API_END
