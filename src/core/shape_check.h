#pragma once
// The one check every place that builds a tensor's shape runs first.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "locus/shape.h"

namespace locus::detail {

/// The element count of a tensor of `shape` whose elements take `itemsize` bytes, after checking
/// that no dim is negative and that the byte size of the largest contiguous layout (every dim
/// counted as at least 1, so that the contiguous strides of an empty tensor fit too) fits in
/// int64. Throws ShapeError naming `op` and the shape: without the check a product that wraps
/// gives a tensor whose numel or nbytes is a small lie, and the first read or write crashes.
int64_t checked_numel(const Shape& shape, size_t itemsize, std::string_view op);

}  // namespace locus::detail
