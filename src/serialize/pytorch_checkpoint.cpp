// PyTorch's checkpoint format, read the way torch.load(weights_only=True) reads it.
//
// Note [PyTorch checkpoints]
// Since torch 1.6, torch.save writes a zip archive with one root folder of any name:
// `<root>/data.pkl`, a pickle of the saved object whose tensors are calls of
// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...) and whose storages are
// persistent ids ('storage', torch.<Type>Storage, key, location, numel); `<root>/data/<key>`, each
// storage's raw bytes; `<root>/byteorder` ("little" or "big"; absent means little) and members
// this reader ignores (version, .data/serialization_id). The pickle runs on the allow-list
// machine (Note [Allow-list unpickler]), which builds a tree and executes nothing. The top-level
// object must be a dict; nested dicts flatten with "." (a training checkpoint's
// {"model": state_dict, "epoch": 3} gives "model.fc.weight"), integer keys by their digits, and
// everything that is not a tensor or a dict is skipped. Each tensor is checked to be a view inside
// its storage (offset plus extent within numel, and no more elements than the storage has, so a
// stride-0 expand() cannot inflate a small file into a huge allocation), gathered from the storage
// into a fresh contiguous tensor and moved to map_location. Storages are read one at a time, only
// those some tensor uses, so tied weights (two names, one storage) read it once and become two
// equal tensors; big-endian files are byte-swapped. Member sizes are checked against the pickle
// and the archive before anything is allocated: a stored member cannot be longer than its bytes
// in the file, a deflated one than deflate's best ratio allows. The legacy format of torch < 1.6
// (a bare pickle stream) is recognised by its magic number and refused with the re-save advice.

#include "src/serialize/pytorch_checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "locus/errors.h"
#include "locus/factories.h"
#include "src/core/regular_file.h"
#include "src/serialize/pickle.h"
#include "src/serialize/stored_view.h"
#include "src/serialize/zip_archive.h"

namespace locus::serialize {
namespace {

constexpr unsigned char kZipMagic[] = {'P', 'K', 3, 4};
// The legacy format opens with pickle protocol 2 and LONG1 of torch's magic number 0x1950a86a20f9469cfc6c.
constexpr unsigned char kLegacyMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

// data.pkl describes tensors, not data: ~150 bytes a tensor, so a model of 10,000 tensors pickles
// to ~2 MB. The cap bounds the unpickler's objects (one an opcode at most) for a hostile file.
constexpr uint64_t kMaxPickleBytes = uint64_t{64} << 20;
// Dicts nested deeper than this are a malformed (or cyclic) pickle, not a checkpoint.
constexpr int kMaxDepth = 64;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw IOError("cannot load '" + path + "': " + problem);
}

// Flattening the pickle's dicts into names: Note [PyTorch checkpoints]. `budget` bounds the work
// and the name bytes, so dicts shared through the memo (a DAG that doubles at every level) cannot
// expand without end.
class Flattener {
 public:
  Flattener(const std::string& path, uint64_t budget) : path_(path), budget_(budget) {}

  void dict(const PickleObject& d, const std::string& prefix, int depth) {
    if (depth > kMaxDepth) fail(path_, "its dicts nest deeper than " + std::to_string(kMaxDepth) + " levels");
    for (size_t i = 0; i + 1 < d.items.size(); i += 2) {
      const PickleObject& key = *d.items[i];
      const PickleObject& value = *d.items[i + 1];
      std::string name;
      if (key.kind == PickleObject::Kind::String) name = key.text;
      else if (key.kind == PickleObject::Kind::Int) name = std::to_string(key.integer);
      else continue;  // a tuple or None key names no tensor
      name = prefix + name;
      spend(1 + name.size());
      if (value.kind == PickleObject::Kind::Dict) dict(value, name + ".", depth + 1);
      else if (value.kind == PickleObject::Kind::Tensor) tensors.insert_or_assign(name, &value);  // a repeated key: the last wins, in place
    }
  }

  OrderedDict<std::string, const PickleObject*> tensors;

 private:
  void spend(uint64_t n) {
    if (n > budget_) fail(path_, "its dicts share entries so often that the names would not fit in memory");
    budget_ -= n;
  }
  const std::string& path_;
  uint64_t budget_;
};

// The checked view a pickled tensor describes of its storage.
serialize::StoredView view_of(const PickleObject& t) {
  return {t.shape, t.stride, t.integer, static_cast<uint64_t>(t.storage->integer)};
}

int64_t check_view(const PickleObject& t, const std::string& name, const std::string& path) {
  return check_stored_view(view_of(t), name, t.storage->text, [&](const std::string& why) { fail(path, why); });
}

void swap_bytes(unsigned char* data, uint64_t numel, size_t item) {
  for (uint64_t i = 0; i < numel; ++i, data += item) std::reverse(data, data + item);
}

}  // namespace

bool is_pytorch_checkpoint(const unsigned char* head, size_t n) {
  return (n >= sizeof kZipMagic && std::memcmp(head, kZipMagic, sizeof kZipMagic) == 0) ||
         (n >= sizeof kLegacyMagic && std::memcmp(head, kLegacyMagic, sizeof kLegacyMagic) == 0);
}

OrderedDict<std::string, Tensor> load_pytorch_checkpoint(const std::string& path, std::optional<Device> map_location) {
  detail::regular_file_size(path, [&](const std::string& why) { fail(path, why); });
  {
    unsigned char head[sizeof kLegacyMagic] = {};
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) fail(path, std::string("it cannot be opened: ") + std::strerror(errno));
    const size_t got = std::fread(head, 1, sizeof head, f.get());
    if (got == sizeof head && std::memcmp(head, kLegacyMagic, sizeof head) == 0)
      fail(path, "it is in PyTorch's legacy format (torch < 1.6, or _use_new_zipfile_serialization=False), which Locus "
                 "does not read; re-save it with a current torch: torch.save(torch.load(path), path)");
  }
  const ZipArchive archive(path, "data.pkl", "a zip archive without <folder>/data.pkl, so not a PyTorch checkpoint");
  bool big_endian = false;
  if (const auto i = archive.find("byteorder")) {
    const std::string order = archive.read_text(*i, "byteorder", 16);
    if (order != "little" && order != "big") fail(path, archive.root() + "byteorder is '" + order + "', not 'little' or 'big'");
    big_endian = order == "big";
  }
  const auto pickle_index = archive.find("data.pkl");
  if (!pickle_index) fail(path, "the archive has no " + archive.root() + "data.pkl");
  const std::string pickle_bytes = archive.read_text(*pickle_index, "data.pkl", kMaxPickleBytes);
  const Pickle pickle = unpickle(pickle_bytes, path);
  if (pickle.root->kind != PickleObject::Kind::Dict)
    fail(path, "its top-level object is not a dict; locus::load reads state_dicts and dicts of them");
  Flattener flat(path, 16 * pickle_bytes.size() + 4096);
  flat.dict(*pickle.root, "", 0);

  // Every view checked, and every storage's member found and sized, before any data is read.
  struct StorageUse {
    const PickleObject* storage;
    uint64_t member;
    uint64_t bytes;
    std::vector<size_t> tensors;  // positions in flat.tensors
  };
  std::vector<StorageUse> uses;  // in first-use order
  std::unordered_map<const PickleObject*, size_t> use_of;
  size_t position = 0;
  for (const auto& [name, t] : flat.tensors) {
    check_view(*t, name, path);
    const auto [found, fresh] = use_of.try_emplace(t->storage, uses.size());
    if (fresh) {
      const PickleObject& s = *t->storage;
      const std::string member = "data/" + s.text;
      const auto index = archive.find(member);
      if (!index)
        fail(path, "storage '" + s.text + "' of tensor '" + name + "' is missing: the archive has no " + archive.root() + member);
      uint64_t bytes = 0;
      if (__builtin_mul_overflow(static_cast<uint64_t>(s.integer), itemsize(s.dtype), &bytes))
        fail(path, "storage '" + s.text + "' has a size that overflows");
      const uint64_t have = archive.size(*index, member);
      if (have != bytes)
        fail(path, archive.root() + member + " holds " + std::to_string(have) + " bytes; its storage of " +
                       std::to_string(s.integer) + " " + std::string(dtype_name(s.dtype)) + " elements needs " + std::to_string(bytes));
      uses.push_back({&s, *index, bytes, {}});
    }
    uses[found->second].tensors.push_back(position++);
  }

  const Device target = map_location.value_or(Device(DeviceType::CPU));
  std::vector<const PickleObject*> views;
  std::vector<const std::string*> names;
  for (const auto& [name, t] : flat.tensors) {
    views.push_back(t);
    names.push_back(&name);
  }
  std::vector<Tensor> tensors(views.size());
  for (const StorageUse& use : uses) {
    const PickleObject& s = *use.storage;
    const size_t item = itemsize(s.dtype);
    std::vector<unsigned char> data(static_cast<size_t>(use.bytes));
    archive.read(use.member, "data/" + s.text, data.data(), data.size());
    if (big_endian && item > 1) swap_bytes(data.data(), static_cast<uint64_t>(s.integer), item);
    for (const size_t i : use.tensors) {
      const PickleObject& t = *views[i];
      Tensor host = empty(Shape(t.shape), TensorOptions().dtype(s.dtype));
      if (check_view(t, *names[i], path) > 0) gather_stored_view(view_of(t), data.data(), item, static_cast<unsigned char*>(host.data_ptr()));
      tensors[i] = target.type() == DeviceType::CPU ? host : host.to(target);
    }
  }
  OrderedDict<std::string, Tensor> loaded;
  size_t i = 0;
  for (const auto& entry : flat.tensors) loaded.insert(entry.first, std::move(tensors[i++]));
  return loaded;
}

}  // namespace locus::serialize
