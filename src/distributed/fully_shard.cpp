// Note [Sharded units]
// fully_shard(module) makes the module a unit: the parameters it holds that no unit inside it
// took already. Each parameter keeps its tensor (the layer's member, `full`), but the module's
// parameter list names a new leaf instead, this rank's rows (`shard`): what the optimizer is
// built on, steps and keeps state for. Between uses `full` is an empty tensor. A forward hook
// on the module gathers the rows of every rank into whole values before its forward (one
// all-gather of a flat buffer per unit) and points `full` at them; `full` is a leaf, so
// backward adds the layer's gradient into full.grad(), and a hook after each accumulation
// counts down to the unit's last one; then the unit's whole gradients go into one flat buffer
// that a reduce-scatter averages over the ranks, and each rank adds its rows into shard.grad().
//
// The outermost unit whose forward runs leads an Iteration: the order its units ran in (their
// reduce-scatters start in the reverse order, the same on every rank whatever order their
// gradients become final in, as DDP's buckets), how many accumulations each parameter will get
// (counted on the graph the forward recorded), and which units are ready. The last hook to
// make a unit ready waits for every reduce-scatter, so backward() returns with the shards'
// gradients final, as with DDP.
//
// The strategies differ only in when the whole values are freed and when gradients are reduced:
// FullShard frees after each forward (gathering again from a hook on the unit's outputs, which
// fires before any of the unit's own backward runs) and after backward; ShardGradOp keeps them
// from forward through backward; ShardOptimizerState keeps them, and reduces every unit only
// when the whole backward is done. Prefetch: when a unit starts, the all-gather of the one after
// it (in the last iteration's order; in backward, the one before it) is started too, and runs
// on the group's worker while this one computes.
//
// Note [Shard geometry]
// A parameter of d0 rows (a 0-dim one: one row) is split as torch.chunk splits it: rank r holds
// rows [r * ceil(d0 / size), ...), the last ranks fewer or none. Every rank's slot in the flat
// buffers is ceil(d0 / size) rows, padded with zeros, so the collectives move equal parts.
//
// Note [Resharding in place]
// Backward holds the gathered values the forward used (a layer saves its weight), so dropping
// `full`'s handle would free nothing. Resharding after forward therefore takes the memory out
// of the buffer itself (Storage::take_data), and the gather before backward puts new memory
// with the same values back into that same buffer (replace_data): the saved tensors read
// correct values, and the version counters, which track writes, stay as they were.

#include "locus/distributed/fully_shard.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/leaf_accumulations.h"
#include "src/distributed/default_group_handle.h"
#include "src/distributed/sharded_unit.h"

namespace locus::distributed {
namespace detail {
namespace {

std::mutex g_registry_mutex;
std::unordered_map<const nn::Module*, std::weak_ptr<ShardedUnit>> g_units;
std::unordered_map<const locus::detail::TensorImpl*, std::pair<std::weak_ptr<ShardedUnit>, size_t>> g_shards;

Tensor placeholder(DType dtype, Device device) { return empty({0}, TensorOptions().dtype(dtype).device(device)); }

std::string unit_name(const ShardedUnit& unit) {
  const auto module = unit.module.lock();
  return module ? module->name() : "(a module that is gone)";
}

// The hooks' side: forward, backward, iteration bookkeeping.
void pre_forward(ShardedUnit& unit, std::vector<Tensor>& inputs);
void post_forward(ShardedUnit& unit, std::vector<Tensor>& outputs);
void pre_backward(ShardedUnit& unit);
void on_gradient(ShardedUnit& unit, size_t k);

}  // namespace

std::pair<int64_t, int64_t> ShardedParam::rows_of(int64_t rows, int64_t size, int64_t r) {
  const int64_t per = (rows + size - 1) / size;
  const int64_t first = std::min(rows, r * per);
  return {first, std::min(rows, first + per) - first};
}

std::pair<const ShardedParam*, const ShardedUnit*> find_shard(const Tensor& parameter) {
  if (!parameter.defined()) return {nullptr, nullptr};
  std::shared_ptr<ShardedUnit> unit;
  size_t k = 0;
  {
    std::lock_guard lock(g_registry_mutex);
    const auto it = g_shards.find(parameter.impl());
    if (it == g_shards.end()) return {nullptr, nullptr};
    unit = it->second.first.lock();
    k = it->second.second;
  }
  if (!unit) return {nullptr, nullptr};
  // The unit outlives this call: the module that owns it holds it through its hooks.
  return {&unit->params[k], unit.get()};
}

std::vector<std::shared_ptr<ShardedUnit>> units_within(const nn::Module& module) {
  std::vector<std::shared_ptr<ShardedUnit>> out;
  std::lock_guard lock(g_registry_mutex);
  const auto add = [&](const nn::Module* m) {
    const auto it = g_units.find(m);
    if (it != g_units.end())
      if (auto u = it->second.lock()) out.push_back(std::move(u));
  };
  add(&module);
  for (const auto& [name, m] : module.named_modules("", /*include_self=*/false)) add(m.get());
  return out;
}

ShardedUnit::~ShardedUnit() {
  for (ShardedParam& p : params)
    if (p.hook) p.full.remove_post_accumulate_grad_hook(p.hook);
  for (const auto& w : {gather_work, reduce_work})
    if (w) try {
        w->wait();
      } catch (...) {  // a destructor must not throw; the error was the caller's to see
      }
  std::lock_guard lock(g_registry_mutex);
  for (const ShardedParam& p : params) g_shards.erase(p.shard.impl());
  for (auto it = g_units.begin(); it != g_units.end();) it = it->second.expired() ? g_units.erase(it) : std::next(it);
}

void ShardedUnit::start_gather() {
  if (phase != Phase::Sharded) return;
  NoGradGuard no_grad;
  const TensorOptions opts = TensorOptions().dtype(compute_dtype).device(device);
  Tensor send = empty({flat_numel}, opts);
  for (const ShardedParam& p : params) {
    Tensor slot = send.narrow(0, p.offset, p.slot_numel());
    const int64_t mine = p.local_rows * p.row_numel;
    if (mine > 0) slot.narrow(0, 0, mine).copy_(p.shard.detach().reshape({-1}));
    if (mine < p.slot_numel()) slot.narrow(0, mine, p.slot_numel() - mine).zero_();
  }
  gathered = empty({group->size() * flat_numel}, opts);
  // Every rank has the same flat_numel: a unit with no parameters of its own (a root that only
  // holds sharded blocks) moves nothing, on every rank.
  if (flat_numel > 0) gather_work = group->all_gather_into_tensor(gathered, send);
  phase = Phase::Gathering;
}

void ShardedUnit::finish_gather() {
  if (phase == Phase::Gathered) return;
  start_gather();
  NoGradGuard no_grad;
  std::shared_ptr<Work> work = std::move(gather_work);
  Tensor all = std::move(gathered);
  phase = Phase::Sharded;  // until the values are in place; a failed wait leaves the unit sharded
  if (work) work->wait();
  const int64_t size = group->size();
  const Tensor by_rank = all.view({size, flat_numel});
  for (ShardedParam& p : params) {
    // Every rank's slot in a row of its own, then the padding cut off (Note [Shard geometry]).
    Tensor whole = empty({size * p.slot_numel()}, TensorOptions().dtype(compute_dtype).device(device));
    whole.view({size, p.slot_numel()}).copy_(by_rank.narrow(1, p.offset, p.slot_numel()));
    Tensor values = whole.narrow(0, 0, p.rows * p.row_numel).view(p.full_shape);
    if (p.forward_view.defined() && p.forward_view.impl()->storage()->nbytes() == 0) {
      // Note [Resharding in place]: backward's saved tensors view this buffer.
      locus::detail::Storage& held = *p.forward_view.impl()->storage();
      locus::detail::Storage& fresh = *whole.impl()->storage();
      const size_t nbytes = fresh.nbytes();
      held.replace_data(fresh.take_data(), nbytes);
    } else {
      p.forward_view = values;
    }
    p.full.set_data(p.forward_view);
  }
  phase = Phase::Gathered;
}

void ShardedUnit::reshard(bool after_forward) {
  if (phase == Phase::Gathering) {
    if (gather_work) gather_work->wait();
    gather_work.reset();
    gathered = Tensor();
    phase = Phase::Sharded;
  }
  if (phase != Phase::Gathered) return;
  for (ShardedParam& p : params) {
    if (after_forward) {
      // Note [Resharding in place]: free the memory, keep the buffer backward holds.
      if (p.forward_view.defined()) p.forward_view.impl()->storage()->take_data();
    } else {
      p.forward_view = Tensor();
    }
    p.full.set_data(placeholder(compute_dtype, device));
  }
  phase = Phase::Sharded;
}

void ShardedUnit::start_reduce() {
  if (!sync) return;  // the whole gradients stay and accumulate (set_requires_gradient_sync)
  NoGradGuard no_grad;
  const int64_t size = group->size();
  const TensorOptions opts = TensorOptions().dtype(reduce_dtype).device(device);
  Tensor input = empty({size, flat_numel}, opts);
  for (ShardedParam& p : params) {
    Tensor slots = input.narrow(1, p.offset, p.slot_numel());
    const Tensor g = p.full.grad();
    if (!g.defined()) {
      slots.zero_();
      continue;
    }
    const int64_t numel = p.rows * p.row_numel;
    if (numel == size * p.slot_numel()) {
      slots.copy_(g.reshape({size, p.slot_numel()}));
    } else {
      Tensor padded = zeros({size * p.slot_numel()}, opts);
      padded.narrow(0, 0, numel).copy_(g.reshape({-1}));
      slots.copy_(padded.view({size, p.slot_numel()}));
    }
    p.full.set_grad(Tensor());
  }
  // The shards' gradients are views of this buffer; the last step's is used again once nothing
  // else holds it (zero_grad dropped the gradients), so the gradients take the same memory
  // every step instead of new blocks among the transient ones of backward (fragmentation).
  const bool reusable = grad_buffer.defined() && grad_buffer.impl()->storage()->use_count() == 1 &&
                        grad_buffer.impl()->use_count() == 1 && grad_buffer.dtype() == reduce_dtype;
  reduced = reusable ? grad_buffer : empty({flat_numel}, opts);
  grad_buffer = reduced;
  if (flat_numel > 0) reduce_work = group->reduce_scatter_tensor(reduced, input, ReduceOp::Avg);
}

void ShardedUnit::finish_reduce() {
  if (!reduce_work) return;
  NoGradGuard no_grad;
  std::shared_ptr<Work> work = std::move(reduce_work);
  Tensor out = std::move(reduced);
  work->wait();
  for (ShardedParam& p : params) {
    if (!p.shard.requires_grad()) continue;
    Tensor mine = out.narrow(0, p.offset, p.local_rows * p.row_numel).view(p.shard.shape()).to(p.shard.dtype());
    const Tensor had = p.shard.grad();
    if (had.defined()) Tensor(had).add_(mine);
    else p.shard.set_grad(mine);
  }
}

namespace {

// The root's forward starts an iteration: whatever the last one left (a backward that never ran
// or did not reach every unit) is waited for and dropped, so the ranks stay in step, and
// parameters still whole from the last step are gathered again: the optimizer changed the
// shards since.
void begin_iteration(ShardedUnit& root) {
  if (!root.iteration) root.iteration = std::make_shared<Iteration>();
  Iteration& it = *root.iteration;
  const auto module = root.module.lock();
  for (const auto& u : module ? units_within(*module) : std::vector<std::shared_ptr<ShardedUnit>>{}) {
    if (u->reduce_work) {
      std::shared_ptr<Work> work = std::move(u->reduce_work);
      u->reduced = Tensor();
      work->wait();
    }
    u->reshard();
    for (ShardedParam& p : u->params) p.pending = 0;
    u->pending_params = 0;
    u->iteration = root.iteration;
  }
  if (!it.order.empty()) it.previous_order = std::move(it.order);
  it.order.clear();
  it.launch_order.clear();
  it.ready = it.launched = 0;
  it.backward_expected = false;
  it.in_forward = true;
}

void prefetch_after(const ShardedUnit& unit, const std::vector<ShardedUnit*>& order, int step) {
  const auto at = std::find(order.begin(), order.end(), &unit);
  if (at == order.end()) return;
  const auto next = at - order.begin() + step;
  if (next >= 0 && next < static_cast<std::ptrdiff_t>(order.size())) order[static_cast<size_t>(next)]->start_gather();
}

void pre_forward(ShardedUnit& unit, std::vector<Tensor>& inputs) {
  const bool root = unit.is_root;
  if (root) begin_iteration(unit);
  else if (!unit.iteration || !unit.iteration->in_forward) {
    if (is_grad_enabled())
      throw ValueError("fully_shard: " + unit_name(unit) +
                       " is inside a sharded module and was called on its own with gradients on; call the outermost "
                       "sharded module, or run it under NoGradGuard");
  }
  if (const auto dtype = unit.options.mp_policy().param_dtype(); dtype && unit.options.mp_policy().cast_forward_inputs())
    for (Tensor& x : inputs)
      if (x.defined() && x.is_floating_point() && x.dtype() != *dtype) x = x.to(*dtype);
  unit.unshard();
  if (unit.iteration && unit.iteration->in_forward) {
    unit.iteration->order.push_back(&unit);
    if (unit.options.prefetch()) prefetch_after(unit, unit.iteration->previous_order, +1);
  }
}

void post_forward(ShardedUnit& unit, std::vector<Tensor>& outputs) {
  if (const auto dtype = unit.options.mp_policy().output_dtype())
    for (Tensor& y : outputs)
      if (y.defined() && y.is_floating_point() && y.dtype() != *dtype) y = y.to(*dtype);
  Iteration* it = unit.iteration.get();
  const bool in_iteration = it && it->in_forward;
  bool backward = false;
  if (is_grad_enabled() && in_iteration)
    for (const Tensor& y : outputs) backward = backward || (y.defined() && y.requires_grad());
  if (backward) {
    std::weak_ptr<ShardedUnit> weak = unit.weak_from_this();
    for (Tensor& y : outputs)
      if (y.defined() && y.requires_grad() && y.impl()->grad_fn())
        y.register_hook([weak](const Tensor&) {
          if (auto u = weak.lock()) pre_backward(*u);
        });
  }
  if (!unit.is_root || !in_iteration) {
    // No backward will come without gradients: free what the strategy frees at all.
    if (backward ? unit.reshard_after_forward : unit.reshard_after_forward || unit.reshard_after_backward)
      unit.reshard(/*after_forward=*/backward);
    return;
  }
  it->in_forward = false;
  if (!backward) {
    for (ShardedUnit* u : it->order)
      if (u->reshard_after_forward || u->reshard_after_backward) u->reshard();
    return;
  }
  // Note [Sharded units]: what backward will add into each parameter, and which units are
  // ready already (nothing of theirs was used).
  const auto uses = autograd::leaf_accumulations(outputs);
  it->launch_order.assign(it->order.rbegin(), it->order.rend());
  for (ShardedUnit* u : it->launch_order) {
    u->pending_params = 0;
    for (ShardedParam& p : u->params) {
      const auto found = uses.find(p.full.impl());
      p.pending = found == uses.end() ? 0 : found->second;
      if (p.pending > 0) ++u->pending_params;
    }
    if (u->pending_params == 0) ++it->ready;
  }
  it->backward_expected = true;
  launch_ready(*it);
}

void pre_backward(ShardedUnit& unit) {
  if (!unit.iteration || !unit.iteration->backward_expected) return;
  unit.unshard();
  // Backward runs the units in reverse: the one before this in forward order is next.
  if (unit.options.prefetch()) prefetch_after(unit, unit.iteration->order, -1);
}

void on_gradient(ShardedUnit& unit, size_t k) {
  Iteration* it = unit.iteration.get();
  ShardedParam& p = unit.params[k];
  if (!it || !it->backward_expected || p.pending == 0) return;
  if (--p.pending > 0 || --unit.pending_params > 0) return;
  ++it->ready;
  launch_ready(*it);
}

}  // namespace

void launch_ready(Iteration& it) {
  const auto launchable = [&](const ShardedUnit& u) {
    return u.pending_params == 0 && (!u.reduce_at_end || it.ready == it.launch_order.size());
  };
  while (it.launched < it.launch_order.size() && launchable(*it.launch_order[it.launched])) {
    ShardedUnit& u = *it.launch_order[it.launched];
    // The whole values are not needed to reduce: freed first, they make room for its buffer.
    if (u.reshard_after_backward) u.reshard();
    // One reduce-scatter in flight at a time, so a worker that falls behind does not pile up
    // one flat buffer of gradients per unit (FSDP2 bounds them the same way).
    if (it.launched > 0) it.launch_order[it.launched - 1]->finish_reduce();
    u.start_reduce();
    ++it.launched;
  }
  if (it.launched < it.launch_order.size()) return;
  it.backward_expected = false;
  for (ShardedUnit* u : it.launch_order) u->finish_reduce();
}

}  // namespace detail

using detail::ShardedParam;
using detail::ShardedUnit;

namespace {

ShardedUnit& checked(const std::shared_ptr<ShardedUnit>& unit) {
  if (!unit || unit->module.expired()) throw ValueError("FSDPModule: the sharded module is gone");
  return *unit;
}

// Rank 0's values on every rank, as DDP starts.
void broadcast_from_rank0(ProcessGroup& group, const Tensor& t) {
  Tensor values = t.detach();
  group.broadcast(values, 0)->wait();
}

}  // namespace

void FSDPModule::unshard() { checked(unit_).unshard(); }
void FSDPModule::reshard() { checked(unit_).reshard(); }
void FSDPModule::set_requires_gradient_sync(bool sync) { checked(unit_).sync = sync; }
nn::Module& FSDPModule::module() const { return *checked(unit_).module.lock(); }
ProcessGroup& FSDPModule::group() const { return *checked(unit_).group; }

bool is_sharded(const Tensor& parameter) { return detail::find_shard(parameter).first != nullptr; }

FSDPModule fully_shard(nn::AnyModule any, std::shared_ptr<ProcessGroup> group, FullyShardOptions options) {
  const std::shared_ptr<nn::Module> module = any.ptr();
  if (!module) throw ValueError("fully_shard: the module is empty");
  if (!group) group = default_group_handle();
  {
    std::lock_guard lock(detail::g_registry_mutex);
    if (const auto it = detail::g_units.find(module.get()); it != detail::g_units.end() && !it->second.expired())
      throw ValueError("fully_shard: " + module->name() + " is sharded already");
  }
  auto unit = std::make_shared<ShardedUnit>();
  unit->module = module;
  unit->group = group;
  unit->options = options;
  switch (options.strategy()) {
    case ShardingStrategy::FullShard:
      unit->reshard_after_forward = options.reshard_after_forward().value_or(true);
      break;
    case ShardingStrategy::ShardGradOp:
      unit->reshard_after_forward = options.reshard_after_forward().value_or(false);
      break;
    case ShardingStrategy::ShardOptimizerState:
      if (options.reshard_after_forward().value_or(false))
        throw ValueError("fully_shard: ShardOptimizerState keeps the parameters whole; reshard_after_forward(true) "
                         "asks for FullShard");
      unit->reshard_after_forward = false;
      unit->reshard_after_backward = false;
      unit->reduce_at_end = true;
      break;
  }

  // This unit's parameters: those no unit inside it took.
  std::vector<std::pair<std::string, Tensor>> mine;
  for (auto& [name, t] : module->named_parameters())
    if (!is_sharded(t)) mine.emplace_back(name, t);
  const bool has_inner_units = detail::units_within(*module).size() > 0;
  if (mine.empty() && !has_inner_units)
    throw ValueError("fully_shard: " + module->name() + " has no parameters to shard");
  for (const auto& [name, t] : mine) {
    if (!t.is_floating_point())
      throw DTypeError("fully_shard: parameter '" + name + "' is " + std::string(dtype_name(t.dtype())) +
                       "; only floating parameters are sharded");
    if (t.dtype() != mine.front().second.dtype())
      throw DTypeError("fully_shard: the parameters of one sharded module must share a dtype, but '" + mine.front().first +
                       "' is " + std::string(dtype_name(mine.front().second.dtype())) + " and '" + name +
                       "' is " + std::string(dtype_name(t.dtype())) + "; convert them or shard the modules that hold them separately");
  }
  const DType own_dtype = mine.empty() ? DType::Float32 : mine.front().second.dtype();
  unit->device = options.device().value_or(mine.empty() ? module->device() : mine.front().second.device());
  unit->compute_dtype = options.mp_policy().param_dtype().value_or(own_dtype);
  unit->reduce_dtype = options.mp_policy().reduce_dtype().value_or(unit->compute_dtype);

  const int64_t size = group->size(), rank = group->rank();
  std::unordered_map<std::string, std::shared_ptr<nn::Module>> owners;
  for (const auto& [name, m] : module->named_modules()) owners[name] = m;
  NoGradGuard no_grad;
  for (const auto& [name, t] : mine) broadcast_from_rank0(*group, t);
  for (const auto& [name, b] : module->named_buffers()) {
    broadcast_from_rank0(*group, b);
    if (b.device() != unit->device) b.set_data(b.detach().to(unit->device));
  }
  for (const auto& [name, t] : mine) {
    ShardedParam p;
    p.name = name;
    p.full = t;
    p.full_shape = t.shape();
    p.rows = t.dim() == 0 ? 1 : t.size(0);
    p.row_numel = t.dim() == 0 ? 1 : t.shape().numel() / std::max<int64_t>(1, t.size(0));
    if (t.dim() > 0 && t.size(0) == 0) {
      p.row_numel = 1;
      for (int64_t d = 1; d < t.dim(); ++d) p.row_numel *= t.size(d);
    }
    p.rows_per_rank = (p.rows + size - 1) / size;
    std::tie(p.first_row, p.local_rows) = ShardedParam::rows_of(p.rows, size, rank);
    p.offset = unit->flat_numel;
    unit->flat_numel += p.slot_numel();
    const Tensor rows = t.dim() == 0 ? t.detach().reshape({1}) : t.detach();
    p.shard = rows.narrow(0, p.first_row, p.local_rows).to(unit->device, false, /*copy=*/true).contiguous();
    if (t.requires_grad()) p.shard.requires_grad_(true);
    const auto dot = name.rfind('.');
    nn::Module& owner = *owners.at(dot == std::string::npos ? "" : name.substr(0, dot));
    owner.replace_registered_parameter(dot == std::string::npos ? name : name.substr(dot + 1), p.shard);
    p.full.set_data(detail::placeholder(unit->compute_dtype, unit->device));
    unit->params.push_back(std::move(p));
  }
  {
    std::lock_guard lock(detail::g_registry_mutex);
    for (size_t k = 0; k < unit->params.size(); ++k) detail::g_shards[unit->params[k].shard.impl()] = {unit, k};
    detail::g_units[module.get()] = unit;
  }
  // The parameters' hooks are removed by the unit's destructor, so a plain pointer does.
  ShardedUnit* raw = unit.get();
  for (size_t k = 0; k < unit->params.size(); ++k)
    if (unit->params[k].full.requires_grad())
      unit->params[k].hook =
          unit->params[k].full.register_post_accumulate_grad_hook([raw, k](const Tensor&) { detail::on_gradient(*raw, k); });
  // The module owns its unit through its forward hooks (the unit holds the module weakly), so
  // the unit lives as long as the module, whether or not the caller keeps the FSDPModule.
  module->register_forward_pre_hook([unit](nn::Module&, std::vector<Tensor>& inputs) { detail::pre_forward(*unit, inputs); });
  module->register_forward_hook([raw](nn::Module&, const std::vector<Tensor>&, std::vector<Tensor>& outputs) {
    detail::post_forward(*raw, outputs);
  });
  // This unit is outermost until a fully_shard on a module around it says otherwise.
  unit->is_root = true;
  for (const auto& inner : detail::units_within(*module))
    if (inner != unit) inner->is_root = false;
  return FSDPModule(unit);
}

}  // namespace locus::distributed
