#include "tools/locus/signal_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace locus::cli {
namespace {

// The handler can reach only globals; SignalPipe allows one instance, which sets this.
volatile sig_atomic_t g_write_fd = -1;

void on_signal(int sig) {
  const int saved_errno = errno;  // the interrupted code may be about to read errno
  const unsigned char byte = static_cast<unsigned char>(sig);
  // Non-blocking: if the pipe is full, enough wake-ups are pending already and the byte may go.
  [[maybe_unused]] const ssize_t n = write(g_write_fd, &byte, 1);
  errno = saved_errno;
}

void set_flags(int fd) {
  fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

}  // namespace

SignalPipe::SignalPipe(const std::vector<int>& signals) {
  if (g_write_fd != -1) throw std::logic_error("locus run: only one SignalPipe at a time");
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  set_flags(fds[0]);
  set_flags(fds[1]);
  read_fd_ = fds[0];
  g_write_fd = fds[1];

  struct sigaction caught {};
  caught.sa_handler = on_signal;
  sigemptyset(&caught.sa_mask);
  caught.sa_flags = SA_RESTART;
  for (const int sig : signals) {
    Saved s{sig, {}};
    sigaction(sig, nullptr, &s.action);
    if (s.action.sa_handler == SIG_IGN && sig != SIGCHLD) continue;
    struct sigaction a = caught;
    if (sig == SIGCHLD) a.sa_flags |= SA_NOCLDSTOP;  // a rank stopped by SIGTSTP has not exited
    sigaction(sig, &a, nullptr);
    saved_.push_back(s);
  }
  Saved pipe_action{SIGPIPE, {}};
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &pipe_action.action);
  saved_.push_back(pipe_action);
}

SignalPipe::~SignalPipe() {
  for (const Saved& s : saved_) sigaction(s.signal, &s.action, nullptr);
  close(g_write_fd);
  close(read_fd_);
  g_write_fd = -1;
}

std::vector<int> SignalPipe::take() {
  std::vector<int> signals;
  unsigned char buf[64];
  ssize_t n;
  while ((n = read(read_fd_, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    for (ssize_t i = 0; i < n; ++i) signals.push_back(buf[i]);
  }
  return signals;
}

void SignalPipe::restore_in_child() const noexcept {
  for (const Saved& s : saved_) sigaction(s.signal, &s.action, nullptr);
}

}  // namespace locus::cli
