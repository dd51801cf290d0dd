#pragma once
/// \file serialize.h
/// Saving and loading named tensors in the safetensors format (readable by other tools).

#include <map>
#include <optional>
#include <string>

#include "locus/tensor.h"

namespace locus {

/// Writes the tensors (from any device; copied to the host) to `path` in safetensors format,
/// with a CRC-32 of header and data in `__metadata__["locus.crc32"]`. The write is atomic: a
/// temporary file (`<path>.tmp.<pid>.<n>`; one a killed save left behind is removed by the next
/// save to the path) flushed to disk and renamed into place, so the path always holds the old
/// file or the new one, also when several processes save to it at once. IOError naming
/// the path on failure; ValueError for an undefined tensor or the name `__metadata__`.
void save(const std::map<std::string, Tensor>& tensors, const std::string& path);
/// Reads a safetensors file onto `map_location` (cpu by default). IOError naming the file and
/// the problem for a path that is not a readable regular file, a truncated file, a header that
/// is not one well-formed JSON object, data offsets that overlap, leave holes or do not cover the
/// data exactly, sizes that overflow, unknown dtypes, or a checksum that does not match. Sizes
/// are checked against the file before anything is allocated.
std::map<std::string, Tensor> load(const std::string& path, std::optional<Device> map_location = std::nullopt);

}  // namespace locus
