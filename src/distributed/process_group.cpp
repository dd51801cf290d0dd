// The default group and the free functions of torch.distributed, over the groups the engines
// make (gloo here, nccl and mpi in their modules).
//
// Note [Collective volume]
// Every group counts, per rank, the collectives it issues and their data volume in the units the
// ZeRO and FSDP papers reason in, so a training step's traffic reads directly against the model's
// parameter bytes P: DDP all-reduces its gradients (2P), full sharding all-gathers the parameters
// twice and reduce-scatters the gradients once (3P). all_gather counts its output, reduce_scatter
// its input, all_reduce twice its tensor, broadcast its tensor. What crosses one rank's link in a
// ring is (size - 1) / size of that; engines that move more (Gloo has no reduce-scatter of
// separate tensors and all-reduces them) say so where they do it.

#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "locus/autograd.h"
#include "locus/cuda.h"
#include "locus/distributed.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/distributed/caller_waits.h"
#include "src/distributed/collective_arguments.h"
#include "src/distributed/rendezvous_address.h"
#if LOCUS_WITH_GLOO
#include "src/distributed/gloo/gloo_process_group.h"
#endif
#include "src/distributed/mpi_module.h"
#include "src/distributed/nccl_module.h"
#include "src/runtime/backend_module.h"
#if LOCUS_MPI_LINKED
#include "src/distributed/mpi/mpi_process_group.h"
#endif
#if LOCUS_NCCL_LINKED
#include "src/distributed/nccl/nccl_process_group.h"
#endif

namespace locus::distributed {
namespace {

std::mutex g_mutex;
std::shared_ptr<ProcessGroup> g_default;

class DoneWork final : public Work {
 public:
  void wait() override {}
  bool is_completed() override { return true; }
};

// Issues the collective `call` makes; a synchronous one is waited for (and run) here.
template <class Call>
std::shared_ptr<Work> issue(bool async_op, Call&& call) {
  if (async_op) return call();
  std::shared_ptr<Work> work;
  {
    CallerWaits hint;
    work = call();
  }
  work->wait();
  return std::make_shared<DoneWork>();
}

thread_local bool t_caller_waits = false;

// An engine that lives in a backend module (Note [Backend modules]): its group factory, or why
// there is none.
template <class Factory>
struct ModuleEngine {
  Factory make = nullptr;
  std::string reason;  // why `make` is null
};

// Looks up module `name` and reads the factory it provides.
template <class Factory>
ModuleEngine<Factory> load_engine(const char* name) {
  ModuleEngine<Factory> found;
  const runtime::ModuleLookup module = runtime::load_backend_module(name);
  if (module.provides) found.make = *static_cast<const Factory*>(module.provides);
  else found.reason = module.reason;
  return found;
}

// The NCCL engine: linked into a static Locus, otherwise a module loaded on first use.
const ModuleEngine<NcclGroupFactory>& nccl_backend() {
  static const ModuleEngine<NcclGroupFactory> backend = [] {
    ModuleEngine<NcclGroupFactory> found;
#if LOCUS_NCCL_LINKED
    found.make = &make_nccl_group;
#elif !LOCUS_BACKEND_MODULES
    found.reason = "built without NCCL (a static Locus links NCCL in only where the CUDA toolkit has it)";
#else
    // NCCL runs on cuda devices only; without them its module (and NCCL's libraries) stay out
    // of the process.
    if (!cuda::is_available()) {
      found.reason = "NCCL needs cuda devices, and cuda is not available: " + cuda::unavailable_reason();
      return found;
    }
    found = load_engine<NcclGroupFactory>("nccl");
#endif
    return found;
  }();
  return backend;
}

// The MPI engine: linked into a static Locus, otherwise a module loaded the first time mpi is
// asked for, so that Open MPI's libraries map only into the processes that use it.
const ModuleEngine<MpiGroupFactory>& mpi_backend() {
  static const ModuleEngine<MpiGroupFactory> backend = [] {
    ModuleEngine<MpiGroupFactory> found;
#if LOCUS_MPI_LINKED
    found.make = &make_mpi_group;
#elif !LOCUS_WITH_MPI
    found.reason = "built without MPI (install libopenmpi-dev and openmpi-bin, and rebuild; gloo carries the same "
                   "tensors without MPI)";
#else
    found = load_engine<MpiGroupFactory>("mpi");
#endif
    return found;
  }();
  return backend;
}

// A rank or size the caller gave (GroupOptions, else the environment variable `var` when set),
// checked against MPI's numbering: ValueError naming both when they differ.
void check_given_place(int mpi_value, int option, const char* option_name, const char* var, const ProcessGroup& g,
                       const std::string& name) {
  std::string given;
  int value = option;
  if (option >= 0) {
    given = std::string("GroupOptions().") + option_name + "(" + std::to_string(option) + ")";
  } else if (const char* v = std::getenv(var); v && *v) {
    value = rank_variable(-1, var);
    given = std::string(var) + "=" + v;
  } else {
    return;
  }
  if (value != mpi_value)
    throw ValueError("init_process_group: " + given + ", but MPI started this process as rank " + std::to_string(g.rank()) +
                     " of " + std::to_string(g.size()) + " (process group '" + name +
                     "'); under mpirun the ranks are MPI's: leave the " + option_name + " out or make it agree");
}

// An mpi group: MPI knows the ranks, so no store; what the caller said is checked against it.
std::shared_ptr<ProcessGroup> make_mpi(const GroupOptions& options) {
  std::shared_ptr<ProcessGroup> g = mpi_backend().make(options.timeout(), options.name());
  check_given_place(g->rank(), options.rank(), "rank", "RANK", *g, options.name());
  check_given_place(g->size(), options.world_size(), "world_size", "WORLD_SIZE", *g, options.name());
  return g;
}

}  // namespace

// Note [List collectives]
// Every engine implements the flat collectives, one buffer in and one out, which is what their
// libraries offer; the list forms are those plus a concatenation before (reduce_scatter) or a
// copy into the outputs once the collective is complete (all_gather), done here once for all.
class CopyOutWork final : public Work {
 public:
  CopyOutWork(std::shared_ptr<Work> gather, std::function<void()> copy_out)
      : gather_(std::move(gather)), copy_out_(std::move(copy_out)) {}
  void wait() override {
    gather_->wait();
    finish();
  }
  bool is_completed() override {
    if (!gather_->is_completed()) return false;
    finish();  // a completed gather whose outputs are not filled yet is not complete
    return true;
  }

 private:
  void finish() {
    std::call_once(copied_, [this] {
      gather_->wait();  // rethrows a failure instead of copying garbage
      copy_out_();
    });
  }
  std::shared_ptr<Work> gather_;
  std::function<void()> copy_out_;
  std::once_flag copied_;
};

std::shared_ptr<Work> ProcessGroup::all_gather(std::vector<Tensor>& outputs, const Tensor& input) {
  check_defined(input, "all_gather");
  check_parts(outputs, input, size(), "all_gather", "outputs");
  Tensor flat = empty({size() * input.numel()}, TensorOptions().dtype(input.dtype()).device(input.device()));
  auto gather = all_gather_into_tensor(flat, input.is_contiguous() ? input : input.contiguous());
  return std::make_shared<CopyOutWork>(std::move(gather), [flat, outs = outputs, n = input.numel(), shape = input.shape()] {
    NoGradGuard no_grad;
    for (size_t r = 0; r < outs.size(); ++r)
      outs[r].detach().copy_(flat.narrow(0, static_cast<int64_t>(r) * n, n).view(shape));
  });
}

std::shared_ptr<Work> ProcessGroup::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
  check_defined(output, "reduce_scatter");
  check_parts(inputs, output, size(), "reduce_scatter", "inputs");
  check_reduce_op(op, output, "reduce_scatter");
  NoGradGuard no_grad;
  std::vector<Tensor> flat;
  for (const Tensor& t : inputs) flat.push_back(t.detach().reshape({-1}));
  Tensor all = cat(flat, 0);
  return reduce_scatter_tensor(output, all, op);
}

bool caller_waits() noexcept { return t_caller_waits; }
CallerWaits::CallerWaits() noexcept : previous_(t_caller_waits) { t_caller_waits = true; }
CallerWaits::~CallerWaits() { t_caller_waits = previous_; }

std::string unavailable_reason(const std::string& backend) {
  if (backend == "gloo") return LOCUS_WITH_GLOO ? "" : "built without Gloo (install libgloo-dev and rebuild)";
  if (backend == "nccl") {
    if (!LOCUS_WITH_GLOO) return "built without Gloo, whose rendezvous store NCCL meets its peers through";
    return nccl_backend().reason;
  }
  if (backend == "mpi") return mpi_backend().reason;
  return "unknown distributed backend '" + backend + "': use gloo, nccl or mpi";
}

bool is_available(const std::string& backend) { return unavailable_reason(backend).empty(); }

std::shared_ptr<ProcessGroup> new_group(const std::string& backend, GroupOptions options) {
  if (backend != "gloo" && backend != "nccl" && backend != "mpi")
    throw ValueError("unknown distributed backend '" + backend + "': use gloo, nccl or mpi");
  if (!is_available(backend)) {
    if (backend == "nccl" || backend == "mpi")
      throw BackendUnavailableError("the distributed backend '" + backend + "' is not available: " + unavailable_reason(backend));
    throw BackendUnavailableError("the distributed backend 'gloo' is not built into this Locus (install libgloo-dev and rebuild)");
  }
  if (backend == "mpi") return make_mpi(options);  // no store: MPI knows the ranks
  const int rank = rank_variable(options.rank(), "RANK");
  const int size = rank_variable(options.world_size(), "WORLD_SIZE");
  if (size < 1 || rank >= size)
    throw ValueError("init_process_group: rank " + std::to_string(rank) + " is not in a world of size " + std::to_string(size));
  std::string store = options.store();
  if (store.empty())
    if (const char* env = std::getenv("LOCUS_STORE")) store = env;
  if (store.empty())
    throw ValueError("init_process_group: no rendezvous store: set LOCUS_STORE=file:///a/shared/dir or redis://host:port "
                     "(`locus run` sets it), or pass GroupOptions().store(...)");
  if (backend == "nccl") return nccl_backend().make(store, rank, size, options.timeout(), options.name(), options.device());
#if LOCUS_WITH_GLOO
  return make_gloo_group(store, rank, size, options.timeout(), options.name());
#else
  throw BackendUnavailableError("the distributed backend 'gloo' is not built into this Locus");
#endif
}

void init_process_group(const std::string& backend, GroupOptions options) {
  std::lock_guard lock(g_mutex);
  if (g_default) throw ValueError("init_process_group: the default process group is already initialized");
  g_default = new_group(backend, std::move(options));
}

bool is_initialized() noexcept {
  std::lock_guard lock(g_mutex);
  return g_default != nullptr;
}

void destroy_process_group() {
  std::lock_guard lock(g_mutex);
  g_default.reset();
}

ProcessGroup& default_group() {
  std::lock_guard lock(g_mutex);
  if (!g_default) throw ValueError("the default process group is not initialized: call distributed::init_process_group first");
  return *g_default;
}

int get_rank() { return default_group().rank(); }
int get_world_size() { return default_group().size(); }
int get_local_rank() {
  const char* v = std::getenv("LOCAL_RANK");
  return v && *v ? rank_variable(-1, "LOCAL_RANK") : 0;
}

std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op, bool async_op) {
  return issue(async_op, [&] { return default_group().all_reduce(tensor, op); });
}
std::shared_ptr<Work> broadcast(Tensor& tensor, int root, bool async_op) {
  return issue(async_op, [&] { return default_group().broadcast(tensor, root); });
}
std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input, bool async_op) {
  return issue(async_op, [&] { return default_group().all_gather(outputs, input); });
}
std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op, bool async_op) {
  return issue(async_op, [&] { return default_group().reduce_scatter(output, inputs, op); });
}
std::shared_ptr<Work> barrier(bool async_op) {
  return issue(async_op, [&] { return default_group().barrier(); });
}
std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op) {
  return issue(async_op, [&] { return default_group().all_gather_into_tensor(output, input); });
}
std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op, bool async_op) {
  return issue(async_op, [&] { return default_group().reduce_scatter_tensor(output, input, op); });
}

}  // namespace locus::distributed
