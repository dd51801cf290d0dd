// The options of `locus run` and their checks, apart from the launching, so that the fuzz
// target of the launcher's arguments (tests/fuzz/launcher_args_fuzz.cpp) parses exactly what
// `locus run` parses.

#include "tools/locus/run_options.h"

#include <cctype>

namespace locus::cli {
namespace {

[[noreturn]] void usage_error(const std::string& message) { throw CLI::ValidationError("locus run", message); }

}  // namespace

void validate(const RunArgs& a, const std::vector<std::string>& command) {
  if (command.empty()) usage_error("no program to run (locus run [options] program [args...])");
  // CLI11 leaves an option it does not know where the program would be.
  if (command[0].size() > 1 && command[0][0] == '-') usage_error("unknown option " + command[0]);
  if (a.node_rank >= a.nnodes) {
    usage_error("--node-rank " + std::to_string(a.node_rank) + " must be below --nnodes " + std::to_string(a.nnodes));
  }
  if (a.master_addr.empty()) usage_error("--master-addr is empty");
  if (a.nnodes > 1 && a.run_id.empty()) {
    usage_error("--nnodes " + std::to_string(a.nnodes) +
                " needs --run-id ID, the same on every node and new for every launch (a job id such as "
                "$SLURM_JOB_ID), so that this launch's ranks cannot meet a previous launch's keys in the store");
  }
  for (const char c : a.run_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != ':') {
      usage_error("--run-id '" + a.run_id + "' may hold only letters, digits and - _ . :");
    }
  }
  if (!a.store.empty() && a.store.find("://") == std::string::npos) {
    usage_error("--store '" + a.store + "' is not a URL such as file:///shared/dir or redis://host:port");
  }
  if (a.backend == "mpi" && a.nnodes > 1) {
    usage_error("--backend mpi starts the ranks of this node through mpirun; for several nodes run mpirun yourself with "
                "a hostfile (mpirun --hostfile hosts -np N program), which init_process_group(\"mpi\") needs nothing else for");
  }
}

CLI::App* define_run_command(CLI::App& app, const std::shared_ptr<RunArgs>& args) {
  CLI::App* cmd = app.add_subcommand("run", "Start the ranks of a distributed program on this node (torchrun)");
  // Everything from the program's name on belongs to the program, its options included: CLI11
  // leaves it in remaining(). The positional "program" accepts nothing and so never takes a word;
  // it names the program in the help, and it keeps a "--" with `locus run` (CLI11 hands "--" up to
  // `locus`, which would reject what follows, when a subcommand has no positional left to fill).
  cmd->prefix_command()->validate_positionals();
  cmd->add_option_function<std::string>(
         "program", [](const std::string&) {}, "the program (looked up in PATH), then its arguments")
      ->check(CLI::Validator([](std::string&) { return std::string("left in remaining()"); }, ""));
  cmd->footer(
      "Usage: locus run [options] program [args...]\n"
      "Every rank gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,\n"
      "LOCUS_STORE and LOCUS_RUN_ID (--backend mpi: LOCUS_DIST_BACKEND too). The first rank to fail stops all\n"
      "the others. See docs/launcher.md.");
  cmd->add_option("--nproc-per-node,--nproc_per_node", args->nproc_per_node, "processes (ranks) on this node")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--nnodes", args->nnodes, "nodes (machines), each running its own `locus run`")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--node-rank,--node_rank", args->node_rank, "this node's index, 0 on the master")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--master-addr,--master_addr", args->master_addr, "address of the master node")->capture_default_str();
  cmd->add_option("--master-port,--master_port", args->master_port, "port on the master node")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--store", args->store,
                  "rendezvous store URL (default: file://<private temp dir> on one node, "
                  "redis://MASTER_ADDR:MASTER_PORT on several)");
  cmd->add_option("--run-id,--run_id", args->run_id, "id shared by every rank of this launch (required with --nnodes > 1)");
  cmd->add_option("--grace-period", args->grace_period, "seconds between SIGTERM and SIGKILL when stopping the ranks")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--backend", args->backend,
                  "gloo: Locus starts the ranks; mpi: Open MPI's mpirun starts them (LOCUS_DIST_BACKEND=mpi, "
                  "init_process_group(\"mpi\")), this node only")
      ->capture_default_str()
      ->check(CLI::IsMember({"gloo", "mpi"}));
  return cmd;
}

std::vector<std::string> run_program(const CLI::App& cmd) {
  std::vector<std::string> command = cmd.remaining();
  if (!command.empty() && command[0] == "--") command.erase(command.begin());
  return command;
}

}  // namespace locus::cli
