// A sharded model's state as a whole, and checkpoints that each rank writes its part of.
//
// Note [Sharded checkpoints]
// checkpoint::save writes one safetensors file per rank, `rank-<r>-of-<n>.safetensors`, with
// that rank's rows of each sharded parameter under the parameter's own name (rank 0's file also
// holds the buffers and any parameter that is not sharded), and rank 0 writes `index.json`:
//   {"format": "locus-sharded-checkpoint", "version": 1, "world_size": n,
//    "tensors": [{"name": "0.weight", "shape": [16, 10], "dtype": "float32",
//                 "pieces": [{"file": "rank-0-of-2.safetensors", "rows": [0, 8]}, ...]}, ...]}
// in the model's state_dict order. Rows are of dim 0 (a 0-dim tensor is one row). Rank 0 knows
// every rank's rows from the split alone (Note [Shard geometry] in fully_shard.cpp), so saving
// needs no exchange but the final barrier. checkpoint::load asks, for each tensor of the model
// it loads into, for the rows this rank now holds (all of them for a tensor that is not sharded
// there) and copies them out of the pieces that overlap them: any world size loads any other's
// checkpoint. Everything is read and checked before the model changes. With an optimizer, its
// state_dict() travels under "optim.<key>": a state tensor of its shard's shape is split as the
// parameter is (marked "rows_of_parameter": true, and split again on load where the parameter
// is sharded), the rest is written whole by rank 0.

#include "locus/distributed/state_dict.h"

#include <filesystem>
#include <fstream>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/optim/optimizer.h"
#include "locus/serialize.h"
#include "src/distributed/sharded_unit.h"

namespace locus::distributed {
namespace {

using detail::ShardedParam;
using detail::ShardedUnit;

struct Sharded {
  const ShardedParam* param;
  const ShardedUnit* unit;
};

// The module's sharded parameters by name.
std::unordered_map<std::string, Sharded> sharded_parameters(const nn::Module& module) {
  std::unordered_map<std::string, Sharded> out;
  for (const auto& [name, t] : module.named_parameters()) {
    const auto [param, unit] = detail::find_shard(t);
    if (param) out[name] = {param, unit};
  }
  return out;
}

// The group the module is sharded over (its outermost unit's); null for a module not sharded.
ProcessGroup* group_of(const nn::Module& module) {
  const auto units = detail::units_within(module);
  return units.empty() ? nullptr : units.front()->group.get();
}

// The whole parameter, gathered from every rank's rows, in the shards' dtype on their device.
Tensor gather_whole(const ShardedParam& p, const ShardedUnit& unit) {
  NoGradGuard no_grad;
  const int64_t size = unit.group->size(), slot = p.slot_numel();
  const TensorOptions opts = TensorOptions().dtype(p.shard.dtype()).device(p.shard.device());
  Tensor send = zeros({slot}, opts);
  if (p.local_rows > 0) send.narrow(0, 0, p.local_rows * p.row_numel).copy_(p.shard.detach().reshape({-1}));
  Tensor gathered = empty({size * slot}, opts);
  if (slot > 0) unit.group->all_gather_into_tensor(gathered, send)->wait();
  return gathered.narrow(0, 0, p.rows * p.row_numel).view(p.full_shape);
}

// Rows [first, first + count) of a whole tensor, as the shard holds them ([count, ...]).
Tensor rows_of(const Tensor& whole, const ShardedParam& p) {
  const Tensor rows = whole.dim() == 0 ? whole.reshape({1}) : whole;
  return rows.narrow(0, p.first_row, p.local_rows);
}

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// Rank 0's verdict on a dict only it holds, told to every rank: empty, or the error to raise.
std::string agree_on_error(ProcessGroup& group, const std::string& error) {
  NoGradGuard no_grad;
  Tensor length = full({1}, static_cast<double>(error.size()), TensorOptions().dtype(DType::Int64));
  group.broadcast(length, 0)->wait();
  const int64_t n = length.item<int64_t>();
  if (n == 0) return {};
  Tensor text = empty({n}, TensorOptions().dtype(DType::UInt8));
  if (group.rank() == 0) std::memcpy(text.data_ptr(), error.data(), error.size());
  group.broadcast(text, 0)->wait();
  return std::string(static_cast<const char*>(text.data_ptr()), static_cast<size_t>(n));
}

// As Module::load_state_dict: ShapeError when shapes are all that is wrong, ValueError otherwise.
[[noreturn]] void throw_load_error(const std::string& message) {
  if (message.find("key(s)") == std::string::npos) throw ShapeError(message);
  throw ValueError(message);
}

}  // namespace

OrderedDict<std::string, Tensor> get_model_state_dict(const nn::Module& module, StateDictOptions options) {
  OrderedDict<std::string, Tensor> state = module.state_dict();
  if (!options.full_state_dict()) return state;
  const auto sharded = sharded_parameters(module);
  const ProcessGroup* group = group_of(module);
  const bool keep = !options.cpu_offload() || !group || group->rank() == 0;
  OrderedDict<std::string, Tensor> out;
  for (const auto& [name, t] : state) {
    const auto it = sharded.find(name);
    Tensor whole = it == sharded.end() ? t : gather_whole(*it->second.param, *it->second.unit);
    if (!keep) continue;
    out.insert(name, options.cpu_offload() ? whole.to(Device(DeviceType::CPU), false, /*copy=*/true) : whole);
  }
  return out;
}

nn::IncompatibleKeys set_model_state_dict(nn::Module& module, const OrderedDict<std::string, Tensor>& state,
                                          StateDictOptions options) {
  if (!options.full_state_dict()) return module.load_state_dict(state, options.strict());
  const auto sharded = sharded_parameters(module);
  ProcessGroup* group = group_of(module);
  const OrderedDict<std::string, Tensor> own = module.state_dict();
  const auto whole_shape = [&](const std::string& name, const Tensor& t) {
    const auto it = sharded.find(name);
    return it == sharded.end() ? t.shape() : it->second.param->full_shape;
  };

  // What the dict must look like, checked where the dict is.
  const auto problems = [&](const OrderedDict<std::string, Tensor>& dict) -> std::string {
    std::string missing, unexpected, shapes;
    for (const auto& [name, t] : own)
      if (!dict.contains(name)) missing += (missing.empty() ? "\"" : ", \"") + name + "\"";
    for (const auto& [name, t] : dict)
      if (!own.contains(name)) unexpected += (unexpected.empty() ? "\"" : ", \"") + name + "\"";
    for (const auto& [name, t] : own)
      if (dict.contains(name) && dict[name].defined() && !(dict[name].shape() == whole_shape(name, t)))
        shapes += "\n\tsize mismatch for " + name + ": copying a param with shape " + shape_text(dict[name].shape()) +
                  " from checkpoint, the shape in current model is " + shape_text(whole_shape(name, t)) + ".";
    std::string out;
    if (options.strict() && !missing.empty()) out += "\n\tMissing key(s) in state_dict: " + missing + ".";
    if (options.strict() && !unexpected.empty()) out += "\n\tUnexpected key(s) in state_dict: " + unexpected + ".";
    out += shapes;
    return out.empty() ? out : "Error(s) in loading state_dict for " + module.name() + ":" + out;
  };

  OrderedDict<std::string, Tensor> whole = state;
  if (options.broadcast_from_rank0() && group && group->size() > 1) {
    const bool root = group->rank() == 0;
    const std::string error = agree_on_error(*group, root ? problems(state) : std::string());
    if (!error.empty()) throw_load_error(error);
    whole = OrderedDict<std::string, Tensor>();
    NoGradGuard no_grad;
    for (const auto& [name, t] : own) {
      // Whether rank 0 has it: an absent key (strict=false) is skipped on every rank alike.
      Tensor present = full({1}, root && state.contains(name) ? 1.0 : 0.0, TensorOptions().dtype(DType::Int32));
      group->broadcast(present, 0)->wait();
      if (present.item<int32_t>() == 0) continue;
      Tensor values = root ? state[name].to(Device(DeviceType::CPU), t.dtype(), false, /*copy=*/true).contiguous()
                           : empty(whole_shape(name, t), TensorOptions().dtype(t.dtype()));
      group->broadcast(values, 0)->wait();
      whole.insert(name, values);
    }
  } else if (const std::string error = problems(state); !error.empty()) {
    throw_load_error(error);
  }
  // Each rank's rows of the sharded ones; load_state_dict then checks and copies everything at once.
  OrderedDict<std::string, Tensor> local;
  for (const auto& [name, t] : whole) {
    const auto it = sharded.find(name);
    local.insert(name, it == sharded.end() || !t.defined() ? t : rows_of(t, *it->second.param));
  }
  return module.load_state_dict(local, options.strict());
}

namespace checkpoint {
namespace {

std::string rank_file(int rank, int size) {
  return "rank-" + std::to_string(rank) + "-of-" + std::to_string(size) + ".safetensors";
}

void write_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw IOError("checkpoint::save: could not write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IOError("checkpoint::save: could not write " + path.string() + ": " + ec.message());
}

DType dtype_named(const std::string& name, const std::filesystem::path& index) {
  for (int d = 0; d < kNumDTypes; ++d)
    if (dtype_name(static_cast<DType>(d)) == name) return static_cast<DType>(d);
  throw IOError("checkpoint::load: " + index.string() + " names an unknown dtype '" + name + "'");
}

// An integer of the index. nlohmann's get<int64_t>() casts any number, and a double outside
// int64's range is undefined behaviour: only JSON integers pass, in range.
int64_t integer_of(const nlohmann::json& v, const std::filesystem::path& index, const char* what) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    return v.get<int64_t>();
  }
  throw IOError("checkpoint::load: " + index.string() + ": " + what + " must be integers of at most 2^63 - 1");
}

std::vector<int64_t> integers_of(const nlohmann::json& v, const std::filesystem::path& index, const char* what) {
  if (!v.is_array()) throw IOError("checkpoint::load: " + index.string() + ": " + what + " must be a list of integers");
  std::vector<int64_t> out;
  for (const auto& x : v) out.push_back(integer_of(x, index, what));
  return out;
}

// One tensor of the index.
struct IndexEntry {
  Shape shape;
  DType dtype;
  struct Piece {
    std::string file;
    int64_t first, end;  // rows [first, end)
  };
  std::vector<Piece> pieces;
  bool split = false;  ///< optimizer state split as its parameter was ("rows_of_parameter")
};

std::map<std::string, IndexEntry> read_index(const std::filesystem::path& dir, std::vector<std::string>& order) {
  const std::filesystem::path path = dir / "index.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("checkpoint::load: " + path.string() + " does not exist or cannot be read");
  std::map<std::string, IndexEntry> out;
  try {
    const nlohmann::json index = nlohmann::json::parse(in);
    if (index.at("format").get<std::string>() != "locus-sharded-checkpoint" || integer_of(index.at("version"), path, "version") != 1)
      throw IOError("checkpoint::load: " + path.string() + " is not a Locus sharded checkpoint index of version 1");
    for (const auto& t : index.at("tensors")) {
      IndexEntry e;
      std::vector<int64_t> dims = integers_of(t.at("shape"), path, "a shape's sizes");
      for (int64_t d : dims)
        if (d < 0) throw IOError("checkpoint::load: " + path.string() + ": negative size in a shape");
      e.shape = Shape(dims);
      e.dtype = dtype_named(t.at("dtype").get<std::string>(), path);
      const int64_t rows = dims.empty() ? 1 : dims[0];
      for (const auto& p : t.at("pieces")) {
        const auto r = integers_of(p.at("rows"), path, "a piece's rows");
        const std::string file = p.at("file").get<std::string>();
        if (r.size() != 2 || r[0] < 0 || r[0] > r[1] || r[1] > rows || file.find('/') != std::string::npos)
          throw IOError("checkpoint::load: " + path.string() + ": a piece of '" + t.at("name").get<std::string>() +
                        "' has rows or a file name out of bounds");
        e.pieces.push_back({file, r[0], r[1]});
      }
      e.split = t.value("rows_of_parameter", false);
      const std::string name = t.at("name").get<std::string>();
      order.push_back(name);
      out[name] = std::move(e);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw IOError("checkpoint::load: " + path.string() + " is not a valid index: " + e.what());
  }
  return out;
}

}  // namespace

namespace {

// What save() writes: this rank's file and, on rank 0, the index.
struct Writer {
  int rank, size;
  OrderedDict<std::string, Tensor> mine;
  nlohmann::json tensors = nlohmann::json::array();

  // A tensor every rank holds whole: rank 0 writes it.
  void whole(const std::string& name, const Tensor& t) {
    if (rank == 0) mine.insert(name, t.detach());
    nlohmann::json entry = {{"name", name}, {"dtype", std::string(dtype_name(t.dtype()))}};
    entry["shape"] = std::vector<int64_t>(t.shape().begin(), t.shape().end());
    entry["pieces"] = nlohmann::json::array({{{"file", rank_file(0, size)}, {"rows", {0, t.dim() == 0 ? 1 : t.size(0)}}}});
    tensors.push_back(entry);
  }
  // A tensor split as parameter `p` is: `local` holds this rank's rows. `state`: optimizer state,
  // marked so that load() splits it again only where its parameter is sharded.
  void rows(const std::string& name, const Tensor& local, const ShardedParam& p, bool state) {
    if (p.local_rows > 0) mine.insert(name, local.detach());
    nlohmann::json entry = {{"name", name}, {"dtype", std::string(dtype_name(local.dtype()))}};
    entry["shape"] = std::vector<int64_t>(p.full_shape.begin(), p.full_shape.end());
    entry["pieces"] = nlohmann::json::array();
    for (int r = 0; r < size; ++r) {
      const auto [first, count] = ShardedParam::rows_of(p.rows, size, r);
      if (count > 0) entry["pieces"].push_back({{"file", rank_file(r, size)}, {"rows", {first, first + count}}});
    }
    if (state) entry["rows_of_parameter"] = true;
    tensors.push_back(entry);
  }
};

// The optimizer's state keys are "<parameter index>.<name>" (Optimizer::state_dict); the
// index, or none for the optimizer's own entries ("step", "param_groups...").
std::optional<size_t> parameter_of(const std::string& key, size_t count) {
  const size_t dot = key.find('.');
  if (dot == 0 || dot == std::string::npos || key.find_first_not_of("0123456789") != dot) return std::nullopt;
  const size_t i = std::stoul(key.substr(0, dot));
  return i < count ? std::optional<size_t>(i) : std::nullopt;
}

constexpr const char* kOptimizerPrefix = "optim.";

void save_state(const nn::Module& module, const optim::Optimizer* optimizer, const std::string& directory) {
  const auto sharded = sharded_parameters(module);
  ProcessGroup* group = group_of(module);
  Writer w{group ? group->rank() : 0, group ? group->size() : 1, {}};
  const std::filesystem::path dir(directory);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IOError("checkpoint::save: could not create " + directory + ": " + ec.message());
  for (const auto& [name, t] : module.state_dict()) {
    const auto it = sharded.find(name);
    if (it == sharded.end()) w.whole(name, t);
    else w.rows(name, it->second.param->shard, *it->second.param, false);
  }
  if (optimizer) {
    const std::vector<Tensor>& params = optimizer->params();
    for (const auto& [key, t] : optimizer->state_dict()) {
      const auto i = parameter_of(key, params.size());
      const ShardedParam* p = i ? detail::find_shard(params[*i]).first : nullptr;
      // A state tensor of the shard's shape (Adam's moments, momentum) is split as the shard is.
      if (p && t.dim() > 0 && t.shape() == p->shard.shape()) w.rows(kOptimizerPrefix + key, t, *p, true);
      else w.whole(kOptimizerPrefix + key, t);
    }
  }
  locus::save(w.mine, (dir / rank_file(w.rank, w.size)).string());
  if (w.rank == 0) {
    const nlohmann::json index = {
        {"format", "locus-sharded-checkpoint"}, {"version", 1}, {"world_size", w.size}, {"tensors", w.tensors}};
    write_atomically(dir / "index.json", index.dump(1));
  }
  if (group) group->barrier()->wait();
}

// What load() reads: the index, and the rows of a tensor from whichever files hold them.
class Reader {
 public:
  explicit Reader(const std::string& directory) : name_(directory), dir_(directory), index_(read_index(dir_, order_)) {}
  const std::vector<std::string>& order() const noexcept { return order_; }
  bool has(const std::string& name) const { return index_.count(name) != 0; }
  const IndexEntry& entry(const std::string& name) const { return index_.at(name); }
  const std::string& directory() const noexcept { return name_; }

  // Rows [first, first + count) of tensor `name`, as [count, the rest of its shape] (a 0-dim
  // tensor is one row).
  Tensor rows(const std::string& name, int64_t first, int64_t count) {
    const IndexEntry& e = index_.at(name);
    std::vector<int64_t> dims{count};
    for (size_t d = 1; d < e.shape.size(); ++d) dims.push_back(e.shape[d]);
    // Every piece is checked against its file before anything is allocated, so the rows taken
    // are rows that exist: an index cannot make this allocate more than the files hold.
    struct Part {
      Tensor stored;
      int64_t from, to, piece_first;
    };
    std::vector<Part> parts;
    int64_t covered = 0;
    for (const IndexEntry::Piece& piece : e.pieces) {
      const int64_t from = std::max(first, piece.first), to = std::min(first + count, piece.end);
      if (from >= to) continue;
      const auto& values = file(piece.file);
      if (!values.contains(name))
        throw IOError("checkpoint::load: " + (dir_ / piece.file).string() + " lacks '" + name + "', which index.json puts there");
      Tensor stored = values[name];
      if (stored.dim() == 0) stored = stored.reshape({1});
      bool same = stored.dim() == static_cast<int64_t>(dims.size()) && stored.size(0) == piece.end - piece.first &&
                  stored.dtype() == e.dtype;
      for (size_t d = 1; same && d < dims.size(); ++d) same = stored.size(static_cast<int64_t>(d)) == dims[d];
      if (!same)
        throw IOError("checkpoint::load: '" + name + "' in " + (dir_ / piece.file).string() + " does not match index.json");
      parts.push_back({stored, from, to, piece.first});
      covered += to - from;
    }
    if (covered != count) throw IOError("checkpoint::load: the pieces of '" + name + "' in " + name_ + " do not cover its rows");
    Tensor out = empty(Shape(dims), TensorOptions().dtype(e.dtype));
    for (const Part& p : parts)
      out.narrow(0, p.from - first, p.to - p.from).copy_(p.stored.narrow(0, p.from - p.piece_first, p.to - p.from));
    return out;
  }
  // The whole tensor.
  Tensor whole(const std::string& name) {
    const IndexEntry& e = index_.at(name);
    return rows(name, 0, e.shape.size() == 0 ? 1 : e.shape[0]).view(e.shape);
  }

 private:
  const OrderedDict<std::string, Tensor>& file(const std::string& name) {
    auto it = files_.find(name);
    if (it == files_.end()) it = files_.emplace(name, locus::load((dir_ / name).string())).first;
    return it->second;
  }
  std::string name_;
  std::filesystem::path dir_;
  std::vector<std::string> order_;
  std::map<std::string, IndexEntry> index_;
  std::map<std::string, OrderedDict<std::string, Tensor>> files_;  // read once each
};

bool is_optimizer_entry(const std::string& name) { return name.rfind(kOptimizerPrefix, 0) == 0; }

// This rank's part of every tensor of the module, checked against the checkpoint.
OrderedDict<std::string, Tensor> read_module_state(const nn::Module& module, Reader& reader) {
  const auto sharded = sharded_parameters(module);
  std::string missing, unexpected;
  const OrderedDict<std::string, Tensor> own = module.state_dict();
  for (const auto& [name, t] : own)
    if (!reader.has(name)) missing += (missing.empty() ? "\"" : ", \"") + name + "\"";
  for (const std::string& name : reader.order())
    if (!is_optimizer_entry(name) && !own.contains(name)) unexpected += (unexpected.empty() ? "\"" : ", \"") + name + "\"";
  if (!missing.empty() || !unexpected.empty())
    throw ValueError("checkpoint::load: " + reader.directory() + " and " + module.name() + " do not hold the same tensors:" +
                     (missing.empty() ? "" : " missing from the checkpoint: " + missing + ";") +
                     (unexpected.empty() ? "" : " not in the model: " + unexpected + ";"));
  OrderedDict<std::string, Tensor> local;
  for (const auto& [name, t] : own) {
    const IndexEntry& e = reader.entry(name);
    const auto it = sharded.find(name);
    const Shape want = it == sharded.end() ? t.shape() : it->second.param->full_shape;
    if (!(e.shape == want))
      throw ShapeError("checkpoint::load: '" + name + "' is " + shape_text(e.shape) + " in " + reader.directory() + " but " +
                       shape_text(want) + " in the model");
    if (it == sharded.end()) local.insert(name, reader.whole(name));
    else local.insert(name, reader.rows(name, it->second.param->first_row, it->second.param->local_rows));
  }
  return local;
}

// The optimizer's state, each split state tensor cut to the rows its parameter holds now.
std::map<std::string, Tensor> read_optimizer_state(const optim::Optimizer& optimizer, Reader& reader) {
  std::map<std::string, Tensor> state;
  const std::vector<Tensor>& params = optimizer.params();
  for (const std::string& name : reader.order()) {
    if (!is_optimizer_entry(name)) continue;
    const std::string key = name.substr(std::string(kOptimizerPrefix).size());
    const IndexEntry& e = reader.entry(name);
    const auto i = parameter_of(key, params.size());
    const ShardedParam* p = i && e.split ? detail::find_shard(params[*i]).first : nullptr;
    if (!p) {
      state[key] = reader.whole(name);
      continue;
    }
    if (!(e.shape == p->full_shape))
      throw ShapeError("checkpoint::load: optimizer state '" + key + "' is " + shape_text(e.shape) + " in " +
                       reader.directory() + " but its parameter is " + shape_text(p->full_shape));
    state[key] = reader.rows(name, p->first_row, p->local_rows).view(p->shard.shape());
  }
  if (state.empty())
    throw ValueError("checkpoint::load: " + reader.directory() + " holds no optimizer state (it was saved without an optimizer)");
  return state;
}

}  // namespace

void save(const nn::Module& module, const std::string& directory) { save_state(module, nullptr, directory); }

void save(const nn::Module& module, const optim::Optimizer& optimizer, const std::string& directory) {
  save_state(module, &optimizer, directory);
}

void load(nn::Module& module, const std::string& directory) {
  Reader reader(directory);
  NoGradGuard no_grad;
  const OrderedDict<std::string, Tensor> local = read_module_state(module, reader);
  module.load_state_dict(local, /*strict=*/true);
}

void load(nn::Module& module, optim::Optimizer& optimizer, const std::string& directory) {
  Reader reader(directory);
  NoGradGuard no_grad;
  // Everything is read and checked before either changes; the optimizer, whose groups may not
  // match, first.
  const OrderedDict<std::string, Tensor> local = read_module_state(module, reader);
  const std::map<std::string, Tensor> state = read_optimizer_state(optimizer, reader);
  optimizer.load_state_dict(state);
  module.load_state_dict(local, /*strict=*/true);
}

}  // namespace checkpoint

}  // namespace locus::distributed
