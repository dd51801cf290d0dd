#pragma once
// The ranks of one node, run to the end: their output prefixed, one failure fatal to all.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace locus::cli {

/// One process to start.
struct RankLaunch {
  int64_t rank = 0;                      ///< global rank: the `[rank3]: ` prefix of its output
  std::vector<std::string> environment;  ///< its whole environment, "NAME=value"
};

/// What to run and how to stop it.
struct SupervisorOptions {
  std::vector<std::string> argv;  ///< the program (looked up in PATH) and its arguments, alike for all ranks
  std::vector<RankLaunch> ranks;
  double grace_period_s = 3;  ///< between SIGTERM and SIGKILL when the ranks are stopped
  size_t tail_lines = 10;     ///< how many of a failed rank's last lines (stderr, else stdout) the summary repeats
};

/// How a run ended.
struct SupervisorResult {
  int exit_code = 0;       ///< 0 when every rank exited 0; else the first failure's code, 128 + signal if killed
  int interrupted_by = 0;  ///< the signal the launcher received and passed to the ranks, else 0
};

/// Starts every rank, each in a process group of its own; copies each line of their stdout and
/// stderr to the launcher's, prefixed `[rank<R>]: `, whole lines at a time; and waits for all of
/// them, stopping all when one fails or when the launcher gets SIGINT, SIGTERM, SIGHUP or SIGQUIT
/// (Note [Fail fast] in rank_supervisor.cpp). Prints its own messages, the summary of a failure
/// included, to stderr. Throws SpawnError (spawn.h) when the program cannot be started, after
/// killing the ranks already started. Installs signal handlers for its duration: one call at a time.
SupervisorResult supervise(const SupervisorOptions& options);

}  // namespace locus::cli
