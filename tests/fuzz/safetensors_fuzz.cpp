// Fuzz target: load() of a safetensors file, onto the CPU and (map_location) onto sim:0. What
// loads must also save and load back to the same tensors.
#include <cstring>

#include "locus/locus.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = locus::fuzz::input_file(data, size);
  std::map<std::string, locus::Tensor> tensors;
  try {
    tensors = locus::load(path, size % 2 ? std::optional<locus::Device>(locus::Device("sim:0")) : std::nullopt);
  } catch (const locus::Error&) {
    return 0;
  }
  const std::string again = path + ".again";
  locus::save(tensors, again);
  const auto back = locus::load(again);
  if (back.size() != tensors.size()) __builtin_trap();
  for (const auto& [name, t] : tensors) {
    const locus::Tensor& b = back.at(name);
    if (b.dtype() != t.dtype() || !(b.shape() == t.shape())) __builtin_trap();
    if (t.numel() && std::memcmp(b.data_ptr(), t.cpu().data_ptr(), static_cast<size_t>(t.nbytes())) != 0) __builtin_trap();
  }
  return 0;
}
