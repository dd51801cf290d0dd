// The checksum of the files Locus writes.
//
// Note [Checksum under two keys]
// save() writes the same CRC-32 (of every tensor's name, dtype, shape and offsets, then the
// data) under two metadata keys, and load() checks each key that is present. With one key, one
// flipped bit in the key's name made the checksum disappear (the file then looks like another
// tool's, which has none), and a second flipped bit in the data loaded a different tensor. Now
// removing the check takes a flip in each key's name, two flips that leave the data intact,
// while a flip in one key's name plus one anywhere else leaves the other key to catch it. A
// damaged value fails its own comparison. Files from other tools carry neither key and are
// checked for layout only; files from older Locus versions carry the first key only and are
// checked against it. CRC-32 finds every one- and two-bit error in up to 2^32 bits (512 MiB);
// larger files keep the 2^-32 chance of a random corruption matching.

#include "src/serialize/checksum.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace locus::serialize {

uint32_t add_bytes(uint32_t crc, const void* data, uint64_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong c = crc;
  while (n > 0) {  // crc32 takes 32-bit lengths
    const uInt chunk = static_cast<uInt>(std::min<uint64_t>(n, uint64_t{1} << 30));
    c = crc32(c, p, chunk);
    p += chunk, n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

uint32_t describe_tensors(const std::vector<TensorEntry>& tensors) {
  uint32_t crc = static_cast<uint32_t>(crc32(0L, Z_NULL, 0));
  for (const TensorEntry& t : tensors) {
    std::ostringstream os;
    os << t.name << '\0' << safetensors_dtype(t.dtype) << '\0';
    for (int64_t d : t.shape) os << d << ',';
    os << '\0' << t.begin << '\0' << t.end << '\0';
    const std::string s = os.str();
    crc = add_bytes(crc, s.data(), s.size());
  }
  return crc;
}

std::string hex32(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc));
  return buf;
}

void verify_checksum(const std::map<std::string, std::string>& metadata, uint32_t computed, const std::string& path) {
  for (const char* key : kChecksumKeys) {
    const auto stored = metadata.find(key);
    if (stored != metadata.end() && stored->second != hex32(computed))
      fail(path, "checksum mismatch (the header or the data changed after it was written: " + std::string(key) +
                     " holds " + stored->second + ", computed " + hex32(computed) + ")");
  }
}

}  // namespace locus::serialize
