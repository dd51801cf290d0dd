#pragma once
// The CRC-32 Locus writes into its safetensors files, and the rule for checking it
// (Note [Checksum under two keys] in checksum.cpp).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/serialize/safetensors_header.h"

namespace locus::serialize {

/// The metadata keys that each hold the checksum (as 8 lowercase hex digits).
inline constexpr const char* kChecksumKeys[] = {"locus.crc32", "locus.crc32.copy"};

/// The CRC-32 (zlib's) of what the header says of each tensor (name, dtype, shape, offsets), in
/// header order: the start of a file's checksum, before the data is added.
uint32_t describe_tensors(const std::vector<TensorEntry>& tensors);
/// `crc` continued over `n` bytes at `data`.
uint32_t add_bytes(uint32_t crc, const void* data, uint64_t n);
/// `crc` as 8 lowercase hex digits.
std::string hex32(uint32_t crc);
/// IOError naming `path` when a checksum key present in `metadata` does not hold `computed`.
/// A file without any of the keys (another tool wrote it) passes.
void verify_checksum(const std::map<std::string, std::string>& metadata, uint32_t computed, const std::string& path);

}  // namespace locus::serialize
