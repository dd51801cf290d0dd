#pragma once
// Signals as readable bytes, so that `locus run` waits for them in the same poll() as for output.

#include <signal.h>

#include <vector>

namespace locus::cli {

/// Installs, for its lifetime, a handler for each of `signals` that writes the signal's number into
/// a pipe (the self-pipe trick): a signal then wakes poll() on `fd()` instead of interrupting code
/// that cannot be interrupted safely. SIGPIPE is ignored meanwhile, so that a closed terminal or
/// `| head` costs the launcher its output, not its life (and the ranks their supervisor).
/// A signal that was ignored when the object was made (SIGINT in a background job of a script,
/// SIGHUP under nohup) stays ignored, except SIGCHLD, which must be caught for waitpid to work.
/// The destructor restores every previous disposition. One instance at a time per process.
class SignalPipe {
 public:
  explicit SignalPipe(const std::vector<int>& signals);
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  /// The read end, for poll(); readable when a signal has arrived.
  int fd() const { return read_fd_; }

  /// The signals that arrived since the last call, in order of arrival.
  std::vector<int> take();

  /// In a child between fork and exec: puts back the dispositions the launcher started with, so a
  /// rank sees the signals as if the launcher were not there. Async-signal-safe.
  void restore_in_child() const noexcept;

 private:
  struct Saved {
    int signal;
    struct sigaction action;
  };
  std::vector<Saved> saved_;
  int read_fd_ = -1;
};

}  // namespace locus::cli
