#pragma once
// The first check of every loader of outside files: the path names a regular file, whose size
// bounds what may be allocated from its contents.

#include <cstdint>
#include <filesystem>
#include <string>

namespace locus::detail {

/// The size of the regular file at `path`. Otherwise calls `fail` (which must throw the
/// loader's own IOError) with the reason: "no such file", "it is a directory, not a file", "it
/// is not a regular file", or "cannot read its size: ...".
template <class Fail>
uint64_t regular_file_size(const std::string& path, Fail&& fail) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) fail("no such file");
  if (!std::filesystem::is_regular_file(status))
    fail(std::filesystem::is_directory(status) ? "it is a directory, not a file" : "it is not a regular file");
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) fail("cannot read its size: " + ec.message());
  return size;
}

}  // namespace locus::detail
