// Fuzz target: load() of PyTorch checkpoints, onto the CPU and (map_location) onto sim:0. An input
// that starts with "PK" is the checkpoint file itself (the zip reader, damaged members and CRCs);
// any other input is a data.pkl, which the target stores in an archive beside storages data/0 to
// data/7 of 16 bytes each, so mutations reach the unpickler and the view checks instead of
// failing a CRC. What loads must also save as safetensors and load back to the same tensors.
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
  const auto tensors = locus::fuzz::load_or_refuse(path, size);
  if (!tensors || tensors->contains("__metadata__")) return 0;  // a fine name in a pickle, safetensors' own key
  for (const auto& [name, t] : *tensors)
    if (!t.is_contiguous()) __builtin_trap();  // the reader materialises every view
  locus::fuzz::check_round_trip(*tensors, path);
  return 0;
}
