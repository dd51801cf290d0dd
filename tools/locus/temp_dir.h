#pragma once
// A private directory that lives as long as one `locus run`: the ranks' file store.

#include <errno.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace locus::cli {

/// Creates a fresh directory `$TMPDIR/<prefix>XXXXXX` (mode 0700, as mkdtemp makes it: another
/// user's process cannot read or plant rendezvous keys there) and removes it with everything in it
/// on destruction. Throws std::runtime_error when it cannot be created.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a directory like " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor has no one to tell; a leftover in $TMPDIR is harmless
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace locus::cli
