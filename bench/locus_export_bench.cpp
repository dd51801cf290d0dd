// Locus running programs exported from PyTorch, beside bench/torch_export_bench.py (PyTorch eager
// running the same files) with the same rows and method, run by bench/export_bench.sh:
//   export_resnet18_fwd_b32, export_resnet18_train_step_b32, export_gpt_fwd_b8x128,
//   export_gpt_train_step_b8x128 (ms) and export_load_resnet18 (ms: load_exported of the file).
// The forward rows run the exported training-mode graph under NoGradGuard, as PyTorch's side
// (whose unlifted module cannot switch modes) does.
//   locus_export_bench --models DIR --json locus.json

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_harness.h"
#include "locus/locus.h"

using namespace locus;

int main(int argc, char** argv) {
  std::string models, json;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--models") models = argv[++i];
    else if (arg == "--json") json = argv[++i];
  }
  if (models.empty()) {
    std::fprintf(stderr, "usage: locus_export_bench --models DIR [--json out.json]\n");
    return 2;
  }
  bench::Harness h;
  const std::string resnet = models + "/resnet18.pt2";
  std::vector<double> loads;
  for (int i = 0; i < 5; ++i) {
    const double t0 = bench::now();
    nn::ExportedModule m = load_exported(resnet);
    loads.push_back((bench::now() - t0) * 1e3);
  }
  h.record("export_load_resnet18", "ms", loads,
           "load_exported of " + std::to_string(std::filesystem::file_size(resnet) >> 20) + " MB");
  manual_seed(0);
  struct Model {
    std::string file, tag;
    Tensor x, y;
  };
  const std::vector<Model> runs = {{"resnet18", "resnet18_fwd_b32", randn({32, 3, 32, 32}), randint(0, 10, {32})},
                                   {"gpt", "gpt_fwd_b8x128", randint(0, 512, {8, 128}), randint(0, 512, {8, 128})}};
  for (const Model& r : runs) {
    nn::ExportedModule m = load_exported(models + "/" + r.file + ".pt2");
    optim::SGD opt(m->parameters(), optim::SGDOptions(0.01));
    std::string step_name = r.tag;
    step_name.replace(step_name.find("fwd"), 3, "train_step");
    h.run("export_" + step_name, [&](long n) {
      for (long i = 0; i < n; ++i) {
        opt.zero_grad();
        const Tensor out = m->forward(r.x);
        nn::functional::cross_entropy(out.reshape({-1, out.size(-1)}), r.y.reshape({-1})).backward();
        opt.step();
      }
    }, "ms", bench::ms, 15, 0.05, "Locus running the exported program");
    h.run("export_" + r.tag, [&](long n) {
      NoGradGuard no_grad;
      for (long i = 0; i < n; ++i) m->forward(r.x);
    }, "ms", bench::ms, 15, 0.05, "no grad");
  }
  if (!json.empty()) h.write_json(json, "locus", std::string("{\"version\": \"") + version() + "\"}");
  return 0;
}
