// The default group and the free functions of torch.distributed, over the groups the engines
// make (gloo here).

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "locus/distributed.h"
#include "locus/errors.h"
#include "src/distributed/caller_waits.h"
#include "src/distributed/rendezvous_address.h"
#if LOCUS_WITH_GLOO
#include "src/distributed/gloo/gloo_process_group.h"
#endif
#if LOCUS_WITH_NCCL
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

}  // namespace

bool caller_waits() noexcept { return t_caller_waits; }
CallerWaits::CallerWaits() noexcept : previous_(t_caller_waits) { t_caller_waits = true; }
CallerWaits::~CallerWaits() { t_caller_waits = previous_; }

bool is_available(const std::string& backend) {
#if LOCUS_WITH_GLOO
  if (backend == "gloo") return true;
#endif
#if LOCUS_WITH_NCCL
  if (backend == "nccl") return true;
#endif
  return false;
}

std::shared_ptr<ProcessGroup> new_group(const std::string& backend, GroupOptions options) {
  if (backend != "gloo" && backend != "nccl" && backend != "mpi")
    throw ValueError("unknown distributed backend '" + backend + "': use gloo, nccl or mpi");
  if (!is_available(backend))
    throw BackendUnavailableError("the distributed backend '" + backend + "' is not built into this Locus" +
                                  (backend == "gloo"   ? " (install libgloo-dev and rebuild)"
                                   : backend == "nccl" ? " (it needs the CUDA toolkit's NCCL and Gloo at build time)"
                                                       : " (use gloo for cpu tensors, nccl for cuda tensors)"));
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
#if LOCUS_WITH_NCCL
  if (backend == "nccl") return make_nccl_group(store, rank, size, options.timeout(), options.name(), options.device());
#endif
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

}  // namespace locus::distributed
