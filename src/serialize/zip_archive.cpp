// PyTorch's zip archives through libzip (zip_archive.h): the root folder found by a marker
// member, every member's size checked against its compressed bytes before anything is
// allocated (a stored member cannot be longer than its bytes in the file, a deflated one than
// deflate's best ratio allows), and reads that must end exactly where the entry says, with
// libzip's CRC check.

#include "src/serialize/zip_archive.h"

#include <zip.h>

#include <algorithm>
#include <string_view>

#include "locus/errors.h"

namespace locus::serialize {
namespace {

struct MemberCloser {
  void operator()(zip_file_t* f) const noexcept { zip_fclose(f); }
};

}  // namespace

void ZipArchive::Closer::operator()(zip* z) const noexcept { zip_discard(z); }  // read-only: nothing to write

ZipArchive::ZipArchive(const std::string& path, const std::string& marker, const std::string& not_this_kind)
    : path_(path) {
  int code = 0;
  zip_.reset(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!zip_) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail("it is not a readable zip archive (" + why + "); is the file truncated or damaged?");
  }
  const std::string suffix = "/" + marker;
  const zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
  for (zip_int64_t i = 0; i < n && root_.empty(); ++i) {
    const char* name = zip_get_name(zip_.get(), static_cast<zip_uint64_t>(i), 0);
    const std::string_view s = name ? name : "";
    if (s.size() > suffix.size() && s.ends_with(suffix) && s.find('/') == s.size() - suffix.size())
      root_ = s.substr(0, s.size() - marker.size());
  }
  if (root_.empty()) fail(not_this_kind);
}

ZipArchive::~ZipArchive() = default;

void ZipArchive::fail(const std::string& problem) const { throw IOError("cannot load '" + path_ + "': " + problem); }

std::optional<uint64_t> ZipArchive::find(const std::string& name) const {
  const zip_int64_t i = zip_name_locate(zip_.get(), (root_ + name).c_str(), 0);
  if (i < 0) return std::nullopt;
  return static_cast<uint64_t>(i);
}

uint64_t ZipArchive::size(uint64_t index, const std::string& name) const {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(zip_.get(), index, 0, &st) != 0) fail("cannot read the zip entry of " + root_ + name);
  const uint64_t want = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((st.valid & want) != want) fail("the zip entry of " + root_ + name + " has no sizes");
  if (st.comp_method == ZIP_CM_STORE) {
    if (st.size != st.comp_size)
      fail(root_ + name + " is stored uncompressed but claims " + std::to_string(st.size) + " bytes in " +
           std::to_string(st.comp_size));
  } else if (st.comp_method == ZIP_CM_DEFLATE) {
    if (st.comp_size > UINT64_MAX / 1032 || st.size > st.comp_size * 1032 + 64)
      fail(root_ + name + " claims " + std::to_string(st.size) + " bytes, more than its " +
           std::to_string(st.comp_size) + " deflated bytes can hold");
  } else {
    fail(root_ + name + " is compressed with zip method " + std::to_string(st.comp_method) +
         "; PyTorch's archives are stored or deflated");
  }
  return st.size;
}

void ZipArchive::read(uint64_t index, const std::string& name, void* dst, uint64_t n) const {
  std::unique_ptr<zip_file_t, MemberCloser> f(zip_fopen_index(zip_.get(), index, 0));
  if (!f) fail("cannot open " + root_ + name + " (" + zip_strerror(zip_.get()) + ")");
  uint64_t got = 0;
  while (true) {
    // One byte past the end: the read that returns 0 is where libzip compares the CRC.
    unsigned char spare;
    void* at = got < n ? static_cast<unsigned char*>(dst) + got : &spare;
    const uint64_t want = got < n ? std::min<uint64_t>(n - got, uint64_t{1} << 30) : 1;
    const zip_int64_t r = zip_fread(f.get(), at, want);
    if (r < 0) fail("cannot read " + root_ + name + " (" + zip_file_strerror(f.get()) + ")");
    if (r == 0) break;
    if (got >= n) fail(root_ + name + " holds more bytes than its zip entry says");
    got += static_cast<uint64_t>(r);
  }
  if (got != n) fail("truncated: " + root_ + name + " ends after " + std::to_string(got) + " of " + std::to_string(n) + " bytes");
}

std::string ZipArchive::read_text(uint64_t index, const std::string& name, uint64_t limit) const {
  const uint64_t n = size(index, name);
  if (n > limit) fail(root_ + name + " is " + std::to_string(n) + " bytes, more than " + std::to_string(limit));
  std::string text(n, '\0');
  read(index, name, text.data(), n);
  return text;
}

std::string ZipArchive::read_text(const std::string& name, uint64_t limit) const {
  const auto index = find(name);
  if (!index) fail("the archive has no " + root_ + name);
  return read_text(*index, name, limit);
}

}  // namespace locus::serialize
