// Fuzz target: distributed::checkpoint::load's index.json (the shapes, rows and files it names)
// over a real shard file. A refused index is a locus::Error that leaves the module as it was;
// an accepted one gives the module the values the shard file holds.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "locus/locus.h"

namespace {

// The module's values, flattened.
std::vector<float> values_of(const locus::nn::Module& m) {
  std::vector<float> out;
  for (const locus::Tensor& p : m.parameters()) {
    const locus::Tensor c = p.detach().contiguous();
    const float* v = static_cast<const float*>(c.data_ptr());
    out.insert(out.end(), v, v + c.numel());
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace locus;
  // A checkpoint of a Linear(3, 2) saved unsharded; each input replaces its index.
  static const std::filesystem::path dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("locus_fuzz_ckpt_" + std::to_string(::getpid()));
    nn::Linear saved(3, 2);
    {
      NoGradGuard no_grad;
      saved->weight.copy_(arange(6, TensorOptions().dtype(kFloat32)).reshape({2, 3}));
      saved->bias.fill_(7.0);
    }
    distributed::checkpoint::save(*saved, d.string());
    return d;
  }();
  static const std::vector<float> saved_values = [] {
    std::vector<float> v = {0, 1, 2, 3, 4, 5, 7, 7};
    return v;
  }();
  {
    std::ofstream index(dir / "index.json", std::ios::binary | std::ios::trunc);
    index.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  nn::Linear model(3, 2);
  {
    NoGradGuard no_grad;
    model->weight.fill_(-1.0);
    model->bias.fill_(-1.0);
  }
  const std::vector<float> before = values_of(*model);
  try {
    distributed::checkpoint::load(*model, dir.string());
  } catch (const Error&) {
    if (values_of(*model) != before) __builtin_trap();  // a refused checkpoint changes nothing
    return 0;
  }
  // Whatever index was accepted, the values come from the one shard file there is.
  if (values_of(*model) != saved_values) __builtin_trap();
  return 0;
}
