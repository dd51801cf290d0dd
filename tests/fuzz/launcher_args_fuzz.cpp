// Fuzz target: the arguments of `locus run`, parsed and checked exactly as the launcher does
// (tools/locus/run_options.cpp), without launching anything. NUL bytes separate the arguments.
#include <string>
#include <vector>

#include "tools/locus/run_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words{"locus", "run"};
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) words.push_back(word), word.clear();
    else word += static_cast<char>(data[i]);
  }
  words.push_back(word);
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  CLI::App app("locus");
  app.require_subcommand(1);
  auto args = std::make_shared<locus::cli::RunArgs>();
  CLI::App* cmd = locus::cli::define_run_command(app, args);
  cmd->callback([args, cmd] {
    locus::cli::validate(*args, locus::cli::run_program(*cmd));
    if (args->nproc_per_node < 1 || args->nnodes < 1 || args->node_rank >= args->nnodes) __builtin_trap();
  });
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {  // usage errors, --help: what `locus run` prints and exits with
  }
  return 0;
}
