// The `locus` command: see SPEC section 8, docs/training.md (`locus train`, `locus bench`) and docs/launcher.md (`locus run`).

#include <iostream>

#include "locus/errors.h"
#include "tools/locus/commands.h"

constexpr int kUsageError = 2;

int main(int argc, char** argv) {
  CLI::App app{"Locus: device-placed tensors in C++"};
  app.require_subcommand(1);
  locus::cli::add_info_command(app);
  locus::cli::add_train_command(app);
  locus::cli::add_charlm_command(app);
  locus::cli::add_bench_command(app);
  locus::cli::add_run_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI::RuntimeError carries a subcommand's own status (`locus run`: the failed rank's) and
    // --help is a success; any other parse error is a usage error: 2, as getopt tools and torchrun.
    const int code = app.exit(e);
    return code == 0 || e.get_name() == "RuntimeError" ? code : kUsageError;
  } catch (const locus::Error& e) {
    std::cerr << "locus: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
