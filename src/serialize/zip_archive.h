#pragma once
// The zip archives PyTorch writes (torch.save's checkpoints, torch.export.save's .pt2 programs):
// one root folder of any name, members read strictly through libzip (zip_archive.cpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct zip;

namespace locus::serialize {

/// A read-only zip archive whose members live in one root folder, found as the folder holding
/// `marker` (a member name such as "data.pkl"). Every failure is an IOError "cannot load
/// '<path>': <problem>".
class ZipArchive {
 public:
  /// Opens `path`; `not_this_kind` is the problem reported when no folder holds `marker`.
  ZipArchive(const std::string& path, const std::string& marker, const std::string& not_this_kind);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  /// The index of member `<root>/<name>`, if the archive has it.
  std::optional<uint64_t> find(const std::string& name) const;
  /// The uncompressed size of member `index` (`name` for messages), checked against what its
  /// compressed bytes can hold before anyone allocates it; stored and deflated members only.
  uint64_t size(uint64_t index, const std::string& name) const;
  /// Reads exactly the `n` bytes of member `index` into `dst`; libzip checks the CRC at its end.
  void read(uint64_t index, const std::string& name, void* dst, uint64_t n) const;
  /// The whole member as text, at most `limit` bytes.
  std::string read_text(uint64_t index, const std::string& name, uint64_t limit) const;
  /// The whole member `<root>/<name>` as text, at most `limit` bytes; IOError naming it when absent.
  std::string read_text(const std::string& name, uint64_t limit) const;
  /// "<folder>/".
  const std::string& root() const { return root_; }
  /// The file's path, for messages.
  const std::string& path() const { return path_; }
  /// Throws the IOError "cannot load '<path>': <problem>".
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  std::string path_;
  struct Closer {
    void operator()(zip* z) const noexcept;
  };
  std::unique_ptr<zip, Closer> zip_;
  std::string root_;
};

}  // namespace locus::serialize
