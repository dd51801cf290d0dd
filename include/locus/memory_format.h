#pragma once
/// \file memory_format.h
/// The order a tensor's dimensions have in memory, LibTorch's c10::MemoryFormat.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <iosfwd>

#include "locus/shape.h"

namespace locus {

/// How a tensor's elements are ordered in memory (`x.contiguous(MemoryFormat::ChannelsLast)`,
/// PyTorch's `x.contiguous(memory_format=torch.channels_last)`):
/// - Contiguous: row-major, the last dimension fastest ([N, C, H, W] as NCHW).
/// - ChannelsLast: a 4-d [N, C, H, W] stored as NHWC, the channels fastest. Convolutions,
///   element-wise ops and, on the CPU, batch norm and max pooling keep it; the CPU's
///   convolutions with 64 output pixels or more run on it without reordering their activations
///   (docs/design.md, "Channels-last memory format").
/// - ChannelsLast3d: the same for a 5-d [N, C, D, H, W] (NDHWC).
/// - Preserve: whatever layout the source has, where a copy is made (clone).
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

/// The format's LibTorch name ("ChannelsLast").
std::ostream& operator<<(std::ostream& os, MemoryFormat format);

/// The strides of a dense tensor of `sizes` in `format` (Contiguous or a channels-last one of
/// the matching rank; ValueError for another rank or for Preserve), as PyTorch lays it out.
Shape strides_for(const Shape& sizes, MemoryFormat format);

/// True when `strides` are those of a dense tensor of `sizes` in `format`, dimensions of size 1
/// aside (their stride never matters), as PyTorch's is_contiguous(memory_format). ValueError
/// when the two differ in length, or as strides_for for the format.
bool is_dense_in(const Shape& sizes, const Shape& strides, MemoryFormat format);

}  // namespace locus

LOCUS_API_END
