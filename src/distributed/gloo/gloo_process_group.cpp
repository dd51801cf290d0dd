// Note [Gloo process group]
// One Gloo context per group, connected as a full mesh through the rendezvous store. The caller
// checks arguments; the collectives run one at a time in call order (Note [Collective queue]),
// each with its sequence number as Gloo's tag (Gloo needs every rank to issue the same
// collectives in the same order, each with the same tag). Gloo works on host memory: a
// contiguous CPU tensor is used in place, any other is copied to a host buffer and back.
// Avg is a sum divided by the size afterwards; reduce-scatter, all-gather and all-reduce are rings
// of Gloo's point-to-point buffers (Notes [Ring reduce-scatter], [Ring all-gather and all-reduce]),
// broadcast and barrier Gloo's own. On failure the group records why and refuses later
// collectives, because a timed-out Gloo context is left in an unknown state; a timeout also asks
// the store which ranks reached the same collective, so the error names the ones that did not.

#include "src/distributed/gloo/gloo_process_group.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>

#include <gloo/allgather.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/distributed/collective_arguments.h"
#include "src/distributed/collective_check.h"
#include "src/distributed/collective_queue.h"
#include "src/distributed/gloo/absent_ranks.h"
#include "src/distributed/gloo/store_url.h"
#include "src/distributed/host_buffer.h"
#include "src/distributed/host_reduce.h"

namespace locus::distributed {
namespace {

// Gloo splits buffers in elements; any type of the dtype's size will do, the arithmetic is ours.
template <class F>
void with_carrier(DType dtype, F&& f) {
  switch (itemsize(dtype)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: return f(uint64_t{});
  }
}

class GlooProcessGroup final : public ProcessGroup, public std::enable_shared_from_this<GlooProcessGroup> {
 public:
  GlooProcessGroup(const std::string& store_url, int rank, int size, std::chrono::milliseconds timeout,
                   const std::string& name)
      : rank_(rank), size_(size), timeout_(timeout), debug_(collective_debug_enabled()), store_(open_store(store_url)) {
    const char* run = std::getenv("LOCUS_RUN_ID");
    prefix_ = std::make_unique<gloo::rendezvous::PrefixStore>(std::string(run ? run : "") + "/" + name, *store_);
    gloo::transport::tcp::attr attr;
    if (const char* host = std::getenv("LOCUS_GLOO_HOSTNAME")) attr.hostname = host;
    else if (is_local_store(store_url)) attr.hostname = "127.0.0.1";
    else {
      char buf[256] = {};
      gethostname(buf, sizeof buf - 1);
      attr.hostname = buf;
    }
    try {
      device_ = gloo::transport::tcp::CreateDevice(attr);
      context_ = std::make_shared<gloo::rendezvous::Context>(rank, size);
      context_->setTimeout(timeout);
      context_->connectFullMesh(*prefix_, device_);
    } catch (const std::exception& e) {
      throw DistributedError("process group '" + name + "': rank " + std::to_string(rank) + " of " + std::to_string(size) +
                             " could not connect to the others through " + store_url + " within " +
                             std::to_string(timeout.count()) + " ms: " + e.what());
    }
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string backend() const override { return "gloo"; }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) override {
    check_defined(tensor, "all_reduce");
    check_reduce_op(op, tensor, "all_reduce");
    count_collective(2 * static_cast<int64_t>(tensor.nbytes()));
    return enqueue(CollectiveCall::of("all_reduce", tensor, -1, static_cast<int>(op)), [this, t = tensor, op](uint32_t tag) {
      HostBuffer b = HostBuffer::of(t);
      all_reduce_in_place(b.host, op, tag);
      b.write_back();
    });
  }

  std::shared_ptr<Work> broadcast(Tensor& tensor, int root) override {
    check_defined(tensor, "broadcast");
    check_root(root, size_, "broadcast");
    count_collective(static_cast<int64_t>(tensor.nbytes()));
    return enqueue(CollectiveCall::of("broadcast", tensor, root, 0), [this, t = tensor, root](uint32_t tag) {
      HostBuffer b = HostBuffer::of(t);
      with_carrier(t.dtype(), [&](auto carrier) {
        using C = decltype(carrier);
        gloo::BroadcastOptions o(context_);
        o.setOutput(static_cast<C*>(b.data()), b.count());
        o.setRoot(root);
        o.setTag(tag);
        o.setTimeout(timeout_);
        gloo::broadcast(o);
      });
      b.write_back();
    });
  }

  std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input) override {
    count_collective(check_all_gather_into_tensor(output, input, size_));
    return enqueue(CollectiveCall::of("all_gather", input, -1, 0), [this, out = output, in = input](uint32_t tag) {
      const int64_t part = in.numel();
      if (part == 0) return;
      HostBuffer to = HostBuffer::of(out);
      to.host.view({-1}).narrow(0, rank_ * part, part).copy_(in.detach().reshape({-1}));
      if (size_ > 1) {
        auto whole = context_->createUnboundBuffer(to.data(), static_cast<size_t>(to.host.nbytes()));
        const RingParts parts{part * size_, part, itemsize(in.dtype())};
        ring_all_gather_in_place(parts, gloo::Slot::build(kRingSlotPrefix, tag), *whole);
      }
      to.write_back();
    });
  }

  std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op) override {
    count_collective(check_reduce_scatter_tensor(output, input, op, size_));
    return enqueue(CollectiveCall::of("reduce_scatter", output, -1, static_cast<int>(op)),
                   [this, out = output, in = input, op](uint32_t tag) {
                     // The ring reduces in place: a private copy, unless `in` had to be copied anyway.
                     HostBuffer b = HostBuffer::of(in);
                     Tensor all = b.host.is_same(in) ? in.detach().clone() : b.host;
                     ring_reduce_scatter(all, out, op, tag);
                   });
  }

  std::shared_ptr<Work> barrier() override {
    count_collective(0);
    return enqueue(CollectiveCall::barrier(), [this](uint32_t tag) {
      gloo::BarrierOptions o(context_);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::barrier(o);
    });
  }

 private:
  using Job = std::function<void(uint32_t tag)>;

  // Gloo's tag of collective `seq`; the debug check before it uses tag - 1.
  static uint32_t tag_of(uint64_t seq) { return static_cast<uint32_t>(seq * 2 + 1); }

  // Note [Ring reduce-scatter]
  // Gloo has no reduce-scatter into equal parts, and all-reducing everything to keep one part
  // moves twice the data. The ring: the buffer holds size parts; at step s each rank sends part
  // (rank - s - 1) to the next rank, receives part (rank - s - 2) from the previous one and adds
  // it into its own copy. Each part thus travels the ring once, collecting every rank's values,
  // and after size - 1 steps rank r holds the whole reduction of part r: (size - 1) / size of
  // the buffer through each link, the optimum. Each step posts its receive before its send:
  // Gloo sends an unbound buffer only once the peer has said it is ready to receive, so the
  // notices cross while both ranks are still posting.

  // The parts of a ring over `count` elements of `item` bytes: `size` parts of `part` elements,
  // the last ones shorter or empty. Gloo's transfers count bytes, the reduction elements.
  struct RingParts {
    int64_t count, part;
    size_t item;
    int64_t begin(int64_t p) const { return std::min(p * part, count); }
    int64_t length(int64_t p) const { return std::min((p + 1) * part, count) - begin(p); }
    size_t offset(int64_t p) const { return static_cast<size_t>(begin(p)) * item; }
    size_t bytes(int64_t p) const { return static_cast<size_t>(length(p)) * item; }
  };

  // The part held by this rank's position shifted back by s; the reduce-scatter sends
  // ring_part(s + 1) at step s, the all-gather ring_part(s).
  int64_t ring_part(int s) const { return ((rank_ - s) % size_ + size_) % size_; }

  // One step of a ring: send_bytes of `whole` from send_offset to the next rank, recv_bytes from
  // the previous rank into `recv` at recv_offset; returns once both are done.
  void ring_step(gloo::transport::UnboundBuffer& whole, size_t send_offset, size_t send_bytes,
                 gloo::transport::UnboundBuffer& recv, size_t recv_offset, size_t recv_bytes, uint64_t slot) {
    const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
    if (recv_bytes > 0) recv.recv(previous, slot, recv_offset, recv_bytes);
    if (send_bytes > 0) whole.send(next, slot, send_offset, send_bytes);
    if (recv_bytes > 0) recv.waitRecv(timeout_);
    if (send_bytes > 0) whole.waitSend(timeout_);
  }

  // The reduce-scatter half of a ring over `all` (contiguous host memory), in place: afterwards
  // part `rank_` of `all` holds the reduction of every rank's part `rank_`.
  void ring_reduce_scatter_in_place(Tensor& all, const RingParts& parts, ReduceOp op, uint64_t slot,
                                    gloo::transport::UnboundBuffer& whole) {
    char* base = static_cast<char*>(all.data_ptr());
    const HostReduce reduce = host_reduce(all.dtype(), op);
    Tensor incoming = empty({parts.part}, TensorOptions().dtype(all.dtype()));
    auto in = context_->createUnboundBuffer(incoming.data_ptr(), static_cast<size_t>(incoming.nbytes()));
    for (int s = 0; s < size_ - 1; ++s) {
      const int64_t send = ring_part(s + 1), received = ring_part(s + 2);
      ring_step(whole, parts.offset(send), parts.bytes(send), *in, 0, parts.bytes(received), slot);
      char* mine = base + parts.offset(received);
      reduce(mine, mine, incoming.data_ptr(), static_cast<size_t>(parts.length(received)));
    }
  }

  void ring_reduce_scatter(Tensor& all, const Tensor& out, ReduceOp op, uint32_t tag) {
    const int64_t part = out.numel();
    const RingParts parts{part * size_, part, itemsize(all.dtype())};
    if (size_ > 1 && part > 0) {
      auto whole = context_->createUnboundBuffer(all.data_ptr(), static_cast<size_t>(all.nbytes()));
      ring_reduce_scatter_in_place(all, parts, op, gloo::Slot::build(kRingSlotPrefix, tag), *whole);
    }
    Tensor result = all.view({-1}).narrow(0, rank_ * part, part).view(out.shape());
    if (op == ReduceOp::Avg) result.div_(static_cast<double>(size_));
    out.detach().copy_(result);
  }

  // Note [Ring all-gather and all-reduce]
  // The mirror of the reduce-scatter: rank r starts with part r of the buffer final; at step s it
  // sends part (rank - s) to the next rank and receives part (rank - s - 1) from the previous
  // one straight into its place, so each part travels the ring once: size - 1 steps. The
  // all-reduce is the reduce-scatter followed by it: 2 (size - 1) / size of the buffer through
  // each link, and the same bits on every rank (each part is reduced once, along the ring, then
  // copied). Gloo's own all-reduce splits the buffer into at least 2 x size segments and waits
  // on each, and every unbound-buffer transfer first waits for the peer's notice that it is
  // ready; on 2 ranks on one host its latency was ~0.5 ms whatever the size. Against it, 6
  // interleaved rounds of bench/dist_bench.sh's rows on 2 ranks: 16 KiB 1.3x, 256 KiB 2.3x,
  // 4 MiB even, 64 MiB 1.3x (the reduction does not overlap the transfer, but there are fewer
  // waits); so the ring does every size, and Gloo's allgather gave way to it too.
  void ring_all_gather_in_place(const RingParts& parts, uint64_t slot, gloo::transport::UnboundBuffer& whole) {
    for (int s = 0; s < size_ - 1; ++s) {
      const int64_t send = ring_part(s), received = ring_part(s + 1);
      ring_step(whole, parts.offset(send), parts.bytes(send), whole, parts.offset(received), parts.bytes(received), slot);
    }
  }

  void all_reduce_in_place(Tensor& host, ReduceOp op, uint32_t tag) {
    const int64_t count = host.numel();
    if (size_ > 1 && count > 0) {
      const RingParts parts{count, (count + size_ - 1) / size_, itemsize(host.dtype())};
      const uint64_t slot = gloo::Slot::build(kRingSlotPrefix, tag);
      auto whole = context_->createUnboundBuffer(host.data_ptr(), static_cast<size_t>(host.nbytes()));
      ring_reduce_scatter_in_place(host, parts, op, slot, *whole);
      ring_all_gather_in_place(parts, slot, *whole);
    }
    if (op == ReduceOp::Avg) host.div_(static_cast<double>(size_));
  }

  // A prefix none of Gloo's own collectives uses, so the ring's messages never meet theirs.
  static constexpr uint8_t kRingSlotPrefix = 0x20;

  std::shared_ptr<Work> enqueue(CollectiveCall call, Job job) {
    return queue_.enqueue(std::move(call), [job = std::move(job)](uint64_t seq) { job(tag_of(seq)); }, weak_from_this());
  }

  // The queue's runner: one collective, after the checks.
  void run(const CollectiveCall& call, uint64_t seq, const CollectiveQueue::Job& job) {
    if (!broken_.empty()) throw DistributedError("process group unusable: " + broken_ + "; create a new group");
    if (debug_) check_same_call(call, seq, tag_of(seq) - 1);
    try {
      job(seq);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail(call, seq, e);
    }
  }

  void check_same_call(const CollectiveCall& call, uint64_t seq, uint32_t tag) {
    std::vector<CollectiveCall> all(static_cast<size_t>(size_));
    gloo::AllgatherOptions o(context_);
    o.setInput(reinterpret_cast<uint8_t*>(const_cast<CollectiveCall*>(&call)), sizeof(CollectiveCall));
    o.setOutput(reinterpret_cast<uint8_t*>(all.data()), sizeof(CollectiveCall) * all.size());
    o.setTag(tag);
    o.setTimeout(timeout_);
    try {
      gloo::allgather(o);
    } catch (const std::exception& e) {
      fail(call, seq, e);
    }
    if (std::string mismatch = describe_mismatch(all); !mismatch.empty()) {
      broken_ = "collective #" + std::to_string(seq) + ": " + mismatch;
      throw DistributedError(broken_);
    }
  }

  // An engine failure: find who did not arrive, remember the group is broken, raise.
  [[noreturn]] void fail(const CollectiveCall& call, uint64_t seq, const std::exception& e) {
    broken_ = describe_failed_collective(*prefix_, call, seq, rank_, size_, timeout_, std::string("Gloo: ") + e.what());
    throw DistributedError(broken_);
  }


  int rank_, size_;
  std::chrono::milliseconds timeout_;
  bool debug_;  ///< LOCUS_DISTRIBUTED_DEBUG=detail when the group was made
  std::unique_ptr<gloo::rendezvous::Store> store_;
  std::unique_ptr<gloo::rendezvous::PrefixStore> prefix_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::string broken_;  ///< set only by the thread running a collective
  CollectiveQueue queue_{[this](const CollectiveCall& call, uint64_t seq, const CollectiveQueue::Job& job) { run(call, seq, job); }};
};

}  // namespace

std::shared_ptr<ProcessGroup> make_gloo_group(const std::string& store_url, int rank, int size,
                                              std::chrono::milliseconds timeout, const std::string& name) {
  return std::make_shared<GlooProcessGroup>(store_url, rank, size, timeout, name);
}

}  // namespace locus::distributed
