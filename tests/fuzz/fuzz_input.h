#pragma once
// What the fuzz targets share: the bytes as a file (the loaders read paths), and the rule that
// a rejected input is a locus::Error; anything else escaping (std::system_error, std::bad_alloc
// from a size that was not checked) reaches libFuzzer as a crash.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "locus/locus.h"

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

/// What a checkpoint reader accepted from `path`, loaded onto the CPU or (odd sizes) sim:0, as
/// the reader's fuzz targets drive it; nullopt when it refused the file with a locus::Error.
inline std::optional<OrderedDict<std::string, Tensor>> load_or_refuse(const std::string& path, size_t size) {
  try {
    return locus::load(path, size % 2 ? std::optional<Device>(Device("sim:0")) : std::nullopt);
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// Saves what a reader accepted beside `path` and loads it back: traps unless every tensor
/// returns with its name, dtype, shape and bytes.
inline void check_round_trip(const OrderedDict<std::string, Tensor>& tensors, const std::string& path) {
  const std::string again = path + ".again";
  locus::save(tensors, again);
  const auto back = locus::load(again);
  if (back.size() != tensors.size()) __builtin_trap();
  for (const auto& [name, t] : tensors) {
    const Tensor& b = back.at(name);
    if (b.dtype() != t.dtype() || !(b.shape() == t.shape())) __builtin_trap();
    if (t.numel() && std::memcmp(b.data_ptr(), t.cpu().data_ptr(), static_cast<size_t>(t.nbytes())) != 0) __builtin_trap();
  }
}

}  // namespace locus::fuzz
