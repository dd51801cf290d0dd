#pragma once
// The number a runtime or a kernel addresses a device by.

#include "locus/device.h"
#include "src/core/device_ordinal.h"

namespace locus::detail {

/// `d`'s index, 0 for the CPU (one device, whose Device may carry no index): the ordinal
/// runtimes, allocators and kernel argument structs take.
inline int ordinal(Device d) noexcept { return d.is_cpu() ? 0 : d.index(); }

}  // namespace locus::detail
