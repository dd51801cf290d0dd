// Fuzz target: load() of a safetensors file, onto the CPU and (map_location) onto sim:0. What
// loads must also save and load back to the same tensors.
#include "locus/locus.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = locus::fuzz::input_file(data, size);
  if (const auto tensors = locus::fuzz::load_or_refuse(path, size)) locus::fuzz::check_round_trip(*tensors, path);
  return 0;
}
