// The CUDA kernel table: launches the .cu launchers on the current stream of the operands'
// device, with scratch memory from the caching allocator and errors that name the op.
//
// Note [CUDA launchers]
// The launchers (cuda_launchers.h) take the op front ends' own argument structs: nvcc compiles
// the same headers, so nothing is translated field by field here. Each .cu file packs what its
// kernels need (a kernel argument must be trivially copyable, see PackedIter). Nothing here
// synchronises: even indices and class targets are checked on the device (Note [Deferred
// checks]).

#include "src/backends/cuda/cuda_kernel_table.h"

#include <string>

#include "locus/errors.h"
#include "src/backends/cuda/cuda_blas.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_deferred_checks.h"
#include "src/backends/cuda/cuda_launchers.h"
#include "src/backends/cuda/cuda_memory.h"
#include "src/backends/cuda/cuda_streams.h"
#if LOCUS_WITH_CUDNN
#include "src/backends/cuda/cuda_cudnn_attention.h"
#include "src/backends/cuda/cuda_cudnn_conv.h"
#include "src/backends/cuda/cuda_cudnn_rnn.h"
#endif

namespace locus::cuda_backend {
namespace {

std::string op_text(ops::OpId op) { return "locus::" + std::string(ops::op_name(op)); }

// The launch status, with the op's name put into the message only when there is an error.
void check_op(cudaError_t err, ops::OpId op) {
  check_lazy(err, [op] { return op_text(op); });
}

// The device and stream a launch goes to.
struct Launch {
  int device;
  cudaStream_t stream;
  explicit Launch(int d) : device(d), stream(current_native_stream(d)) { activate(d); }
};

// The entries whose launcher needs nothing but the args and the stream: the launch on the
// current stream of the args' device, an error naming `kOp`, or the args' own `op` when kOp is
// left at kCount.
template <auto Launcher, ops::OpId kOp = ops::OpId::kCount, class Args>
void on_stream(const Args& a) {
  Launch l(a.device);
  if constexpr (kOp == ops::OpId::kCount) {
    check_op(Launcher(a, l.stream), a.op);
  } else {
    check_op(Launcher(a, l.stream), kOp);
  }
}

template <ops::OpId Op>
void elementwise(const ops::StridedIter& it, const ops::ElementwiseScalars& s) {
  Launch l(it.device);
  check_op(launch_elementwise(Op, it, s, l.stream), Op);
}

void where(const ops::StridedIter& it, const ops::ElementwiseScalars&) {
  Launch l(it.device);
  check_op(launch_where(it, l.stream), ops::OpId::Where);
}

void copy(const ops::StridedIter& it, const ops::ElementwiseScalars&) {
  Launch l(it.device);
  check_op(launch_copy(it, l.stream), ops::OpId::Copy);
}

void fill(const ops::StridedIter& it, const ops::ElementwiseScalars& s) {
  Launch l(it.device);
  check_op(launch_fill(it, s.other, l.stream), ops::OpId::Fill);
}

void reduce(const ops::ReduceArgs& a) {
  Launch l(a.device);
  const int sms = sm_count(a.device);
  const size_t bytes = reduce_workspace_bytes(a, sms);
  detail::DataPtr work = bytes ? device_scratch(a.device, bytes) : detail::DataPtr();
  check_op(launch_reduce(a, work.get(), sms, l.stream), a.op);
}

void softmax(const ops::SoftmaxArgs& a) {
  Launch l(a.device);
  check_op(launch_softmax(a, l.stream), a.log ? ops::OpId::LogSoftmax : ops::OpId::Softmax);
}

void sort(const ops::SortArgs& a) {
  Launch l(a.device);
  const size_t bytes = sort_workspace_bytes(a);
  detail::DataPtr work = bytes ? device_scratch(a.device, bytes) : detail::DataPtr();
  check_op(launch_sort(a, work.get(), l.stream), a.op);
}

// The indices were checked by the front end on the device (Note [Deferred checks]); the kernel
// reads element 0 for an index out of range, so nothing outside `in` is read meanwhile.
void index(const ops::IndexArgs& a) {
  Launch l(a.device);
  const size_t bytes = index_workspace_bytes(a);
  detail::DataPtr work = bytes ? device_scratch(a.device, bytes) : detail::DataPtr();
  check_op(launch_index(a, work.get(), l.stream), a.op);
}

void rnn_cell(const ops::RnnCellArgs& a) {
  Launch l(a.device);
  check_op(launch_rnn_cell(a, l.stream), a.cell == ops::RnnCellArgs::Cell::Lstm ? ops::OpId::LstmCell : ops::OpId::GruCell);
}

}  // namespace

const ops::KernelTable& kernel_table() noexcept {
  static const ops::KernelTable table = [] {
    ops::KernelTable t;
#define LOCUS_ENTRY(id, ...) t.elementwise[static_cast<int>(ops::OpId::id)] = &elementwise<ops::OpId::id>;
    LOCUS_UNARY_OPS(LOCUS_ENTRY)
    LOCUS_BINARY_OPS(LOCUS_ENTRY)
#undef LOCUS_ENTRY
    t.elementwise[static_cast<int>(ops::OpId::Where)] = &where;
    t.elementwise[static_cast<int>(ops::OpId::Copy)] = &copy;
    t.elementwise[static_cast<int>(ops::OpId::Fill)] = &fill;
    t.reduce = &reduce;
    t.softmax = &softmax;
    t.im2col = &on_stream<launch_im2col>;
    t.batch_norm = &on_stream<launch_batch_norm, ops::OpId::BatchNorm>;
    t.rnn_cell = &rnn_cell;
#if LOCUS_WITH_CUDNN
    t.convolution = &cudnn_convolution;  // Note [cuDNN convolutions]
    t.attention = &cudnn_attention;      // Note [cuDNN attention]
    t.rnn = &cudnn_rnn;                  // Note [cuDNN RNNs]
#endif
    t.sort = &sort;
    t.scan = &on_stream<launch_scan>;
    t.matmul = &matmul;
    t.index = &index;
    t.random = &on_stream<launch_random>;
    t.unscale = &on_stream<launch_unscale, ops::OpId::UnscaleGrads>;
    t.optimizer_step = &on_stream<launch_optimizer_step, ops::OpId::OptimizerStep>;
    t.defer_check = &defer_check;
    return t;
  }();
  return table;
}

}  // namespace locus::cuda_backend
