#pragma once
// Moving the bytes of a tensor between devices, asynchronously where the runtime can.

#include "locus/tensor.h"

namespace locus::runtime {

/// Moves the bytes of contiguous `src` into contiguous `dst` of the same dtype and shape on
/// another device. With `non_blocking` and a pinned host side the copy may still be running on
/// return; the host side's storage then carries the work to wait for (Note [Host reads wait]).
void copy_bytes_between(Tensor& dst, const Tensor& src, bool non_blocking);

}  // namespace locus::runtime
