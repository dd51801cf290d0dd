// The CUDA kernel table: turns the op front ends' descriptions into the plain launch parameters
// of the .cu files and launches on the current stream of the operands' device.
//
// Note [CUDA launchers]
// nvcc compiles only the kernels and their launchers (kernel_params.h, no Locus headers); this
// file, compiled by the host compiler, does the translation, the device activation, scratch
// allocation through the caching allocator and error reporting. Nothing here synchronises,
// except the index check, which must read one flag back to raise IndexError instead of letting
// an out-of-range index fault the device (a device-side assert would poison the CUDA context
// for the rest of the process).

#include "src/backends/cuda/cuda_kernel_table.h"

#include <cmath>
#include <limits>
#include <string>

#include "locus/errors.h"
#include "src/backends/cuda/cuda_blas.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_memory.h"
#include "src/backends/cuda/cuda_streams.h"
#include "src/backends/cuda/kernel_params.h"
#include "src/runtime/device_runtime.h"

namespace locus::cuda_backend {
namespace {

static_assert(static_cast<int>(DT::Float64) == static_cast<int>(DType::Float64) &&
              static_cast<int>(DT::Bool) == static_cast<int>(DType::Bool) &&
              static_cast<int>(DT::BFloat16) == static_cast<int>(DType::BFloat16));

DT dt(DType d) { return static_cast<DT>(d); }

std::string op_text(ops::OpId op) { return "locus::" + std::string(ops::op_name(op)); }

// The launch status, with the op's name put into the message only when there is an error.
void check_op(cudaError_t err, ops::OpId op) {
  check_lazy(err, [op] { return op_text(op); });
}

IterParams params_of(const ops::StridedIter& it, ops::OpId op) {
  if (it.shape.size() > static_cast<size_t>(kMaxDims))
    throw NotImplementedError("[" + op_text(op) + "] on cuda supports at most " + std::to_string(kMaxDims) +
                              " non-mergeable dims; call .contiguous() on the operands first");
  IterParams p;
  p.ndim = static_cast<int>(it.shape.size());
  p.noperands = it.noperands;
  p.numel = it.numel;
  for (int d = 0; d < p.ndim; ++d) {
    p.shape[d] = it.shape[static_cast<size_t>(d)];
    for (int k = 0; k < it.noperands; ++k) p.strides[k][d] = it.strides[k][static_cast<size_t>(d)];
  }
  for (int k = 0; k < it.noperands; ++k) p.data[k] = it.data[k], p.dtype[k] = dt(it.dtypes[k]);
  return p;
}

ScalarArg scalar_of(const Scalar& s) {
  ScalarArg a;
  a.f = s.to_double();
  if (!s.is_floating_point()) {
    a.i = s.to_int64();
  } else if (std::isfinite(a.f) && std::abs(a.f) < 9.2e18) {
    a.i = static_cast<int64_t>(a.f);  // C++ truncation, as the CPU kernels convert
  }
  return a;
}

// The device and stream a launch goes to.
struct Launch {
  int device;
  cudaStream_t stream;
  explicit Launch(int d) : device(d), stream(current_native_stream(d)) { activate(d); }
};

void binary(ops::OpId op, const ops::StridedIter& it, const Scalar& alpha) {
  Launch l(it.device);
  check_op(launch_binary(op, params_of(it, op), nullptr, scalar_of(alpha), l.stream), op);
}

void binary_scalar(ops::OpId op, const ops::StridedIter& it, const Scalar& b, const Scalar& alpha) {
  Launch l(it.device);
  const ScalarArg value = scalar_of(b);
  check_op(launch_binary(op, params_of(it, op), &value, scalar_of(alpha), l.stream), op);
}

void unary(ops::OpId op, const ops::StridedIter& it, const Scalar& lo, const Scalar& hi, bool has_lo, bool has_hi) {
  Launch l(it.device);
  check_op(launch_unary(op, params_of(it, op), scalar_of(lo), scalar_of(hi), has_lo, has_hi, l.stream), op);
}

void where(const ops::StridedIter& it) {
  Launch l(it.device);
  check(launch_where(params_of(it, ops::OpId::Where), l.stream), "locus::where");
}

void copy(const ops::StridedIter& it) {
  Launch l(it.device);
  check(launch_copy(params_of(it, ops::OpId::Copy), l.stream), "locus::copy_");
}

void fill(const ops::StridedIter& it, const Scalar& value) {
  Launch l(it.device);
  check(launch_fill(params_of(it, ops::OpId::Fill), scalar_of(value), l.stream), "locus::fill_");
}

void reduce(const ops::ReduceArgs& a) {
  Launch l(a.device);
  const int sms = sm_count(a.device);
  if (a.op == ops::OpId::Sum || a.op == ops::OpId::Mean) {
    if (a.shape.size() > static_cast<size_t>(kMaxDims))
      throw NotImplementedError("[" + op_text(a.op) + "] on cuda supports at most " + std::to_string(kMaxDims) + " dims");
    SumParams p;
    p.mean = a.op == ops::OpId::Mean;
    p.in = dt(a.in_dtype), p.out = dt(a.out_dtype);
    p.in_ptr = a.in, p.out_ptr = a.out;
    p.ndim = static_cast<int>(a.shape.size());
    for (int d = 0; d < p.ndim; ++d) {
      p.shape[d] = a.shape[static_cast<size_t>(d)];
      p.in_strides[d] = a.in_strides[static_cast<size_t>(d)];
      p.out_strides[d] = a.out_strides[static_cast<size_t>(d)];
    }
    p.out_numel = a.out_numel, p.reduce_numel = a.reduce_numel;
    const size_t bytes = sum_workspace_bytes(p, sms);
    detail::DataPtr work = bytes ? device_scratch(a.device, bytes) : detail::DataPtr();
    check_op(launch_sum(p, work.get(), sms, l.stream), a.op);
    return;
  }
  ExtremeParams p;
  p.op = a.op;
  p.dtype = dt(a.in_dtype);
  p.in = a.in;
  p.outer = a.shape[0], p.dim = a.shape[1], p.inner = a.shape[2];
  if (a.op == ops::OpId::Argmax) {
    p.indices = reinterpret_cast<int64_t*>(a.out);
  } else {
    p.values = a.out;
    p.indices = reinterpret_cast<int64_t*>(a.indices);
  }
  const size_t bytes = extreme_workspace_bytes(p, sms);
  detail::DataPtr work = bytes ? device_scratch(a.device, bytes) : detail::DataPtr();
  check_op(launch_extreme(p, work.get(), sms, l.stream), a.op);
}

void softmax(const ops::SoftmaxArgs& a) {
  Launch l(a.device);
  SoftmaxParams p;
  p.log = a.log;
  p.dtype = dt(a.dtype);
  p.in = a.in, p.out = a.out;
  p.outer = a.outer, p.dim = a.dim, p.inner = a.inner;
  check(launch_softmax(p, l.stream), a.log ? "locus::log_softmax" : "locus::softmax");
}

void index(const ops::IndexArgs& a) {
  Launch l(a.device);
  const int64_t count = a.op == ops::OpId::IndexSelect ? a.out_dim : a.outer * a.out_dim * a.inner;
  // Validate before writing anything, as on the CPU, so a bad index leaves `out` untouched.
  detail::DataPtr status = device_scratch(a.device, 2 * sizeof(int64_t));
  auto* flag = static_cast<int64_t*>(status.get());
  check_op(launch_check_indices(a.index, count, a.in_dim, flag, l.stream), a.op);
  int64_t host[2] = {0, 0};
  check_op(cudaMemcpyAsync(host, flag, sizeof(host), cudaMemcpyDeviceToHost, l.stream), a.op);
  check_op(cudaStreamSynchronize(l.stream), a.op);
  if (host[0])
    throw IndexError("[" + op_text(a.op) + "] index " + std::to_string(host[1]) +
                     " is out of bounds for dimension of size " + std::to_string(a.in_dim));
  IndexParams p;
  p.gather = a.op == ops::OpId::Gather;
  p.item = static_cast<int>(itemsize(a.dtype));
  p.in = a.in, p.out = a.out, p.index = a.index;
  p.outer = a.outer, p.in_dim = a.in_dim, p.out_dim = a.out_dim, p.inner = a.inner;
  check_op(launch_index(p, l.stream), a.op);
}

void random(const ops::RandomArgs& a) {
  Launch l(a.device);
  RandomParams p;
  p.op = a.op;
  p.dtype = dt(a.dtype);
  p.out = a.out;
  p.numel = a.numel;
  p.seed = a.seed, p.offset = a.offset;
  p.low = a.low, p.high = a.high;
  check_op(launch_random(p, l.stream), a.op);
}

}  // namespace

const ops::KernelTable& kernel_table() noexcept {
  static const ops::KernelTable table{&binary, &binary_scalar, &unary, &where,  &copy,  &fill,
                                      &reduce, &softmax,       &matmul, &index, &random};
  return table;
}

}  // namespace locus::cuda_backend
