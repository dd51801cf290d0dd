#pragma once
// Running a scripts/reference/ PyTorch script from a test: finding it, a temporary directory,
// quoting, and the script's output with its last machine-readable `<key> <number>` line.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace locus::testing {

/// Debian's Python, which carries python3-torch (plain `python3` may be another one).
inline constexpr const char* kPython = "/usr/bin/python3";

/// `relative` (a path in the source tree, "scripts/reference/x.py"), found beside this header's
/// tree when __FILE__ is absolute, else upward from the working directory; empty when absent.
inline std::filesystem::path source_path(const std::string& relative) {
  namespace fs = std::filesystem;
  const fs::path here = fs::path(__FILE__).parent_path();  // <source>/tests/serialize
  if (here.is_absolute() && fs::exists(here.parent_path().parent_path() / relative)) return here.parent_path().parent_path() / relative;
  std::error_code ec;
  for (fs::path dir = fs::current_path(ec); !ec && !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / relative)) return dir / relative;
    if (dir == dir.parent_path()) break;
  }
  return {};
}

/// Whether kPython imports torch (checked once).
inline bool python_has_torch() {
  static const bool has = std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
  return has;
}

/// A fresh directory under the test's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "/locus_torch_ckpt_XXXXXX";
    if (::mkdtemp(pattern.data())) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// `s` quoted for the shell.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// What a script run printed, and the number on its `<key> <number>` line.
struct ScriptRun {
  bool ok = false;      ///< exited with status 0
  std::string output;   ///< the command, then its stdout and stderr together
  double value = -1;    ///< the number after `key`; -1 without such a line
};

/// Runs kPython `script` with `args` (already quoted), capturing its output and the last line
/// that starts with `key` and a space.
inline ScriptRun run_script(const std::filesystem::path& script, const std::string& args, const std::string& key) {
  ScriptRun run;
  const std::string command = std::string(kPython) + " " + shell_quote(script.string()) + " " + args + " 2>&1";
  run.output = "$ " + command + "\n";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    run.output += "popen failed\n";
    return run;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) run.output.append(buf, n);
  const int status = ::pclose(pipe);
  run.ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(key + " ", 0) == 0) run.value = std::strtod(line.c_str() + key.size() + 1, nullptr);
  return run;
}

}  // namespace locus::testing
