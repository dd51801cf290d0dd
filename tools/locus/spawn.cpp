#include "tools/locus/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

extern char** environ;

namespace locus::cli {
namespace {

[[noreturn]] void fail(const std::string& what) { throw SpawnError(what + ": " + std::strerror(errno), 1); }

// A pipe whose two ends are closed at exec: without this, rank 1 would inherit the write end of
// rank 0's output pipe and rank 0's output would not reach end of file until rank 1 exits too.
void make_pipe(int fds[2], bool nonblocking_read) {
  if (pipe(fds) != 0) fail("cannot create a pipe");
  for (int i = 0; i < 2; ++i) fcntl(fds[i], F_SETFD, FD_CLOEXEC);
  if (nonblocking_read) fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
}

// Were the launcher started with stdout closed, pipe() could hand out fd 1 and the dup2 onto it in
// the child would do nothing (leaving it close-on-exec); occupying 0-2 rules that out.
void occupy_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) == -1) open("/dev/null", O_RDWR);  // takes the lowest free fd: this one
  }
}

std::string not_started(const std::string& program, int error) {
  if (error == ENOENT && program.find('/') == std::string::npos) return "'" + program + "': not found in PATH";
  return "cannot run '" + program + "': " + std::strerror(error);
}

// Everything here is async-signal-safe: the parent may have threads, and after fork only the
// calling thread exists, with whatever locks the others held. execvp's PATH search (glibc, musl,
// the BSDs) allocates nothing, which is why posix_spawnp can use it in a vfork child.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, int in_fd, int out_fd, int err_fd,
                             int status_fd, const sigset_t& mask, const SignalPipe& signals) {
  setpgid(0, 0);
  signals.restore_in_child();
  dup2(in_fd, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  environ = const_cast<char**>(envp);
  execvp(argv[0], argv);
  const int error = errno;
  [[maybe_unused]] const ssize_t n = write(status_fd, &error, sizeof error);
  _exit(127);
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

Spawned spawn(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
              const SignalPipe& signals, Output output) {
  occupy_standard_fds();
  // Built before fork: the child may not allocate.
  const std::vector<char*> c_argv = c_strings(argv);
  const std::vector<char*> c_env = c_strings(environment);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) fail("cannot open /dev/null");
  int out[2] = {-1, 1}, err[2] = {-1, 2}, status[2];  // Inherited: the child's 1 and 2 stay the launcher's
  if (output == Output::Piped) {
    make_pipe(out, true);
    make_pipe(err, true);
  }
  make_pipe(status, false);

  // Signals wait until the child has put back its own handlers: ours, run in the child, would
  // write into the launcher's signal pipe as if the launcher had been signalled.
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);
  const pid_t pid = fork();
  if (pid == 0) exec_child(c_argv.data(), c_env.data(), null_fd, out[1], err[1], status[1], old, signals);
  const int fork_errno = errno;
  if (pid > 0) setpgid(pid, pid);  // also here, so the group exists before fork returns; EACCES after exec is fine
  sigprocmask(SIG_SETMASK, &old, nullptr);
  for (const int fd : {null_fd, status[1]}) close(fd);
  if (output == Output::Piped)
    for (const int fd : {out[1], err[1]}) close(fd);

  int exec_errno = 0;
  ssize_t n = 0;
  if (pid > 0) {
    // The status pipe closes at a successful exec (end of file) or carries the exec's errno.
    while ((n = read(status[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
  }
  close(status[0]);
  if (pid < 0 || n > 0) {
    if (output == Output::Piped)
      for (const int fd : {out[0], err[0]}) close(fd);
    if (pid < 0) {
      errno = fork_errno;
      fail("cannot fork");
    }
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw SpawnError(not_started(argv[0], exec_errno), exec_errno == ENOENT ? 127 : 126);
  }
  return Spawned{pid, out[0], err[0]};
}

}  // namespace locus::cli
