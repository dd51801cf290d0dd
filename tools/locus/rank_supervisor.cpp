#include "tools/locus/rank_supervisor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string_view>

#include "tools/locus/line_buffer.h"
#include "tools/locus/signal_pipe.h"
#include "tools/locus/spawn.h"

// Note [Fail fast]
// ~~~~~~~~~~~~~~~~
// In a collective job a rank that dies leaves the others blocked in their next all_reduce until
// its timeout (10 minutes in PyTorch), and torchrun waits with them. `locus run` does not wait: the
// first rank that exits with a non-zero code or is killed by a signal is "the failure"; every
// other rank gets SIGTERM at once and SIGKILL `grace_period_s` later, and when all are gone the
// launcher names the failed rank and repeats its last lines of stderr, which by then may be far up
// the screen under the other ranks' complaints. Exits that follow are consequences, not causes,
// and are not reported. A signal to the launcher stops the ranks the same way, with that signal in
// place of SIGTERM; a second one sends SIGKILL without waiting.
//
// Exits are detected with waitid(WNOWAIT), which leaves the rank a zombie until the end: a zombie
// keeps its pid, so its process group id cannot be given to an unrelated process while the
// launcher may still signal the group (to stop what the rank started and left behind).

namespace locus::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
// How long the output of exited ranks is still read, for a grandchild that holds the pipe open.
constexpr auto kDrainTime = std::chrono::seconds(1);
constexpr size_t kReadSize = 64 * 1024;

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal " + std::to_string(sig);
  }
}

std::string format_seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

// One of the launcher's own output streams. Output lost (a closed pipe, a full disk) must not stop
// the supervision, so after the first failed write it is discarded.
class Sink {
 public:
  explicit Sink(int fd) : fd_(fd) {}
  void write(std::string_view data) {
    while (ok_ && !data.empty()) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      if (n >= 0) {
        data.remove_prefix(static_cast<size_t>(n));
      } else if (errno == EAGAIN) {
        pollfd p{fd_, POLLOUT, 0};  // a non-blocking terminal: wait for room
        poll(&p, 1, -1);
      } else if (errno != EINTR) {
        ok_ = false;
      }
    }
  }

 private:
  int fd_;
  bool ok_ = true;
};

struct Stream {
  int fd = -1;  // -1 once at end of file
  Sink* sink = nullptr;
  LineBuffer lines;
  std::deque<std::string> tail;  // the last whole lines, without prefix or terminator
};

struct Rank {
  int64_t rank = 0;
  pid_t pid = -1;
  std::string prefix;
  Stream out, err;
  bool exited = false;
  int exit_code = 0;  // valid when exited; 128 + signal when killed
  std::string how;    // "exited with code 3", "killed by SIGSEGV"
};

class Supervisor {
 public:
  explicit Supervisor(const SupervisorOptions& o)
      : o_(o), signals_({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}), stdout_(1), stderr_(2) {}

  SupervisorResult run() {
    start();
    while (!finished()) {
      wait_and_read();
      for (const int sig : signals_.take()) on_signal(sig);
      reap();
      if (stopping_ && !killed_ && Clock::now() >= stop_at_ + grace()) kill_stragglers();
    }
    for (auto& r : ranks_) {
      close_stream(*r, r->out);
      close_stream(*r, r->err);
    }
    summarize();
    for (auto& r : ranks_) waitpid(r->pid, nullptr, 0);  // the zombies kept by waitid(WNOWAIT)
    return result_;
  }

 private:
  Clock::duration grace() const {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.grace_period_s));
  }

  void start() {
    for (const RankLaunch& launch : o_.ranks) {
      Spawned s;
      try {
        s = spawn(o_.argv, launch.environment, signals_);
      } catch (const SpawnError&) {
        send_all(SIGKILL);
        for (auto& r : ranks_) {
          waitpid(r->pid, nullptr, 0);
          close(r->out.fd);
          close(r->err.fd);
        }
        throw;
      }
      auto r = std::make_unique<Rank>();
      r->rank = launch.rank;
      r->pid = s.pid;
      r->prefix = "[rank" + std::to_string(launch.rank) + "]: ";
      r->out.fd = s.stdout_fd;
      r->out.sink = &stdout_;
      r->err.fd = s.stderr_fd;
      r->err.sink = &stderr_;
      ranks_.push_back(std::move(r));
    }
  }

  bool all_exited() const {
    return std::all_of(ranks_.begin(), ranks_.end(), [](const auto& r) { return r->exited; });
  }

  bool finished() const {
    if (!all_exited()) return false;
    const bool open = std::any_of(ranks_.begin(), ranks_.end(), [](const auto& r) { return r->out.fd >= 0 || r->err.fd >= 0; });
    return !open || Clock::now() >= all_exited_at_ + kDrainTime;
  }

  // Sleeps in poll() until output, a signal, or the next deadline; reads one chunk per ready
  // stream, so that one chatty rank cannot starve the others.
  void wait_and_read() {
    std::vector<pollfd> fds{{signals_.fd(), POLLIN, 0}};
    std::vector<std::pair<Rank*, Stream*>> owners{{nullptr, nullptr}};
    for (auto& r : ranks_) {
      for (Stream* s : {&r->out, &r->err}) {
        if (s->fd < 0) continue;
        fds.push_back({s->fd, POLLIN, 0});
        owners.emplace_back(r.get(), s);
      }
    }
    int timeout_ms = -1;
    if (stopping_ && !killed_) timeout_ms = ms_until(stop_at_ + grace());
    if (all_exited()) timeout_ms = ms_until(all_exited_at_ + kDrainTime);
    if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return;  // timeout, or EINTR: the loop re-checks
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) read_chunk(*owners[i].first, *owners[i].second);
    }
  }

  static int ms_until(Clock::time_point t) {
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(t - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(ms, 0, 60'000));
  }

  void read_chunk(Rank& r, Stream& s) {
    char buf[kReadSize];
    const ssize_t n = read(s.fd, buf, sizeof buf);
    if (n > 0) {
      s.lines.feed(std::string_view(buf, static_cast<size_t>(n)), [&](std::string_view piece) { emit(r, s, piece); });
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      close_stream(r, s);
    }
  }

  void close_stream(Rank& r, Stream& s) {
    if (s.fd < 0) return;
    s.lines.finish([&](std::string_view piece) { emit(r, s, piece); });
    close(s.fd);
    s.fd = -1;
  }

  // One write per line: the launcher is the only writer of its streams, so lines never mix.
  void emit(Rank& r, Stream& s, std::string_view piece) {
    s.sink->write(r.prefix + std::string(piece));
    if (piece.back() != '\n') return;  // a progress bar's '\r' piece explains no failure
    piece.remove_suffix(piece.size() >= 2 && piece[piece.size() - 2] == '\r' ? 2 : 1);
    s.tail.emplace_back(piece);
    if (s.tail.size() > o_.tail_lines) s.tail.pop_front();
  }

  void say(const std::string& message) { stderr_.write("locus run: " + message + "\n"); }

  void reap() {
    for (auto& r : ranks_) {
      if (r->exited) continue;
      siginfo_t info;
      std::memset(&info, 0, sizeof info);  // si_pid stays 0 when the rank is still running
      if (waitid(P_PID, static_cast<id_t>(r->pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) {
        continue;
      }
      r->exited = true;
      if (info.si_code == CLD_EXITED) {
        r->exit_code = info.si_status;
        r->how = "exited with code " + std::to_string(info.si_status);
      } else {
        r->exit_code = 128 + info.si_status;
        r->how = "killed by " + signal_name(info.si_status);
      }
      if (r->exit_code != 0 && !stopping_) on_failure(*r);
    }
    if (!all_exited_seen_ && all_exited()) {
      all_exited_seen_ = true;
      all_exited_at_ = Clock::now();
      // What is left in the groups of stopped ranks was started by them and would be orphaned.
      if (stopping_ && !killed_) {
        send_all(SIGKILL);
        killed_ = true;
      }
    }
  }

  void on_failure(Rank& r) {
    failed_ = &r;
    result_.exit_code = r.exit_code;
    const auto running = std::count_if(ranks_.begin(), ranks_.end(), [](const auto& x) { return !x->exited; });
    running_at_stop_ = static_cast<int>(running);
    std::string message = "rank " + std::to_string(r.rank) + " " + r.how;
    if (running > 0) message += "; stopping the other ranks (SIGTERM, then SIGKILL after " + format_seconds(o_.grace_period_s) + ")";
    say(message);
    begin_stop(SIGTERM);
  }

  void on_signal(int sig) {
    if (std::find(std::begin(kForwarded), std::end(kForwarded), sig) == std::end(kForwarded)) return;  // SIGCHLD
    if (!stopping_) {
      result_.interrupted_by = sig;
      result_.exit_code = 128 + sig;
      say("got " + signal_name(sig) + "; passing it to every rank (" + signal_name(sig) + " again kills them at once)");
      begin_stop(sig);
    } else if (!killed_) {
      say("got " + signal_name(sig) + " while stopping the ranks: sending SIGKILL");
      send_all(SIGKILL);
      killed_ = true;
    }
  }

  void begin_stop(int sig) {
    stopping_ = true;
    stop_at_ = Clock::now();
    send_all(sig);
  }

  void kill_stragglers() {
    std::string list;
    for (auto& r : ranks_) {
      if (!r->exited) list += (list.empty() ? "" : ", ") + std::to_string(r->rank);
    }
    say("rank(s) " + list + " still running " + format_seconds(o_.grace_period_s) + " after being asked to stop: sending SIGKILL");
    send_all(SIGKILL);
    killed_ = true;
  }

  // To each rank's whole process group, exited ranks included (their zombies hold the group id).
  void send_all(int sig) {
    for (auto& r : ranks_) {
      // Without a group (both setpgid calls failed), the rank itself is still reachable.
      if (kill(-r->pid, sig) != 0 && errno == ESRCH && !r->exited) kill(r->pid, sig);
    }
  }

  void summarize() {
    if (failed_ != nullptr) {
      const Rank& r = *failed_;
      std::string message = "rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) + ") failed: " + r.how;
      if (running_at_stop_ > 0) {
        message += "; stopped " + std::to_string(running_at_stop_) + (running_at_stop_ == 1 ? " other rank" : " other ranks");
      }
      say(message);
      // Errors go to stderr, but not from every program (GoogleTest reports on stdout).
      const std::string who = "rank " + std::to_string(r.rank);
      if (!r.err.tail.empty()) {
        say("last lines of " + who + "'s stderr:");
      } else if (!r.out.tail.empty()) {
        say(who + " wrote nothing to stderr; last lines of its stdout:");
      } else {
        say(who + " wrote nothing");
      }
      for (const std::string& line : r.err.tail.empty() ? r.out.tail : r.err.tail) stderr_.write("    " + line + "\n");
    } else if (result_.interrupted_by != 0) {
      say("stopped every rank on " + signal_name(result_.interrupted_by));
    }
  }

  const SupervisorOptions& o_;
  SignalPipe signals_;
  Sink stdout_, stderr_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  SupervisorResult result_;
  const Rank* failed_ = nullptr;
  int running_at_stop_ = 0;
  bool stopping_ = false;  // SIGTERM (or the forwarded signal) sent
  bool killed_ = false;    // SIGKILL sent
  Clock::time_point stop_at_{};
  bool all_exited_seen_ = false;
  Clock::time_point all_exited_at_{};
};

}  // namespace

SupervisorResult supervise(const SupervisorOptions& options) { return Supervisor(options).run(); }

}  // namespace locus::cli
