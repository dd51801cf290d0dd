#pragma once
/// \file distributed.h
/// Several processes training one model (torch.distributed): process groups over an existing
/// engine (Gloo for tensors on any device, through the host; NCCL for cuda tensors; Open MPI for
/// tensors on any device, through the host, in a job `mpirun` started), collectives
/// on tensors, the default group that init_process_group sets up from the environment a
/// launcher (`locus run`) sets.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "locus/arg.h"
#include "locus/tensor.h"

namespace locus::distributed {

/// How all_reduce and reduce_scatter combine the ranks' values.
enum class ReduceOp { Sum, Avg, Min, Max, Product };

/// A collective started asynchronously: its tensors must not be touched until wait() returns.
/// wait() rethrows the collective's error (DistributedError on a timeout or a mismatch). For an
/// nccl group, as in PyTorch, wait() makes the caller's current stream wait for the collective
/// and returns without blocking the host (a barrier's wait blocks); a collective that outlives
/// the timeout aborts the group, and the next call on it raises.
class Work {
 public:
  virtual ~Work() = default;
  /// Blocks until the collective is done (nccl: orders the current stream after it); rethrows
  /// its error.
  virtual void wait() = 0;
  /// True once the collective has finished (successfully or not).
  virtual bool is_completed() = 0;
};

/// Options of a process group, by name: `GroupOptions().timeout(std::chrono::seconds(30))`.
struct GroupOptions {
  /// The rendezvous store: "file:///a/shared/dir" (one machine, or a shared file system) or
  /// "redis://host:port"; empty: the LOCUS_STORE environment variable (`locus run` sets it).
  LOCUS_ARG(std::string, store);
  /// This process's rank; -1: the RANK environment variable.
  LOCUS_ARG(int, rank) = -1;
  /// The number of processes; -1: the WORLD_SIZE environment variable.
  LOCUS_ARG(int, world_size) = -1;
  /// How long a collective waits for the other ranks before raising DistributedError
  /// (PyTorch's default for Gloo: 30 minutes). mpi: past it the rank prints the error and the
  /// job ends (MPI_Abort), since MPI cannot abandon a collective.
  LOCUS_ARG(std::chrono::milliseconds, timeout) = std::chrono::minutes(30);
  /// Names the group's keys in the store, so groups sharing a store do not meet by mistake. Use
  /// a name once per store and run (LOCUS_RUN_ID): a group made again under the same name would
  /// read the keys its predecessor left.
  LOCUS_ARG(std::string, name) = "default";
  /// nccl only: the CUDA device index this rank's collectives run on; -1: the current device
  /// when the group is made (call cuda::set_device(local rank) first, as with PyTorch).
  LOCUS_ARG(int, device) = -1;
};

/// What a group's collectives carried, counted on the calling rank since the group was made or
/// reset_stats() (Note [Collective volume] in process_group.cpp).
struct CommunicationStats {
  /// Collectives issued (a barrier included).
  int64_t collectives = 0;
  /// Their data volume in bytes as the ZeRO and FSDP papers count it: all_gather its output,
  /// reduce_scatter its input, all_reduce twice its tensor (a reduce-scatter and an all-gather),
  /// broadcast its tensor. A ring moves (size - 1) / size of that through each rank's link.
  int64_t bytes = 0;
};

/// A set of processes that run collectives together. Collectives run one at a time in the order
/// they are called (gloo: on the group's worker thread, or on a thread waiting for one not yet
/// started; nccl: on the group's stream), and every rank must call the same ones in the same order
/// (LOCUS_DISTRIBUTED_DEBUG=detail checks that, naming the ranks that differ). Tensors may be
/// on any device for gloo, which works on host memory, so device tensors travel through the
/// host; an nccl group takes contiguous tensors on its own CUDA device, and runs the collective
/// on a stream of its own that waits for the caller's current stream.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  /// This process's rank in the group, 0 <= rank < size.
  virtual int rank() const noexcept = 0;
  /// The number of processes.
  virtual int size() const noexcept = 0;
  /// "gloo", "nccl" or "mpi".
  virtual std::string backend() const = 0;
  /// Combines `tensor` over the ranks, in place on every rank. Avg needs a floating dtype.
  virtual std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum) = 0;
  /// Copies rank `root`'s `tensor` into every rank's.
  virtual std::shared_ptr<Work> broadcast(Tensor& tensor, int root = 0) = 0;
  /// Fills outputs[r] with rank r's `input` (size() outputs of input's shape and dtype): the
  /// flat all_gather_into_tensor into one buffer, copied into the outputs when the collective
  /// is waited for (or seen complete).
  virtual std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input);
  /// Combines inputs[r] over the ranks into rank r's `output` (size() inputs of output's shape):
  /// the inputs concatenated, then the flat reduce_scatter_tensor.
  virtual std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                               ReduceOp op = ReduceOp::Sum);
  /// Returns when every rank has called it.
  virtual std::shared_ptr<Work> barrier() = 0;
  /// all_gather into one tensor (torch.distributed.all_gather_into_tensor): `output` holds
  /// size() x input.numel() elements of input's dtype, rank r's values at [r * n, (r + 1) * n)
  /// in flat order ([size() * d0, ...] or [size(), d0, ...] shapes both do).
  virtual std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input) = 0;
  /// reduce_scatter from one tensor (torch.distributed.reduce_scatter_tensor): `input` holds
  /// size() x output.numel() elements; rank r gets the reduction of every rank's part r.
  virtual std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum) = 0;

  /// The traffic of this group's collectives on this rank.
  CommunicationStats stats() const noexcept {
    return {collectives_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed)};
  }
  /// Sets the counters back to zero.
  void reset_stats() noexcept {
    collectives_.store(0, std::memory_order_relaxed);
    bytes_.store(0, std::memory_order_relaxed);
  }

 protected:
  /// Adds one collective of `bytes` volume to stats(); the engines call it as they issue one.
  void count_collective(int64_t bytes) noexcept {
    collectives_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> collectives_{0}, bytes_{0};
};

/// Whether this build has `backend` ("gloo", "nccl", "mpi"); for nccl and mpi, whether their
/// modules (liblocus_nccl, liblocus_mpi) and the libraries they need can be loaded: asking loads
/// them (for mpi, Open MPI's libraries into this process).
bool is_available(const std::string& backend);
/// Why `backend` cannot be used ("built without Gloo", the NCCL or MPI module's story); empty when
/// it can.
std::string unavailable_reason(const std::string& backend);

/// A new group of `backend` (ValueError for an unknown one, BackendUnavailableError for one this
/// build lacks); blocks until every rank has joined or the timeout passes (DistributedError).
std::shared_ptr<ProcessGroup> new_group(const std::string& backend = "gloo", GroupOptions options = {});

/// Sets up the default group (torch.distributed.init_process_group); ValueError when one exists.
void init_process_group(const std::string& backend = "gloo", GroupOptions options = {});
/// Whether init_process_group has run (and destroy_process_group has not).
bool is_initialized() noexcept;
/// Closes the default group.
void destroy_process_group();
/// The default group; ValueError naming init_process_group when there is none.
ProcessGroup& default_group();
/// The default group's rank and size.
int get_rank();
int get_world_size();
/// This process's rank among those of its machine (LOCAL_RANK, which `locus run` sets; 0 when
/// unset): the index of its GPU, as `cuda::set_device(distributed::get_local_rank())`.
/// ValueError for a LOCAL_RANK that is not a non-negative integer.
int get_local_rank();
/// The backend of this rank's default group as its launcher chose it: LOCUS_DIST_BACKEND, which
/// `locus run --backend mpi` sets to "mpi"; "gloo" when it is unset or empty (`locus run`'s own
/// launch). ValueError naming the variable for anything but gloo or mpi.
std::string launcher_backend();

/// The collectives on the default group. Synchronous unless `async_op`, as in PyTorch; the
/// returned Work is already complete for a synchronous call.
std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum, bool async_op = false);
std::shared_ptr<Work> broadcast(Tensor& tensor, int root = 0, bool async_op = false);
std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input, bool async_op = false);
std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::Sum,
                                     bool async_op = false);
std::shared_ptr<Work> barrier(bool async_op = false);
std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op = false);
std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum,
                                            bool async_op = false);

}  // namespace locus::distributed

LOCUS_API_END
