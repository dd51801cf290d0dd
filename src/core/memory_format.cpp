// Memory formats (locus/memory_format.h): the strides each one gives, and which a tensor has.

#include "locus/memory_format.h"

#include <algorithm>
#include <array>
#include <ostream>
#include <string>

#include "locus/errors.h"
#include "locus/tensor.h"
#include "src/core/memory_format.h"
#include "src/core/public_op.h"

namespace locus {
namespace {

// The dimensions from the fastest to the slowest: channels, then the spatial ones from the
// last, then the batch.
constexpr std::array<size_t, 4> kChannelsLast2d = {1, 3, 2, 0};
constexpr std::array<size_t, 5> kChannelsLast3d = {1, 4, 3, 2, 0};

size_t rank_of(MemoryFormat format) { return format == MemoryFormat::ChannelsLast ? 4 : 5; }

template <size_t R>
Shape strides_in_order(const Shape& sizes, const std::array<size_t, R>& fastest_first) {
  Shape strides(R, 0);
  int64_t next = 1;
  for (size_t d : fastest_first) {
    strides[d] = next;
    next *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

// PyTorch's test of "strides like channels-last" (c10's is_channels_last_strides_2d/3d): the
// strides grow along the format's order, sizes of one aside, and the batch's stride is not the
// channels' (an [N, 1, 1, 1]-like ambiguity stays Contiguous).
template <size_t R>
bool strides_follow(const Shape& sizes, const Shape& strides, const std::array<size_t, R>& fastest_first) {
  if (sizes.size() != R || strides[1] == 0) return false;
  int64_t least = 0;
  for (size_t d : fastest_first) {
    if (sizes[d] == 0 || strides[d] < least) return false;
    if (d == 0 && least == strides[1]) return false;
    least = strides[d];
    if (sizes[d] > 1) least *= sizes[d];
  }
  return true;
}

}  // namespace

void check_memory_format(size_t rank, MemoryFormat format, const char* op) {
  if (format == MemoryFormat::Preserve)
    throw ValueError(detail::error_prefix(op) + "MemoryFormat::Preserve is not a layout " + op + "() can make");
  if (format == MemoryFormat::Contiguous || rank == rank_of(format)) return;
  throw ValueError(detail::error_prefix(op) + "required rank " + std::to_string(rank_of(format)) + " tensor to use " +
                   (format == MemoryFormat::ChannelsLast ? "channels_last" : "channels_last_3d") + " format, got rank " +
                   std::to_string(rank));
}

std::ostream& operator<<(std::ostream& os, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Contiguous: return os << "Contiguous";
    case MemoryFormat::Preserve: return os << "Preserve";
    case MemoryFormat::ChannelsLast: return os << "ChannelsLast";
    case MemoryFormat::ChannelsLast3d: return os << "ChannelsLast3d";
  }
  return os << "MemoryFormat(" << static_cast<int>(format) << ")";
}

Shape strides_for(const Shape& sizes, MemoryFormat format) {
  check_memory_format(sizes.size(), format, "strides_for");
  if (format == MemoryFormat::ChannelsLast) return strides_in_order(sizes, kChannelsLast2d);
  if (format == MemoryFormat::ChannelsLast3d) return strides_in_order(sizes, kChannelsLast3d);
  Shape strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(sizes[i], 1);
  return strides;
}

bool is_dense_in(const Shape& sizes, const Shape& strides, MemoryFormat format) {
  if (sizes.size() != strides.size())
    throw ValueError("[locus::is_dense_in] " + std::to_string(sizes.size()) + " sizes but " +
                     std::to_string(strides.size()) + " strides");
  const Shape dense = strides_for(sizes, format);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return true;  // no element: every layout holds it
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && strides[d] != dense[d]) return false;
  }
  return true;
}

bool Tensor::is_contiguous(MemoryFormat format) const {
  // PyTorch's answers: Preserve asks plain contiguity, a channels-last format of another rank is
  // false.
  if (format == MemoryFormat::Contiguous || format == MemoryFormat::Preserve) return is_contiguous();
  if (shape().size() != rank_of(format)) return false;
  return is_dense_in(shape(), strides(), format);
}

MemoryFormat Tensor::suggest_memory_format() const {
  if (strides_follow(shape(), strides(), kChannelsLast2d)) return MemoryFormat::ChannelsLast;
  if (strides_follow(shape(), strides(), kChannelsLast3d)) return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

}  // namespace locus
