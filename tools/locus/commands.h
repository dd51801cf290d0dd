#pragma once
// The `locus` subcommands.

#include <CLI/CLI.hpp>

namespace locus::cli {
/// Registers `locus info`.
void add_info_command(CLI::App& app);
/// Registers `locus train`.
void add_train_command(CLI::App& app);
/// Registers `locus charlm`, the character-level transformer language model.
void add_charlm_command(CLI::App& app);
/// Registers `locus bench`.
void add_bench_command(CLI::App& app);
/// Registers `locus run`, the launcher of distributed programs.
void add_run_command(CLI::App& app);
}  // namespace locus::cli
