#pragma once
/// \file fallback.h
/// Backends that lack an operation (SPEC section 6): the query and the CPU-fallback policy.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string_view>

#include "locus/device.h"
#include "locus/dtype.h"

namespace locus {

/// What happens when an op has no kernel for a device and dtype.
enum class CpuFallback : int8_t {
  Error,  ///< throw NotImplementedError (default)
  Warn,   ///< run on the CPU, print a warning once per op
  Silent, ///< run on the CPU quietly
};

/// True when `op` (its public name, e.g. "gelu") has a kernel for `device` and `dtype`.
/// ValueError for an unknown op name.
bool supports(std::string_view op, Device device, DType dtype);
/// Sets the policy for the whole process (initially from LOCUS_CPU_FALLBACK=error|warn|silent).
void set_cpu_fallback(CpuFallback policy);
CpuFallback cpu_fallback();
/// How many calls ran on the CPU through the fallback (per op name, or all when empty).
int64_t fallback_count(std::string_view op = {});

}  // namespace locus

LOCUS_API_END
