#pragma once
// The options of `locus run` (run_options.cpp): parsed by CLI11, checked by validate().

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace locus::cli {

/// What `locus run` was asked to do.
struct RunArgs {
  int nproc_per_node = 1;                 ///< --nproc-per-node: ranks on this node
  int nnodes = 1;                         ///< --nnodes: nodes, each with its own `locus run`
  int node_rank = 0;                      ///< --node-rank: this node's index
  std::string master_addr = "127.0.0.1";  ///< --master-addr
  int master_port = 29500;                ///< --master-port
  std::string store;                      ///< --store: rendezvous URL, empty for the default
  std::string run_id;                     ///< --run-id: shared by every rank of the launch
  double grace_period = 3;                ///< --grace-period: seconds from SIGTERM to SIGKILL
  std::string backend = "gloo";           ///< --backend: gloo (Locus starts the ranks) or mpi (mpirun does)
};

/// Adds the `run` subcommand with every option bound to `args`; the caller sets its callback.
CLI::App* define_run_command(CLI::App& app, const std::shared_ptr<RunArgs>& args);
/// The program and its arguments as the user gave them (what CLI11 left after the options).
std::vector<std::string> run_program(const CLI::App& cmd);
/// Checks the options against each other and the program: CLI::ValidationError ("locus run: ...")
/// for a missing program, an unknown option, --node-rank not below --nnodes, an empty address,
/// several nodes without --run-id, a run id with other characters than letters, digits and
/// - _ . :, a store that is not a URL, or --backend mpi with several nodes.
void validate(const RunArgs& a, const std::vector<std::string>& command);

}  // namespace locus::cli
