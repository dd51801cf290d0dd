#pragma once
// The check behind every op that takes a MemoryFormat (locus/memory_format.h).

#include <cstddef>

#include "locus/memory_format.h"

namespace locus {

/// Raises a ValueError naming `op` when `format` is Preserve or a channels-last format of another
/// rank than `rank` (PyTorch's "required rank 4 tensor to use channels_last format").
void check_memory_format(size_t rank, MemoryFormat format, const char* op);

}  // namespace locus
