#pragma once
// Starting one rank: fork, a process group of its own, pipes for its output, exec.

#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tools/locus/signal_pipe.h"

namespace locus::cli {

/// The program could not be started. `exit_code` follows timeout(1) and env(1): 127 when it was
/// not found, 126 when it was found but could not be run, 1 when the launcher itself failed.
struct SpawnError : std::runtime_error {
  SpawnError(const std::string& what, int code) : std::runtime_error(what), exit_code(code) {}
  int exit_code;
};

/// A started process. It leads a process group of its own (pgid == pid), so that signalling
/// `-pid` reaches the whole tree it starts (a `sh -c` and its children, a Python and its data
/// loader workers) and a Ctrl-C on the terminal reaches only the launcher, which decides.
struct Spawned {
  pid_t pid = -1;
  int stdout_fd = -1;  ///< read end of the pipe on the process's stdout; non-blocking, close-on-exec
  int stderr_fd = -1;  ///< the same for stderr
};

/// Where a started process's stdout and stderr go.
enum class Output {
  Piped,      ///< into pipes the launcher reads (Spawned::stdout_fd, stderr_fd)
  Inherited,  ///< straight to the launcher's own (the fds stay -1)
};

/// Starts `argv[0]` (looked up in PATH as execvp does) with `argv` and exactly `environment`
/// ("NAME=value" strings). Stdin is /dev/null: several ranks cannot share a terminal, and a rank
/// outside the terminal's foreground group that read it would be stopped by SIGTTIN. Returns once
/// the exec has succeeded; throws SpawnError, naming the program and errno's reason, when it fails.
/// Between fork and exec the child calls only async-signal-safe functions, so the launcher may have
/// threads.
Spawned spawn(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
              const SignalPipe& signals, Output output = Output::Piped);

}  // namespace locus::cli
