// `locus run`: the torchrun of Locus. Starts the ranks of one node with torchrun's environment and
// stops them all within seconds when one fails (docs/launcher.md); with --backend mpi, mpirun
// starts them (Note [MPI launch]).

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <sched.h>
#include <unistd.h>

#include "tools/locus/commands.h"
#include "tools/locus/mpi_launch.h"
#include "tools/locus/port_check.h"
#include "tools/locus/rank_supervisor.h"
#include "tools/locus/run_launcher.h"
#include "tools/locus/run_options.h"
#include "tools/locus/spawn.h"
#include "tools/locus/temp_dir.h"

extern char** environ;

namespace locus::cli {
namespace {

// The variables `locus run` sets (torchrun's names, then Locus's), replaced where inherited.
constexpr const char* kOwnVariables[] = {"RANK",        "LOCAL_RANK",  "WORLD_SIZE",  "LOCAL_WORLD_SIZE", "GROUP_RANK",
                                         "MASTER_ADDR", "MASTER_PORT", "LOCUS_STORE", "LOCUS_RUN_ID",     "LOCUS_DIST_BACKEND"};


// The launcher's own failures (not a rank's): one line, then the exit code.
[[noreturn]] void launch_error(const std::string& message, int exit_code) {
  std::cerr << "locus run: " << message << std::endl;
  throw CLI::RuntimeError(exit_code);
}

// 64 random bits: launches on one machine, even at the same second, never share an id.
std::string fresh_run_id() {
  std::random_device random;
  char id[17];
  std::snprintf(id, sizeof id, "%08x%08x", random(), random());
  return id;
}

// True when `store` is a server at `port` (the default redis://MASTER_ADDR:MASTER_PORT of a
// multi-node launch): then the master port is meant to be busy, and checking it would be wrong.
// The port is what follows the last ':', as init_process_group reads it (an IPv6 host needs no brackets).
bool store_listens_on(const std::string& store, int port) {
  const size_t colon = store.rfind(':');
  return store.rfind("redis://", 0) == 0 && colon > 7 && store.substr(colon + 1) == std::to_string(port);
}

// In 64 bits: 65536 nodes of 65536 ranks pass the option checks and overflow an int.
int64_t global_rank(const RunArgs& a, int local_rank) { return int64_t{a.node_rank} * a.nproc_per_node + local_rank; }

// The cores this launcher may run on (its affinity mask), as OpenMP counts them.
int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

// OMP_NUM_THREADS for each rank when the user set none: the cores shared out among the local
// ranks, so N ranks never run N x cores threads that fight over the cores (torchrun sets 1).
std::optional<int> threads_per_rank(const RunArgs& a) {
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return std::nullopt;
  return std::max(1, usable_cores() / a.nproc_per_node);
}

// What every rank of this node gets: the launcher's environment without the variables above,
// then this launch's values of those that are the same on every rank of the node.
std::vector<std::string> node_environment(const RunArgs& a, const std::string& store, const std::string& run_id,
                                          std::optional<int> omp_threads) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::find(std::begin(kOwnVariables), std::end(kOwnVariables), name) == std::end(kOwnVariables)) env.push_back(entry);
  }
  const auto set = [&](const char* name, const std::string& value) { env.push_back(std::string(name) + "=" + value); };
  set("WORLD_SIZE", std::to_string(int64_t{a.nnodes} * a.nproc_per_node));
  set("LOCAL_WORLD_SIZE", std::to_string(a.nproc_per_node));
  set("GROUP_RANK", std::to_string(a.node_rank));
  set("MASTER_ADDR", a.master_addr);
  set("MASTER_PORT", std::to_string(a.master_port));
  set("LOCUS_STORE", store);
  set("LOCUS_RUN_ID", run_id);
  if (a.backend == "mpi") set("LOCUS_DIST_BACKEND", "mpi");
  if (omp_threads) set("OMP_NUM_THREADS", std::to_string(*omp_threads));
  return env;
}

std::vector<std::string> rank_environment(const RunArgs& a, int local_rank, const std::vector<std::string>& node) {
  std::vector<std::string> env = node;
  env.push_back("RANK=" + std::to_string(global_rank(a, local_rank)));
  env.push_back("LOCAL_RANK=" + std::to_string(local_rank));
  return env;
}

// The ranks started by mpirun (Note [MPI launch]); returns once mpirun has exited.
SupervisorResult launch_through_mpirun(const RunArgs& a, const std::vector<std::string>& command,
                                       const std::vector<std::string>& node) {
  const std::vector<std::string> argv = mpirun_command(a.nproc_per_node, node, a.grace_period, geteuid() == 0, command);
  try {
    return run_mpirun(argv, node);
  } catch (const SpawnError& e) {
    if (e.exit_code == 127)
      launch_error(std::string(e.what()) + ": --backend mpi runs Open MPI's mpirun (Debian: apt install openmpi-bin)",
                   e.exit_code);
    launch_error(e.what(), e.exit_code);
  }
}

// Returns once every rank has exited and the store directory is gone.
SupervisorResult launch(const RunArgs& a, const std::vector<std::string>& command) {
  std::string store = a.store;
  if (store.empty() && a.nnodes > 1) store = "redis://" + a.master_addr + ":" + std::to_string(a.master_port);
  // The master node checks its port before anything starts, rather than letting a rank find out
  // (or, worse, meet another job's ranks) there.
  if (a.node_rank == 0 && !store_listens_on(store, a.master_port)) {
    const std::string reason = port_unavailable_reason(a.master_port);
    if (!reason.empty()) {
      launch_error("--master-port " + std::to_string(a.master_port) + " is not free on this machine (" + reason +
                       "): another job or server is using it; choose a free port with --master-port",
                   1);
    }
  }
  std::optional<TempDir> store_dir;
  if (store.empty()) {
    store_dir.emplace("locus-run-");
    store = "file://" + store_dir->path();
  }
  const std::string run_id = a.run_id.empty() ? fresh_run_id() : a.run_id;
  const std::optional<int> omp_threads = threads_per_rank(a);
  if (omp_threads) {
    std::cerr << "locus run: OMP_NUM_THREADS=" << *omp_threads << " for each rank (" << usable_cores() << " cores / "
              << a.nproc_per_node << " local rank" << (a.nproc_per_node == 1 ? "" : "s")
              << "); set OMP_NUM_THREADS to choose another number" << std::endl;
  }
  const std::vector<std::string> node = node_environment(a, store, run_id, omp_threads);
  if (a.backend == "mpi") return launch_through_mpirun(a, command, node);
  SupervisorOptions options;
  options.argv = command;
  options.grace_period_s = a.grace_period;
  for (int local_rank = 0; local_rank < a.nproc_per_node; ++local_rank) {
    options.ranks.push_back({global_rank(a, local_rank), rank_environment(a, local_rank, node)});
  }
  try {
    return supervise(options);
  } catch (const SpawnError& e) {
    launch_error(e.what(), e.exit_code);
  }
}

void run_launcher(const RunArgs& a, const std::vector<std::string>& command) {
  validate(a, command);
  SupervisorResult result;
  try {
    result = launch(a, command);
  } catch (const CLI::Error&) {
    throw;
  } catch (const std::exception& e) {
    launch_error(e.what(), 1);
  }
  if (result.interrupted_by != 0) {
    // Dying of the same signal tells a calling shell the truth: a script stops on Ctrl-C instead
    // of going on as if the launcher had handled it (SIGINT's "wait and cooperative exit").
    std::cout.flush();
    std::signal(result.interrupted_by, SIG_DFL);
    std::raise(result.interrupted_by);
  }
  if (result.exit_code != 0) throw CLI::RuntimeError(result.exit_code);
}

}  // namespace

void run_ranks_on_this_node(int nproc, const std::vector<std::string>& command) {
  RunArgs a;
  a.nproc_per_node = nproc;
  if (const int port = free_port(); port != 0) a.master_port = port;
  run_launcher(a, command);
}

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = define_run_command(app, args);
  cmd->callback([args, cmd] { run_launcher(*args, run_program(*cmd)); });
}

}  // namespace locus::cli
