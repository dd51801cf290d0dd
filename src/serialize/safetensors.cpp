// The safetensors format: an 8-byte little-endian header length, a JSON header mapping each
// name to {dtype, shape, data_offsets}, then the raw little-endian data.
//
// Note [Safetensors checks]
// The loader checks sizes before it allocates anything: the header length against the file's
// real size (and the format's 100 MB cap), each shape's byte count without overflow, and the
// layout the format requires: data offsets in order, contiguous from 0, not overlapping, and
// covering the data section exactly (no holes, no trailing bytes). Each tensor is then allocated
// on the target device and the data streamed into it (Note [Loading without a host copy]).
// Files Locus writes carry a CRC-32 of every tensor's name, dtype, shape and offsets and of the
// data under two metadata keys (Note [Checksum under two keys]), so a flipped bit is an IOError,
// not a different tensor. Files from other writers have no checksum and are checked for layout
// only.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <sstream>
#include <vector>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/serialize.h"
#include "src/core/regular_file.h"
#include "src/serialize/checksum.h"
#include "src/serialize/pytorch_checkpoint.h"
#include "src/serialize/safetensors_header.h"
#include "src/serialize/staged_reader.h"

namespace locus {
namespace {

using serialize::fail;
using serialize::TensorEntry;

constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;  // the format's own limit

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// The byte count of a tensor entry, or an IOError when its shape's product overflows.
uint64_t byte_count(const TensorEntry& t, const std::string& path) {
  uint64_t n = itemsize(t.dtype);
  for (int64_t d : t.shape)
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n) || n > uint64_t{INT64_MAX})
      fail(path, "tensor '" + t.name + "' has a shape whose size overflows");
  return n;
}

// Note [Safetensors checks]: order, contiguity, no overlap, exact cover of `data_size` bytes.
// Returns the tensors in data order, the order the loader reads them in.
std::vector<const TensorEntry*> check_layout(const std::vector<TensorEntry>& tensors, uint64_t data_size,
                                             const std::string& path) {
  std::vector<const TensorEntry*> by_offset;
  for (const TensorEntry& t : tensors) {
    if (t.end < t.begin) fail(path, "tensor '" + t.name + "' has data_offsets that end before they begin");
    if (t.end - t.begin != byte_count(t, path))
      fail(path, "tensor '" + t.name + "' has data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                     "] that do not match its shape and dtype (" + std::to_string(byte_count(t, path)) + " bytes)");
    if (t.end > data_size)
      fail(path, "truncated: tensor '" + t.name + "' ends at byte " + std::to_string(t.end) + " of " +
                     std::to_string(data_size) + " bytes of data");
    by_offset.push_back(&t);
  }
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [](const TensorEntry* a, const TensorEntry* b) { return a->begin < b->begin || (a->begin == b->begin && a->end < b->end); });
  uint64_t next = 0;
  for (const TensorEntry* t : by_offset) {
    if (t->begin < next) fail(path, "tensor '" + t->name + "' overlaps the data of another tensor");
    if (t->begin > next)
      fail(path, "a hole in the data: bytes " + std::to_string(next) + " to " + std::to_string(t->begin) +
                     " belong to no tensor (before '" + t->name + "')");
    next = t->end;
  }
  if (next != data_size)
    fail(path, std::to_string(data_size - next) + " bytes after the last tensor's data belong to no tensor");
  return by_offset;
}

void read_exactly(std::FILE* f, void* dst, uint64_t n, const std::string& path) {
  if (n && std::fread(dst, 1, n, f) != n) fail(path, "truncated: the file ended while reading");
}

constexpr const char* kTempMarker = ".tmp.";

// Removes `<path>.tmp.<pid>.<n>` files whose process no longer exists (a save that was killed).
void remove_stale_temporaries(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  const std::string prefix = p.filename().string() + kTempMarker;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), ec);
  }
}

}  // namespace

void save(const OrderedDict<std::string, Tensor>& tensors, const std::string& path) {
  std::vector<Tensor> hosts;
  std::vector<TensorEntry> entries;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__")
      throw ValueError("cannot save to '" + path + "': '__metadata__' is the format's own key, not a tensor name");
    if (!t.defined()) throw ValueError("cannot save to '" + path + "': tensor '" + name + "' is undefined");
    const Tensor h = t.detach().cpu().contiguous();
    // A host read: a non-blocking device-to-host copy into `h` must land first (Note [Host
    // reads wait]); the untyped pointer below does not wait by itself.
    h.impl()->storage()->wait_for_pending_work();
    hosts.push_back(h);
    entries.push_back({name, h.dtype(), h.shape(), offset, offset + h.nbytes()});
    offset += h.nbytes();
  }
  uint32_t crc = serialize::describe_tensors(entries);
  for (const Tensor& h : hosts) crc = serialize::add_bytes(crc, h.data_ptr(), h.nbytes());
  std::ostringstream header;
  header << "{\"__metadata__\":{";
  // By position, not by comparing the keys' pointers: a literal may live at two addresses (one
  // per translation unit under ASan, which gives each its own redzone), and a comma then came
  // before the first key.
  for (size_t k = 0; k < std::size(serialize::kChecksumKeys); ++k)
    header << (k ? "," : "") << serialize::json_string(serialize::kChecksumKeys[k]) << ":\""
           << serialize::hex32(crc) << "\"";
  header << "}";
  for (const TensorEntry& e : entries) {
    header << "," << serialize::json_string(e.name) << ":{\"dtype\":\"" << serialize::safetensors_dtype(e.dtype)
           << "\",\"shape\":[";
    for (size_t d = 0; d < e.shape.size(); ++d) header << (d ? "," : "") << e.shape[d];
    header << "],\"data_offsets\":[" << e.begin << "," << e.end << "]}";
  }
  header << "}";
  std::string text = header.str();
  while (text.size() % 8) text += ' ';  // data starts 8-byte aligned
  // A temporary name per process and call, so concurrent saves to one path never share a file;
  // the rename makes the new file appear whole or not at all. A save killed half-way leaves its
  // temporary file, which the next save to the path removes.
  remove_stale_temporaries(path);
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + kTempMarker + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    File out(std::fopen(tmp.c_str(), "wb"));
    if (!out) throw IOError("cannot save to '" + path + "': cannot create '" + tmp + "': " + std::strerror(errno));
    unsigned char len[8];
    for (int b = 0; b < 8; ++b) len[b] = static_cast<unsigned char>(uint64_t{text.size()} >> (8 * b));
    bool ok = std::fwrite(len, 1, 8, out.get()) == 8 && std::fwrite(text.data(), 1, text.size(), out.get()) == text.size();
    for (const Tensor& h : hosts)  // an empty tensor may have no buffer at all: nothing to write
      ok = ok && (h.nbytes() == 0 || std::fwrite(h.data_ptr(), 1, h.nbytes(), out.get()) == h.nbytes());
    // On the disk before the rename, so a crash of the machine cannot leave a renamed empty file.
    ok = ok && std::fflush(out.get()) == 0 && ::fsync(::fileno(out.get())) == 0;
    if (!ok) {
      const std::string why = std::strerror(errno);
      out.reset();
      std::remove(tmp.c_str());
      throw IOError("cannot save to '" + path + "': write failed: " + why);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw IOError("cannot save to '" + path + "': " + ec.message());
  }
}

OrderedDict<std::string, Tensor> load(const std::string& path, std::optional<Device> map_location) {
  const uint64_t file_size = detail::regular_file_size(path, [&](const std::string& why) { fail(path, why); });
  File in(std::fopen(path.c_str(), "rb"));
  if (!in) fail(path, std::string("it cannot be opened: ") + std::strerror(errno));
  // Told apart by content, not by name: torch.save writes .pt, .pth, .bin and .ckpt alike.
  unsigned char head[16];
  const size_t head_size = std::fread(head, 1, sizeof head, in.get());
  if (serialize::is_pytorch_checkpoint(head, head_size)) {
    in.reset();
    return serialize::load_pytorch_checkpoint(path, map_location);
  }
  std::rewind(in.get());
  if (file_size < 8) fail(path, "truncated: shorter than the 8-byte header length");
  unsigned char len[8];
  read_exactly(in.get(), len, 8, path);
  uint64_t n = 0;
  for (int b = 0; b < 8; ++b) n |= uint64_t{len[b]} << (8 * b);
  if (n > file_size - 8)
    fail(path, "truncated: the header claims " + std::to_string(n) + " bytes, the file has " + std::to_string(file_size - 8) +
                   " after the length");
  if (n > kMaxHeaderBytes) fail(path, "the header claims " + std::to_string(n) + " bytes, more than the format's 100 MB");
  std::string text(n, '\0');
  read_exactly(in.get(), text.data(), n, path);
  const serialize::Header header = serialize::parse_header(text, path);
  const uint64_t data_size = file_size - 8 - n;
  const std::vector<const TensorEntry*> by_offset = check_layout(header.tensors, data_size, path);
  // Note [Loading without a host copy]: every tensor finds room on the target before a byte of
  // data is read; then the data section streams front to back, checksummed on the way.
  const TensorOptions on_target = TensorOptions().device(map_location.value_or(Device(DeviceType::CPU)));
  std::vector<Tensor> tensors;  // in header order
  uint64_t largest = 0;
  for (const TensorEntry& t : header.tensors) {
    tensors.push_back(empty(t.shape, on_target.dtype(t.dtype)));
    largest = std::max(largest, t.end - t.begin);
  }
  uint32_t crc = serialize::describe_tensors(header.tensors);
  serialize::StagedReader reader(in.get(), path, on_target.device(), largest);
  for (const TensorEntry* t : by_offset) reader.read_into(tensors[static_cast<size_t>(t - header.tensors.data())], crc);
  reader.finish();
  serialize::verify_checksum(header.metadata, crc, path);
  OrderedDict<std::string, Tensor> loaded;
  for (size_t i = 0; i < header.tensors.size(); ++i) loaded.insert(header.tensors[i].name, std::move(tensors[i]));
  return loaded;
}

}  // namespace locus
