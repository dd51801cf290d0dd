#pragma once
/// \file serialize.h
/// Saving and loading named tensors in the safetensors format (readable by other tools).

#include <map>
#include <optional>
#include <string>

#include "locus/tensor.h"

namespace locus {

/// Writes the tensors (from any device; copied to the host) to `path` in safetensors format.
/// The write is atomic: a temporary file renamed into place, so a crash never leaves a
/// half-written file. IOError naming the path on failure.
void save(const std::map<std::string, Tensor>& tensors, const std::string& path);
/// Reads a safetensors file onto `map_location` (cpu by default). IOError naming the file and
/// the problem for a missing, truncated or corrupt file.
std::map<std::string, Tensor> load(const std::string& path, std::optional<Device> map_location = std::nullopt);

}  // namespace locus
