// The `locus` command: see SPEC section 8 and docs/cli.md.

#include <iostream>

#include "locus/errors.h"
#include "tools/locus/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Locus: device-placed tensors in C++"};
  app.require_subcommand(1);
  locus::cli::add_info_command(app);
  locus::cli::add_train_command(app);
  locus::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const locus::Error& e) {
    std::cerr << "locus: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
