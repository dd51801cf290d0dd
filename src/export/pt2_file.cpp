// torch.export.save's archive (pt2_file.h).
//
// Note [pt2 archives]
// A .pt2 file is a zip archive (stored, not deflated, though Locus reads both) with one root
// folder holding `archive_format` ("pt2"), `archive_version`, `byteorder`, the program as
// `models/model.json` (Note [Exported programs]), and each stored tensor's whole untyped storage
// as raw bytes under `data/weights/` (`data/constants/` for tensor constants), described by
// `data/weights/model_weights_config.json`: the state_dict name, the member, whether it is a
// parameter, and the tensor's meta (dtype in the schema's numbering, sizes, strides, storage
// offset). A tensor is a strided view of its storage: the view is checked against the member's
// size before anything is read (src/serialize/stored_view.h) and gathered contiguous. Tied
// weights name one member twice and become one tensor. Pickled payloads (use_pickle), other
// archive formats and big-endian files are refused by name. Members are read through the same
// strict zip reader as torch.save checkpoints (src/serialize/zip_archive.h).

#include "src/export/pt2_file.h"

#include <map>

#include "locus/errors.h"
#include "locus/factories.h"
#include "src/core/regular_file.h"
#include "src/export/interpreter.h"
#include "src/serialize/stored_view.h"
#include "src/serialize/zip_archive.h"

namespace locus::exported {
namespace {

// model.json is a graph of a few hundred bytes a node: 256 MB is a model far beyond any export.
constexpr uint64_t kMaxProgramBytes = uint64_t{256} << 20;
constexpr uint64_t kMaxConfigBytes = uint64_t{64} << 20;

std::vector<int64_t> concrete(const std::vector<SymSize>& sizes, const std::string& what, const serialize::ZipArchive& zip) {
  std::vector<int64_t> out;
  for (const SymSize& s : sizes) {
    if (!s.value) zip.fail(what + " has a symbolic size '" + s.expression + "' in a stored tensor");
    out.push_back(*s.value);
  }
  return out;
}

// The stored tensors of one config, each member read once.
std::vector<std::pair<std::string, Tensor>> read_tensors(const serialize::ZipArchive& zip, const std::string& folder,
                                                         const std::string& config_name, bool required) {
  const std::string config_member = folder + config_name;
  if (!zip.find(config_member)) {
    if (required) zip.fail("the archive has no " + zip.root() + config_member);
    return {};
  }
  const std::string config = zip.read_text(config_member, kMaxConfigBytes);
  const auto entries = parse_tensor_config(config, "cannot load '" + zip.path() + "': " + zip.root() + config_member);
  std::map<std::string, std::vector<unsigned char>> blobs;
  std::vector<std::pair<std::string, Tensor>> out;
  std::map<std::pair<std::string, std::string>, Tensor> made;  // (member, view) -> tensor, for tied weights
  for (const auto& [name, stored] : entries) {
    if (stored.path.empty() || stored.path.find('/') != std::string::npos || stored.path.find("..") != std::string::npos)
      zip.fail("tensor '" + name + "' names the member '" + stored.path + "', which is not a file in " + folder);
    const auto dtype = dtype_of_scalar_type(stored.meta.dtype);
    if (!dtype)
      zip.fail("tensor '" + name + "' has dtype number " + std::to_string(stored.meta.dtype) +
               " (the file's ScalarType), which Locus has no dtype for");
    const std::string member = folder + stored.path;
    const auto index = zip.find(member);
    if (!index) zip.fail("tensor '" + name + "' is stored in " + zip.root() + member + ", which the archive lacks");
    const uint64_t bytes = zip.size(*index, member);
    const size_t item = itemsize(*dtype);
    if (bytes % item != 0)
      zip.fail(zip.root() + member + " holds " + std::to_string(bytes) + " bytes, not a whole number of " +
               std::string(dtype_name(*dtype)) + " elements");
    serialize::StoredView view;
    view.shape = concrete(stored.meta.sizes, "tensor '" + name + "'", zip);
    view.stride = stored.meta.strides.empty() ? std::vector<int64_t>() : concrete(stored.meta.strides, "tensor '" + name + "'", zip);
    if (view.stride.empty()) {  // contiguous when the file gives no strides
      view.stride.assign(view.shape.size(), 1);
      for (size_t d = view.shape.size(); d-- > 1;) view.stride[d - 1] = view.stride[d] * std::max<int64_t>(view.shape[d], 1);
    }
    if (!stored.meta.storage_offset.value) zip.fail("tensor '" + name + "' has a symbolic storage offset");
    view.offset = *stored.meta.storage_offset.value;
    view.storage_numel = bytes / item;
    const int64_t numel = serialize::check_stored_view(view, name, stored.path, [&](const std::string& why) { zip.fail(why); });
    const std::string view_key = std::to_string(view.offset) + ":" + std::to_string(numel);
    if (const auto it = made.find({member, view_key}); it != made.end() && it->second.shape() == Shape(view.shape)) {
      out.emplace_back(name, it->second);
      continue;
    }
    auto blob = blobs.find(member);
    if (blob == blobs.end()) {
      blob = blobs.emplace(member, std::vector<unsigned char>(static_cast<size_t>(bytes))).first;
      zip.read(*index, member, blob->second.data(), bytes);
    }
    Tensor t = empty(Shape(view.shape), TensorOptions().dtype(*dtype));
    if (numel > 0) serialize::gather_stored_view(view, blob->second.data(), item, static_cast<unsigned char*>(t.data_ptr()));
    made[{member, view_key}] = t;
    out.emplace_back(name, t);
  }
  return out;
}

}  // namespace

Pt2Contents read_pt2(const std::string& path) {
  detail::regular_file_size(path, [&](const std::string& why) { throw IOError("cannot load '" + path + "': " + why); });
  const serialize::ZipArchive zip(path, "archive_format",
                                  "a zip archive without <folder>/archive_format, so not a torch.export program (.pt2)");
  const std::string format = zip.read_text("archive_format", 64);
  if (format != "pt2") zip.fail(zip.root() + "archive_format is '" + format + "', not 'pt2'");
  if (zip.find("byteorder")) {
    const std::string order = zip.read_text("byteorder", 16);
    if (order != "little") zip.fail(zip.root() + "byteorder is '" + order + "'; Locus reads little-endian archives");
  }
  Pt2Contents c;
  const std::string model = "models/model.json";
  c.program = parse_program(zip.read_text(model, kMaxProgramBytes), "cannot load '" + path + "': " + zip.root() + model);
  c.weights = read_tensors(zip, "data/weights/", "model_weights_config.json", true);
  c.constants = read_tensors(zip, "data/constants/", "model_constants_config.json", false);
  return c;
}

}  // namespace locus::exported
