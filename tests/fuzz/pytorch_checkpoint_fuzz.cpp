// Fuzz target: load() of PyTorch checkpoints, onto the CPU and (map_location) onto sim:0. An input
// that starts with "PK" is the checkpoint file itself (the zip reader, damaged members and CRCs);
// any other input is a data.pkl, which the target stores in an archive beside storages data/0 to
// data/7 of 16 bytes each, so mutations reach the unpickler and the view checks instead of
// failing a CRC. What loads must also save as safetensors and load back to the same tensors.
#include <cstring>

#include "locus/locus.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/zip_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.rfind("PK", 0) != 0) {
    std::vector<std::pair<std::string, std::string>> members = {{"archive/data.pkl", bytes}};
    for (char key = '0'; key < '8'; ++key) {
      std::string storage(16, '\0');
      for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<char>(key * 16 + i);
      members.emplace_back(std::string("archive/data/") + key, storage);
    }
    bytes = locus::testing::zip(members);
  }
  const std::string& path = locus::fuzz::input_file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  locus::OrderedDict<std::string, locus::Tensor> tensors;
  try {
    tensors = locus::load(path, size % 2 ? std::optional<locus::Device>(locus::Device("sim:0")) : std::nullopt);
  } catch (const locus::Error&) {
    return 0;
  }
  if (tensors.contains("__metadata__")) return 0;  // a fine name in a pickle, safetensors' own key
  const std::string again = path + ".again";
  locus::save(tensors, again);
  const auto back = locus::load(again);
  if (back.size() != tensors.size()) __builtin_trap();
  for (const auto& [name, t] : tensors) {
    const locus::Tensor& b = back.at(name);
    if (!t.is_contiguous() || b.dtype() != t.dtype() || !(b.shape() == t.shape())) __builtin_trap();
    if (t.numel() && std::memcmp(b.data_ptr(), t.cpu().data_ptr(), static_cast<size_t>(t.nbytes())) != 0) __builtin_trap();
  }
  return 0;
}
