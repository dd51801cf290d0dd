#pragma once
// The `locus` subcommands.

#include <CLI/CLI.hpp>

namespace locus::cli {
/// Registers `locus info`.
void add_info_command(CLI::App& app);
}  // namespace locus::cli
