// Fuzz target: read_idx() of raw and gzip IDX files (zlib detects which).
#include "locus/locus.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = locus::fuzz::input_file(data, size);
  try {
    const locus::Tensor t = locus::data::read_idx(path);
    if (t.numel() != t.shape().numel()) __builtin_trap();
  } catch (const locus::Error&) {
  }
  return 0;
}
