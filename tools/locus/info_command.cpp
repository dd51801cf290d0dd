// `locus info`: what torch.utils.collect_env and nvidia-smi tell, for Locus.

#include <iostream>

#include "locus/locus.h"
#include "tools/locus/commands.h"
#include "tools/locus/option_checks.h"

namespace locus::cli {
namespace {

void print_device(Device d) {
  const auto [free_bytes, total] = memory::mem_get_info(d);
  std::cout << "  " << d.str() << ": " << format_bytes(total) << " total, " << format_bytes(free_bytes) << " free, "
            << format_bytes(static_cast<uint64_t>(memory::memory_allocated(d))) << " allocated by Locus\n";
}

void run_info() {
  std::cout << "Locus " << version() << "\n\nBuild\n" << build_config() << "\nDevices\n";
  print_device(Device("cpu"));
  std::cout << "  sim: " << sim::device_count() << " simulated device(s) (LOCUS_SIM_DEVICES / LOCUS_SIM_MEMORY)\n";
  for (int i = 0; i < sim::device_count(); ++i) print_device(Device(DeviceType::Sim, i));
  std::cout << "  cuda: ";
  if (cuda::is_available()) {
    std::cout << cuda::device_count() << " device(s), driver " << cuda::driver_version() << ", runtime "
              << cuda::runtime_version() << "\n";
    for (int i = 0; i < cuda::device_count(); ++i) {
      const auto p = cuda::get_device_properties(i);
      std::cout << "  cuda:" << i << ": " << p.name << ", " << format_bytes(p.total_memory) << ", compute capability "
                << p.major << "." << p.minor << ", " << p.multi_processor_count << " SMs\n";
    }
  } else {
    std::cout << "not available: " << cuda::unavailable_reason() << "\n";
  }
  std::cout << "  mps: " << (mps::is_available() ? "available" : "not available (Apple silicon only)") << "\n";
  std::cout << "\nProcess groups\n";
  for (const char* backend : {"gloo", "nccl", "mpi"})
    std::cout << "  " << backend << ": "
              << (distributed::is_available(backend) ? "available" : "not available: " + distributed::unavailable_reason(backend))
              << "\n";
  std::cout << "\nbest_device(): " << best_device() << "\n";
}

}  // namespace

// `locus info model.pt2`: what a torch.export program holds and whether Locus runs all of it.
void run_program_info(const std::string& path) {
  const ExportedSummary s = summarize_exported(path);
  std::cout << path << ": a torch.export program (schema " << s.schema << ", " << (s.dialect.empty() ? "?" : s.dialect)
            << " graph" << (s.torch_version.empty() ? "" : ", saved by torch " + s.torch_version) << ")\n";
  std::cout << "inputs:\n";
  for (const std::string& input : s.inputs) std::cout << "  " << input << "\n";
  std::cout << "outputs: " << s.outputs << "\nparameters: " << s.parameters << " tensors, " << s.parameter_elements
            << " elements; buffers: " << s.buffers << "\noperators:\n";
  size_t missing = 0;
  for (const auto& [op, supported] : s.operators) {
    std::cout << "  " << (supported ? "yes " : "NO  ") << op << "\n";
    missing += !supported;
  }
  if (missing) std::cout << missing << " operator(s) Locus does not run: load_exported refuses this program\n";
  else std::cout << "Locus runs every operator: load_exported(\"" << path << "\") loads it\n";
}

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Build configuration and every device with its memory; with a .pt2 file, "
                                         "what the exported program holds");
  static std::string program;
  cmd->add_option("program", program, "a torch.export.save file (.pt2) to describe instead")->check(existing_file());
  cmd->callback([] {
    if (program.empty()) run_info();
    else run_program_info(program);
  });
}

}  // namespace locus::cli
