// Note [MPI launch]
// `locus run --backend mpi` hands the ranks of one node to Open MPI's mpirun, so that a program
// calling init_process_group("mpi") gets MPI's own start-up (no rendezvous store) without its user
// learning mpirun's options. mpirun is started as a child, not exec'd: the launcher still owns the
// file store it made for the launch (gloo groups work under an MPI launch too, and `locus train`
// finds LOCUS_STORE as under any `locus run`) and removes it once mpirun is done. The ranks get
// what `locus run` always gives (RANK and LOCAL_RANK from MPI's numbering, through a `sh -c`
// before the program) plus LOCUS_DIST_BACKEND=mpi. mpirun runs in a process group of its own with
// stdin from /dev/null, so a Ctrl-C on the terminal reaches only the launcher, which passes it on;
// mpirun then stops the ranks (SIGTERM, SIGKILL after --grace-period) and exits. Failing
// fast is mpirun's default: the first rank that exits with an error or is killed ends the job
// (Note [MPI runtime] in src/distributed/mpi makes sure an error exit is one). --bind-to none
// leaves each rank all the cores, as `locus run` does, for its OMP_NUM_THREADS threads; the
// output lines carry mpirun's tags, "[1,0]<stdout>:" for rank 0's stdout.

#include "tools/locus/mpi_launch.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>

#include "tools/locus/signal_pipe.h"
#include "tools/locus/spawn.h"

namespace locus::cli {
namespace {

// The variables a rank needs from the launcher on whichever node mpirun starts it.
bool exported(const std::string& name) {
  return name.rfind("LOCUS_", 0) == 0 || name == "OMP_NUM_THREADS" || name == "WORLD_SIZE" ||
         name == "LOCAL_WORLD_SIZE" || name == "GROUP_RANK" || name == "MASTER_ADDR" || name == "MASTER_PORT";
}

// Sets each rank's RANK and LOCAL_RANK from Open MPI's numbering, then becomes the program.
constexpr const char* kRankShell =
    "export RANK=\"$OMPI_COMM_WORLD_RANK\" LOCAL_RANK=\"$OMPI_COMM_WORLD_LOCAL_RANK\"; exec \"$@\"";

}  // namespace

std::vector<std::string> mpirun_command(int nproc, const std::vector<std::string>& environment, double grace_period_s,
                                        bool as_root, const std::vector<std::string>& program) {
  std::vector<std::string> argv = {"mpirun",      "-np",         std::to_string(nproc), "--oversubscribe",
                                   "--bind-to",   "none",        "--tag-output",        "--stdin",
                                   "none",        "--mca",       "odls_base_sigkill_timeout",
                                   std::to_string(static_cast<int>(std::ceil(grace_period_s)))};
  if (as_root) argv.push_back("--allow-run-as-root");
  for (const std::string& entry : environment) {
    const std::string name = entry.substr(0, entry.find('='));
    if (exported(name)) argv.insert(argv.end(), {"-x", name});
  }
  argv.insert(argv.end(), {"sh", "-c", kRankShell, "locus-rank"});
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

SupervisorResult run_mpirun(const std::vector<std::string>& argv, const std::vector<std::string>& environment) {
  SignalPipe signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD});
  const Spawned mpirun = spawn(argv, environment, signals, Output::Inherited);
  SupervisorResult result;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(mpirun.pid, &status, WNOHANG);
    if (done == mpirun.pid) {
      result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return result;
    }
    pollfd p{signals.fd(), POLLIN, 0};
    poll(&p, 1, 1000);  // a signal, or a second's pause: waitpid above has the last word either way
    for (const int sig : signals.take()) {
      if (sig == SIGCHLD) continue;  // reaped above
      if (result.interrupted_by == 0) result.interrupted_by = sig;
      kill(mpirun.pid, sig);
    }
  }
}

}  // namespace locus::cli
