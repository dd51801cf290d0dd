// Note [MPI process group]
// For programs that mpirun starts (directly, or through `locus run --backend mpi`): MPI already
// knows every process's rank and how to reach it, so an mpi group needs no rendezvous store.
// Each group is a duplicate of MPI_COMM_WORLD (MPI_Comm_idup), so its traffic never meets the
// program's own MPI calls or another group's; duplicating is collective, so every rank must make
// its mpi groups in the same order. Rank and size are MPI's (new_group checks RANK and
// WORLD_SIZE, or GroupOptions, against them when given).
//
// A group's collectives run one at a time in call order (Note [Collective queue]); they take the
// process-wide MPI lock call by call (Note [MPI runtime]), so the collectives of two mpi groups
// progress side by side, in whatever order each rank's threads happen to start them. MPI works
// on host memory: a contiguous CPU tensor is used in place, any other goes through a host copy
// and back. An element is MPI_BYTEs of its dtype's size and a reduction is a
// user-defined MPI_Op that runs host_reduce's loop (mpi_datatypes.cpp), so every dtype reduces
// as on Gloo, bit for bit (float16 and bfloat16 in float, bool sums as `or`, integers
// wrapping); Avg is the sum divided by the size. Each collective is MPI's own, whose algorithm
// (ring, recursive doubling, ...) MPI picks for the size: MPI_Iallreduce in place,
// MPI_Ibcast, MPI_Iallgather (straight into the flat output for all_gather_into_tensor, in place
// when the input is the output's own slot) and MPI_Ireduce_scatter_block; the list forms are
// the base class's, over those (Note [List collectives]). MPI's counts are ints: a tensor of more than
// INT_MAX elements per rank goes in chunks, all-gather and reduce-scatter through a staging
// buffer that puts each chunk of every rank's part in its place.
//
// MPI has no timeouts and cannot cancel a collective. Every collective is therefore nonblocking
// and waited for by polling MPI_Test, as MPI's own blocking waits poll (in a C loop on the 2-core
// development machine, a 2-rank 800 KiB all-reduce with this reduction took 250 us polled and
// 270 us blocking), so the group's timeout can be checked; the poll yields the core every 64
// tests, which keeps two ranks on a busy machine from starving each other. A collective
// past it has buffers MPI may still write into and peers that may still arrive; no state is safe
// to go on from, so the rank prints the DistributedError it cannot raise (the collective, its
// number, the rank, the time waited) and calls MPI_Abort, which ends every rank of the job.
// MPI errors are returned on the group's communicator (MPI_ERRORS_RETURN), raised as
// DistributedError naming the collective, its number and MPI's text, and leave the group
// unusable. A rank that dies or exits with an error ends the job under mpirun (Open MPI's
// default, and Note [MPI runtime] makes sure an error exit is seen as one), so its peers do not
// wait for it. LOCUS_DISTRIBUTED_DEBUG=detail exchanges each collective's record first
// (MPI_Iallgather) and names ranks that called different ones, as on Gloo.

#include "src/distributed/mpi/mpi_process_group.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/distributed/collective_arguments.h"
#include "src/distributed/collective_check.h"
#include "src/distributed/collective_queue.h"
#include "src/distributed/host_buffer.h"
#include "src/distributed/mpi/mpi_datatypes.h"
#include "src/distributed/mpi/mpi_runtime.h"
#include "src/distributed/rendezvous_address.h"

namespace locus::distributed {
namespace {

using Clock = std::chrono::steady_clock;

// The most elements one MPI call carries (its counts are ints). LOCUS_MPI_MAX_COUNT lowers it, so
// that tests split small tensors the way 8 GiB ones are split.
int64_t max_count_from_environment() {
  const char* v = std::getenv("LOCUS_MPI_MAX_COUNT");
  if (!v || !*v) return INT_MAX;
  const int n = rank_variable(-1, "LOCUS_MPI_MAX_COUNT");
  if (n < 1) throw ValueError("init_process_group: LOCUS_MPI_MAX_COUNT must be at least 1, got 0");
  return n;
}

// A staged chunk of all-gather or reduce-scatter holds size x this many elements at most.
constexpr int64_t kStagedChunk = int64_t{1} << 24;

// The communicator of one group, freed with it (unless MPI is finalized by then).
struct OwnedComm {
  MPI_Comm comm = MPI_COMM_NULL;
  OwnedComm() = default;
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  ~OwnedComm() {
    if (comm == MPI_COMM_NULL) return;
    auto lock = lock_mpi();
    if (!mpi_finalized()) MPI_Comm_free(&comm);
  }
};

// Prints the error this rank cannot raise, and ends the job: every rank of it.
[[noreturn]] void abort_job(MPI_Comm comm, const std::string& message) {
  std::fprintf(stderr, "[locus] DistributedError: %s\n", message.c_str());
  std::fflush(stderr);
  auto lock = lock_mpi();
  MPI_Abort(comm, 1);
  std::abort();  // MPI_Abort does not return; should an MPI return from it, the rank still stops
}

// Waits for `request`, driving MPI's progress (a nonblocking collective advances only inside MPI
// calls) and yielding the core now and then, as MPI's own waits do on a busy machine. Takes the
// MPI lock for each test only (Note [MPI runtime]). Returns MPI's error code. Past `deadline`,
// ends the job with the message `timed_out` makes.
int wait_for(MPI_Request& request, MPI_Comm comm, Clock::time_point deadline, const std::function<std::string()>& timed_out) {
  for (uint64_t spins = 1;; ++spins) {
    int done = 0, rc = MPI_SUCCESS;
    {
      auto lock = lock_mpi();
      rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS || done) return rc;
    if (spins % 64 == 0) {
      if (Clock::now() > deadline) abort_job(comm, timed_out());
      std::this_thread::yield();
    }
  }
}

// Whether the host buffers of two tensors share bytes.
bool overlaps(const Tensor& a, const Tensor& b) {
  const char* pa = static_cast<const char*>(a.data_ptr());
  const char* pb = static_cast<const char*>(b.data_ptr());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

class MpiProcessGroup final : public ProcessGroup, public std::enable_shared_from_this<MpiProcessGroup> {
 public:
  MpiProcessGroup(std::chrono::milliseconds timeout, const std::string& name)
      : timeout_(timeout), name_(name), debug_(collective_debug_enabled()), max_count_(max_count_from_environment()) {
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    std::optional<MpiInFlight> joining;
    {
      auto lock = lock_mpi();
      ensure_mpi_initialized();
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &size_);
      mpi_reduce_op(ReduceOp::Sum);  // the datatypes and ops, made now, under the lock
      joining.emplace();
      rc = MPI_Comm_idup(MPI_COMM_WORLD, &comm_.comm, &request);
    }
    if (rc == MPI_SUCCESS)
      rc = wait_for(request, MPI_COMM_WORLD, Clock::now() + timeout_, [&] {
        return "process group '" + name_ + "' (mpi): rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
               " waited " + std::to_string(timeout_.count()) +
               " ms for the other ranks to make it (every rank must make its mpi groups in the same order); MPI cannot "
               "cancel the wait, so Locus ends the job (MPI_Abort)";
      });
    if (rc != MPI_SUCCESS) {
      comm_.comm = MPI_COMM_NULL;  // not made
      throw DistributedError("process group '" + name_ + "' (mpi): MPI_Comm_idup failed on rank " + std::to_string(rank_) +
                             ": " + mpi_error_text(rc));
    }
    auto lock = lock_mpi();
    MPI_Comm_set_errhandler(comm_.comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_name(comm_.comm, ("locus:" + name_).c_str());
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string backend() const override { return "mpi"; }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) override {
    check_defined(tensor, "all_reduce");
    check_reduce_op(op, tensor, "all_reduce");
    count_collective(2 * static_cast<int64_t>(tensor.nbytes()));
    return enqueue(CollectiveCall::of("all_reduce", tensor, -1, static_cast<int>(op)), [this, t = tensor, op] {
      HostBuffer b = HostBuffer::of(t);
      const MPI_Datatype type = mpi_element_type(t.dtype());
      const MPI_Op reduce = mpi_reduce_op(op);
      char* data = static_cast<char*>(b.data());
      const size_t item = itemsize(t.dtype());
      for_chunks(t.numel(), max_count_, [&](int64_t offset, int count) {
        complete("MPI_Iallreduce", [&](MPI_Request* r) {
          return MPI_Iallreduce(MPI_IN_PLACE, data + offset * item, count, type, reduce, comm_.comm, r);
        });
      });
      if (op == ReduceOp::Avg) b.host.div_(static_cast<double>(size_));
      b.write_back();
    });
  }

  std::shared_ptr<Work> broadcast(Tensor& tensor, int root) override {
    check_defined(tensor, "broadcast");
    check_root(root, size_, "broadcast");
    count_collective(static_cast<int64_t>(tensor.nbytes()));
    return enqueue(CollectiveCall::of("broadcast", tensor, root, 0), [this, t = tensor, root] {
      HostBuffer b = HostBuffer::of(t);
      const MPI_Datatype type = mpi_element_type(t.dtype());
      char* data = static_cast<char*>(b.data());
      const size_t item = itemsize(t.dtype());
      for_chunks(t.numel(), max_count_, [&](int64_t offset, int count) {
        complete("MPI_Ibcast", [&](MPI_Request* r) { return MPI_Ibcast(data + offset * item, count, type, root, comm_.comm, r); });
      });
      b.write_back();
    });
  }

  std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input) override {
    count_collective(check_all_gather_into_tensor(output, input, size_));
    return enqueue(CollectiveCall::of("all_gather", input, -1, 0), [this, out = output, in = input] {
      HostBuffer from = HostBuffer::of(in), to = HostBuffer::of(out);
      const size_t part = in.nbytes();
      const char* own_slot = static_cast<const char*>(to.data()) + static_cast<size_t>(rank_) * part;
      if (from.data() == own_slot) {
        all_gather_flat(MPI_IN_PLACE, to.data(), in.numel(), in.dtype());  // the input is this rank's part of the output
      } else {
        if (overlaps(from.host, to.host)) from.host = from.host.clone();
        all_gather_flat(from.data(), to.data(), in.numel(), in.dtype());
      }
      to.write_back();
    });
  }

  std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op) override {
    count_collective(check_reduce_scatter_tensor(output, input, op, size_));
    return enqueue(CollectiveCall::of("reduce_scatter", output, -1, static_cast<int>(op)),
                   [this, out = output, in = input, op] {
                     HostBuffer from = HostBuffer::of(in), to = HostBuffer::of(out);
                     if (overlaps(from.host, to.host)) from.host = from.host.clone();
                     reduce_scatter_flat(from.data(), to.data(), out.numel(), out.dtype(), op);
                     if (op == ReduceOp::Avg) to.host.div_(static_cast<double>(size_));
                     to.write_back();
                   });
  }

  std::shared_ptr<Work> barrier() override {
    count_collective(0);
    return enqueue(CollectiveCall::barrier(), [this] {
      complete("MPI_Ibarrier", [&](MPI_Request* r) { return MPI_Ibarrier(comm_.comm, r); });
    });
  }

 private:
  using Job = std::function<void()>;

  // Calls f(offset, count) for consecutive pieces of n elements, each at most `most` long.
  template <class F>
  static void for_chunks(int64_t n, int64_t most, F&& f) {
    for (int64_t offset = 0; offset < n; offset += most) f(offset, static_cast<int>(std::min(most, n - offset)));
  }

  // Every rank's n elements of `in` into `out`, rank r's at [r * n, (r + 1) * n). `in` may be
  // MPI_IN_PLACE: this rank's part is already in its place in `out`.
  void all_gather_flat(const void* in, void* out, int64_t n, DType dtype) {
    const MPI_Datatype type = mpi_element_type(dtype);
    if (n <= max_count_) {
      const int count = static_cast<int>(n);
      complete("MPI_Iallgather", [&](MPI_Request* r) { return MPI_Iallgather(in, count, type, out, count, type, comm_.comm, r); });
      return;
    }
    // Parts longer than an MPI count: chunk [offset, offset + count) of every rank's part is
    // gathered into `staged`, then copied to its place.
    const size_t item = itemsize(dtype);
    const int64_t most = std::min(max_count_, kStagedChunk);
    Tensor staged = empty({size_ * most}, TensorOptions().dtype(dtype));
    char* base = static_cast<char*>(out);
    const char* mine = in == MPI_IN_PLACE ? base + static_cast<size_t>(rank_ * n) * item : static_cast<const char*>(in);
    for_chunks(n, most, [&](int64_t offset, int count) {
      complete("MPI_Iallgather", [&](MPI_Request* r) {
        return MPI_Iallgather(mine + offset * item, count, type, staged.data_ptr(), count, type, comm_.comm, r);
      });
      for (int rank = 0; rank < size_; ++rank)
        std::memcpy(base + static_cast<size_t>(rank * n + offset) * item,
                    static_cast<const char*>(staged.data_ptr()) + static_cast<size_t>(rank) * count * item, count * item);
    });
  }

  // Part r of every rank's `in` (size x n elements) reduced into rank r's `out` (n elements).
  void reduce_scatter_flat(const void* in, void* out, int64_t n, DType dtype, ReduceOp op) {
    const MPI_Datatype type = mpi_element_type(dtype);
    const MPI_Op reduce = mpi_reduce_op(op);
    if (n <= max_count_) {
      complete("MPI_Ireduce_scatter_block", [&](MPI_Request* r) {
        return MPI_Ireduce_scatter_block(in, out, static_cast<int>(n), type, reduce, comm_.comm, r);
      });
      return;
    }
    // Parts longer than an MPI count: chunk [offset, offset + count) of every part is packed
    // into `staged`, whose reduce-scatter gives this rank's chunk.
    const size_t item = itemsize(dtype);
    const int64_t most = std::min(max_count_, kStagedChunk);
    Tensor staged = empty({size_ * most}, TensorOptions().dtype(dtype));
    const char* base = static_cast<const char*>(in);
    for_chunks(n, most, [&](int64_t offset, int count) {
      for (int rank = 0; rank < size_; ++rank)
        std::memcpy(static_cast<char*>(staged.data_ptr()) + static_cast<size_t>(rank) * count * item,
                    base + static_cast<size_t>(rank * n + offset) * item, count * item);
      complete("MPI_Ireduce_scatter_block", [&](MPI_Request* r) {
        return MPI_Ireduce_scatter_block(staged.data_ptr(), static_cast<char*>(out) + offset * item, count, type, reduce,
                                         comm_.comm, r);
      });
    });
  }

  std::shared_ptr<Work> enqueue(CollectiveCall call, Job job) {
    return queue_.enqueue(std::move(call), [job = std::move(job)](uint64_t) { job(); }, weak_from_this());
  }

  // The queue's runner: one collective, after the checks, marked in flight (Note [MPI runtime]).
  void run(const CollectiveCall& call, uint64_t seq, const CollectiveQueue::Job& job) {
    if (!broken_.empty()) throw DistributedError("process group unusable: " + broken_ + "; create a new group");
    std::optional<MpiInFlight> in_flight;
    {
      auto lock = lock_mpi();
      if (mpi_finalized())
        throw DistributedError(call.describe() + " #" + std::to_string(seq) +
                               ": MPI was finalized (by the program, or at exit) before it ran");
      in_flight.emplace();
    }
    running_call_ = &call;
    running_seq_ = seq;
    deadline_ = Clock::now() + timeout_;
    if (debug_) check_same_call(call, seq);
    job(seq);
  }

  // LOCUS_DISTRIBUTED_DEBUG=detail: every rank's record of what it is about to run, compared.
  void check_same_call(const CollectiveCall& call, uint64_t seq) {
    std::vector<CollectiveCall> all(static_cast<size_t>(size_));
    const int bytes = static_cast<int>(sizeof(CollectiveCall));
    complete("MPI_Iallgather",
             [&](MPI_Request* r) { return MPI_Iallgather(&call, bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, comm_.comm, r); });
    if (std::string mismatch = describe_mismatch(all); !mismatch.empty()) {
      broken_ = "collective #" + std::to_string(seq) + ": " + mismatch;
      throw DistributedError(broken_);
    }
  }

  // Starts the nonblocking MPI call `function` (start(&request) makes it, under the MPI lock) and
  // waits for it; an MPI error makes the group unusable and raises.
  template <class Start>
  void complete(const char* function, Start&& start) {
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    {
      auto lock = lock_mpi();
      rc = start(&request);
    }
    if (rc == MPI_SUCCESS) rc = wait_for(request, comm_.comm, deadline_, [this] { return timeout_message(); });
    if (rc != MPI_SUCCESS) {
      broken_ = running_call_->describe() + " #" + std::to_string(running_seq_) + " failed on rank " +
                std::to_string(rank_) + ": " + function + ": " + mpi_error_text(rc);
      throw DistributedError(broken_);
    }
  }

  std::string timeout_message() const {
    return running_call_->describe() + " #" + std::to_string(running_seq_) + " failed on rank " + std::to_string(rank_) +
           " of process group '" + name_ + "' after waiting up to " + std::to_string(timeout_.count()) +
           " ms: a rank did not arrive (MPI cannot say which), and MPI cannot cancel a collective, so Locus ends the "
           "job (MPI_Abort)";
  }

  int rank_ = 0, size_ = 1;
  std::chrono::milliseconds timeout_;
  std::string name_;
  bool debug_;        ///< LOCUS_DISTRIBUTED_DEBUG=detail when the group was made
  int64_t max_count_;  ///< the most elements one MPI call carries
  OwnedComm comm_;
  // The collective running, for messages; set and read only by the thread running it.
  const CollectiveCall* running_call_ = nullptr;
  uint64_t running_seq_ = 0;
  Clock::time_point deadline_;
  std::string broken_;  ///< set only by the thread running a collective
  CollectiveQueue queue_{[this](const CollectiveCall& call, uint64_t seq, const CollectiveQueue::Job& job) { run(call, seq, job); }};
};

}  // namespace

std::shared_ptr<ProcessGroup> make_mpi_group(std::chrono::milliseconds timeout, const std::string& name) {
  return std::make_shared<MpiProcessGroup>(timeout, name);
}

}  // namespace locus::distributed
