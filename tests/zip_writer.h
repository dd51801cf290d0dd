#pragma once
// A minimal zip writer for the PyTorch checkpoint tests and fuzz target: members stored
// uncompressed, as torch.save writes them, with their CRC-32s, so hand-made pickles become
// checkpoints libzip accepts. No zlib: the fuzz targets link Locus alone.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace locus::testing {

inline uint32_t zip_crc32(const std::string& bytes) {
  uint32_t crc = 0xffffffffu;
  for (const unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/// A zip archive of `members` (name, bytes), stored uncompressed.
inline std::string zip(const std::vector<std::pair<std::string, std::string>>& members) {
  const auto put16 = [](std::string& s, uint32_t v) { s += static_cast<char>(v & 0xff), s += static_cast<char>((v >> 8) & 0xff); };
  const auto put32 = [&](std::string& s, uint32_t v) { put16(s, v & 0xffff), put16(s, v >> 16); };
  std::string out, central;
  for (const auto& [name, bytes] : members) {
    const uint32_t crc = zip_crc32(bytes);
    const auto offset = static_cast<uint32_t>(out.size());
    const auto size = static_cast<uint32_t>(bytes.size());
    const auto name_size = static_cast<uint32_t>(name.size());
    out += "PK\x03\x04";
    put16(out, 20), put16(out, 0), put16(out, 0), put16(out, 0), put16(out, 0);  // version, flags, method, time, date
    put32(out, crc), put32(out, size), put32(out, size);
    put16(out, name_size), put16(out, 0);
    out += name + bytes;
    central += "PK\x01\x02";
    put16(central, 20), put16(central, 20), put16(central, 0), put16(central, 0), put16(central, 0), put16(central, 0);
    put32(central, crc), put32(central, size), put32(central, size);
    put16(central, name_size), put16(central, 0), put16(central, 0), put16(central, 0), put16(central, 0);
    put32(central, 0), put32(central, offset);
    central += name;
  }
  const auto central_at = static_cast<uint32_t>(out.size());
  const auto count = static_cast<uint32_t>(members.size());
  out += central + "PK\x05\x06";
  put16(out, 0), put16(out, 0), put16(out, count), put16(out, count);
  put32(out, static_cast<uint32_t>(central.size())), put32(out, central_at), put16(out, 0);
  return out;
}

}  // namespace locus::testing
