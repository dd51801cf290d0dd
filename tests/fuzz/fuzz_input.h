#pragma once
// What the fuzz targets share: the bytes as a file (the loaders read paths), and the rule that
// a rejected input is a locus::Error; anything else escaping (std::system_error, std::bad_alloc
// from a size that was not checked) reaches libFuzzer as a crash.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace locus::fuzz {

/// A file of this process holding the fuzzer's bytes, rewritten for each input.
inline const std::string& input_file(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/locus_fuzz_" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

}  // namespace locus::fuzz
