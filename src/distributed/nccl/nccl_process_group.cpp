// Note [NCCL process group]
// One NCCL communicator per group, on one CUDA device per rank (GroupOptions::device, else the
// current device when the group is made). Joining goes through Gloo's rendezvous store: every
// rank publishes its host and the PCI bus id of its GPU, so two ranks that picked the same GPU
// are named before NCCL would fail with "Duplicate GPU detected"; then rank 0 publishes the
// NCCL unique id and every rank calls ncclCommInitRank.
//
// Collectives are enqueued on the calling thread, so their order is the call order, on a
// high-priority stream of the group that first waits for the caller's current stream (as
// PyTorch's ProcessGroupNCCL does). The tensors are recorded on that stream (record_stream), so
// the caching allocator does not hand their blocks out while NCCL still uses them. Work::wait()
// makes the caller's current stream wait for the collective and returns without blocking the
// host (a barrier's blocks). A watchdog thread per group looks at the collectives in flight: one
// that outlives the group's timeout (a rank that never called it) or an error NCCL reports
// aborts the communicator, which ends its kernels, and the next call on the group raises
// DistributedError naming the collective and the ranks that did not arrive, found through the
// store as for Gloo.

#include "src/distributed/nccl/nccl_process_group.h"

#include <unistd.h>

#include <nccl.h>  // and through it cudaStream_t

#include <chrono>
#include <cstring>
#include <optional>

#include <gloo/rendezvous/prefix_store.h>

#include "locus/autograd.h"
#include "locus/cuda.h"
#include "locus/device_guard.h"
#include "locus/device_properties.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/stream.h"
#include "src/distributed/collective_arguments.h"
#include "src/distributed/collective_check.h"
#include "src/distributed/gloo/store_exchange.h"
#include "src/distributed/gloo/store_url.h"
#include "src/distributed/nccl/nccl_communicator.h"

namespace locus::distributed {
namespace {

ncclDataType_t nccl_dtype(DType dtype, const char* op) {
  switch (dtype) {
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Int64: return ncclInt64;
    case DType::Int32: return ncclInt32;
    case DType::Int8: return ncclInt8;
    case DType::UInt8: return ncclUint8;
    default:
      throw DTypeError(std::string(op) + ": NCCL has no " + std::string(dtype_name(dtype)) +
                       " type; convert the tensor or use a gloo group");
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Product: return ncclProd;
  }
  return ncclSum;
}

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

class NcclProcessGroup final : public ProcessGroup {
 public:
  NcclProcessGroup(const std::string& store_url, int rank, int size, std::chrono::milliseconds timeout,
                   const std::string& name, int device)
      : rank_(rank), size_(size), timeout_(timeout), debug_(collective_debug_enabled()), name_(name),
        store_(open_store(store_url)) {
    if (!cuda::is_available())
      throw BackendUnavailableError("process group '" + name + "': nccl needs a CUDA device: " + cuda::unavailable_reason());
    const int count = cuda::device_count();
    device_ = device >= 0 ? device : cuda::current_device();
    if (device_ >= count)
      throw ValueError("process group '" + name + "': cuda:" + std::to_string(device_) + " does not exist (" +
                       std::to_string(count) + " CUDA devices)");
    const char* run = std::getenv("LOCUS_RUN_ID");
    prefix_ = std::make_shared<gloo::rendezvous::PrefixStore>(std::string(run ? run : "") + "/" + name + "/nccl", *store_);
    comm_ = std::make_shared<Communicator>(device_, rank_, size_, timeout_, store_, prefix_);
    check_distinct_gpus();
    ncclUniqueId id{};
    if (rank_ == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const std::string id_bytes(reinterpret_cast<const char*>(&id), sizeof id);
    const auto ids = exchange(*prefix_, "id", rank_, size_, rank_ == 0 ? id_bytes : std::string(), timeout_, joining());
    std::memcpy(&id, ids[0].data(), sizeof id);
    DeviceGuard guard(Device(DeviceType::CUDA, device_));
    ncclComm_t comm = nullptr;
    check(ncclCommInitRank(&comm, size_, id, rank_), "ncclCommInitRank");
    comm_->start(comm);
    stream_.emplace(device_, -1);
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string backend() const override { return "nccl"; }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) override {
    check_tensor(tensor, "all_reduce");
    const ncclDataType_t type = nccl_dtype(tensor.dtype(), "all_reduce");
    check_reduce_op(op, tensor, "all_reduce");
    count_collective(2 * static_cast<int64_t>(tensor.nbytes()));
    return launch(CollectiveCall::of("all_reduce", tensor, -1, static_cast<int>(op)), {tensor}, [&](ncclComm_t c, cudaStream_t s) {
      return ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), count(tensor), type, nccl_op(op), c, s);
    });
  }

  std::shared_ptr<Work> broadcast(Tensor& tensor, int root) override {
    check_tensor(tensor, "broadcast");
    check_root(root, size_, "broadcast");
    const ncclDataType_t type = nccl_dtype(tensor.dtype(), "broadcast");
    count_collective(static_cast<int64_t>(tensor.nbytes()));
    return launch(CollectiveCall::of("broadcast", tensor, root, 0), {tensor}, [&](ncclComm_t c, cudaStream_t s) {
      return ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), count(tensor), type, root, c, s);
    });
  }

  // The flat forms need no copies: NCCL's own collectives read and write one buffer.
  std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input) override {
    check_tensor(input, "all_gather_into_tensor");
    check_tensor(output, "all_gather_into_tensor");
    check_flat(output, input, size_, "all_gather_into_tensor", "output");
    const ncclDataType_t type = nccl_dtype(input.dtype(), "all_gather_into_tensor");
    count_collective(size_ * static_cast<int64_t>(input.nbytes()));
    return launch(CollectiveCall::of("all_gather", input, -1, 0), {output, input}, [&](ncclComm_t c, cudaStream_t s) {
      return ncclAllGather(input.data_ptr(), output.data_ptr(), count(input), type, c, s);
    });
  }

  std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op) override {
    check_tensor(output, "reduce_scatter_tensor");
    check_tensor(input, "reduce_scatter_tensor");
    check_flat(input, output, size_, "reduce_scatter_tensor", "input");
    const ncclDataType_t type = nccl_dtype(output.dtype(), "reduce_scatter_tensor");
    check_reduce_op(op, output, "reduce_scatter_tensor");
    count_collective(size_ * static_cast<int64_t>(output.nbytes()));
    return launch(CollectiveCall::of("reduce_scatter", output, -1, static_cast<int>(op)), {output, input},
                  [&](ncclComm_t c, cudaStream_t s) {
                    return ncclReduceScatter(input.data_ptr(), output.data_ptr(), count(output), type, nccl_op(op), c, s);
                  });
  }

  std::shared_ptr<Work> barrier() override {
    // As in PyTorch: a one-element all-reduce, whose wait() then blocks until every rank is there.
    Tensor one = zeros({1}, TensorOptions().device(Device(DeviceType::CUDA, device_)));
    return launch(CollectiveCall::barrier(), {one}, [&](ncclComm_t c, cudaStream_t s) {
      return ncclAllReduce(one.data_ptr(), one.data_ptr(), 1, ncclFloat32, ncclSum, c, s);
    });
  }

 private:
  std::string joining() const { return "joining nccl process group '" + name_ + "'"; }

  std::string failure(ncclResult_t r, const char* call, ncclComm_t comm) const {
    return "process group '" + name_ + "': " + call + " failed on rank " + std::to_string(rank_) + ": " +
           ncclGetErrorString(r) + (comm ? std::string(" (") + ncclGetLastError(comm) + ")" : "");
  }
  void check(ncclResult_t r, const char* call) const {
    if (r != ncclSuccess) throw DistributedError(failure(r, call, nullptr));
  }

  // Two ranks on one GPU would make ncclCommInitRank fail with a message that names neither.
  void check_distinct_gpus() {
    const std::string where =
        host_name() + " " + get_device_properties(Device(DeviceType::CUDA, device_)).pci_bus_id;
    const auto all = exchange(*prefix_, "where", rank_, size_, where, timeout_, joining());
    for (int r = 0; r < size_; ++r)
      for (int q = r + 1; q < size_; ++q)
        if (all[static_cast<size_t>(r)] == all[static_cast<size_t>(q)])
          throw DistributedError(joining() + ": ranks " + std::to_string(r) + " and " + std::to_string(q) +
                                 " use the same GPU (host and PCI bus " + all[static_cast<size_t>(r)] +
                                 "); give each rank its own: cuda::set_device(local rank) before init_process_group, "
                                 "or GroupOptions().device(...)");
  }

  static size_t count(const Tensor& t) { return static_cast<size_t>(t.numel()); }

  void check_tensor(const Tensor& t, const char* op) const {
    check_defined(t, op);
    const Device mine(DeviceType::CUDA, device_);
    if (t.device() != mine) throw DeviceMismatchError(mine, t.device(), "tensor", op);
    if (!t.is_contiguous()) throw ValueError(std::string(op) + ": an nccl group needs contiguous tensors (call .contiguous())");
  }

  // Runs `enqueue` on the group's stream after the caller's current stream, and returns the
  // work that waits for it. `tensors` are kept from reuse until the stream is past them.
  template <class Enqueue>
  std::shared_ptr<Work> launch(const CollectiveCall& call, const std::vector<Tensor>& tensors, Enqueue&& enqueue) {
    comm_->throw_if_broken();
    const uint64_t seq = next_seq_++;
    if (debug_) check_same_call(call, seq);
    NoGradGuard no_grad;
    // Held through the enqueue, so the watchdog cannot abort the communicator under NCCL's feet.
    auto [comm, usable] = comm_->use();
    stream_->wait_stream(cuda::current_stream(device_));
    auto work = std::make_shared<InFlight>();
    work->call = call;
    work->seq = seq;
    work->deadline = std::chrono::steady_clock::now() + timeout_;
    {
      cuda::StreamGuard on_group_stream(*stream_);
      const ncclResult_t r = enqueue(comm, static_cast<cudaStream_t>(stream_->native_handle()));
      if (r != ncclSuccess && r != ncclInProgress) {
        // The other ranks would wait for this rank's part until their timeout: end it here.
        const std::string why = failure(r, call.name().c_str(), comm);
        comm_->abort(why, usable);
        throw DistributedError(why);
      }
      work->end.record(*stream_);
    }
    usable.unlock();
    for (const Tensor& t : tensors) t.record_stream(*stream_);
    comm_->track(work);
    return std::make_shared<NcclWork>(comm_, std::move(work), call.name() == "barrier");
  }

  // LOCUS_DISTRIBUTED_DEBUG=detail: every rank's record of this call, through the store.
  void check_same_call(const CollectiveCall& call, uint64_t seq) {
    const std::string mine(reinterpret_cast<const char*>(&call), sizeof call);
    const auto all = exchange(*prefix_, "call/" + std::to_string(seq), rank_, size_, mine, timeout_,
                              call.describe() + " #" + std::to_string(seq));
    std::vector<CollectiveCall> calls(all.size());
    for (size_t r = 0; r < all.size(); ++r) std::memcpy(&calls[r], all[r].data(), sizeof(CollectiveCall));
    if (std::string mismatch = describe_mismatch(calls); !mismatch.empty()) {
      const std::string why = "collective #" + std::to_string(seq) + ": " + mismatch;
      comm_->abort(why);
      throw DistributedError(why);
    }
  }

  int rank_, size_, device_ = 0;
  std::chrono::milliseconds timeout_;
  bool debug_;  ///< LOCUS_DISTRIBUTED_DEBUG=detail when the group was made
  std::string name_;
  std::shared_ptr<gloo::rendezvous::Store> store_;
  std::shared_ptr<gloo::rendezvous::PrefixStore> prefix_;
  std::shared_ptr<Communicator> comm_;
  std::optional<cuda::Stream> stream_;  ///< made once CUDA is known to be there
  uint64_t next_seq_ = 0;
};

}  // namespace

std::shared_ptr<ProcessGroup> make_nccl_group(const std::string& store_url, int rank, int size,
                                              std::chrono::milliseconds timeout, const std::string& name, int device) {
  return std::make_shared<NcclProcessGroup>(store_url, rank, size, timeout, name, device);
}

}  // namespace locus::distributed
