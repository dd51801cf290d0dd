// Every unary op of the op table on CUDA, computed by the functors the CPU uses too
// (src/ops/functors.h). The op is a kernel argument, not a template parameter: one kernel per
// dtype serves every op, the switch over the op runs once per thread (uniform across the grid),
// and each functor is compiled once per kernel, so the build stays small. Also the packing of
// a strided description and launch_elementwise, which sends each op to its half.

#include <string>

#include "locus/errors.h"
#include "src/backends/cuda/op_switch.cuh"

namespace locus::cuda_backend {
namespace {

using ops::DtypeRule;
using ops::OpId;

template <class T, bool ToBool>
struct UnarySwitch {
  using C = compute_t<T>;
  using value_type = out_t<T, ToBool>;
  OpId op;
  fn::Params<C> p;
  __device__ Vec<value_type> operator()(const Vec<C> (&in)[1]) const {
    switch (op) {
#define LOCUS_CASE(id, name, rule, ...)                                             \
  case OpId::id:                                                                   \
    if constexpr (serves<DtypeRule::rule, T, ToBool, decltype(fn::id{}(C{}, p))>()) \
      return apply_unary<fn::id, value_type>(in[0], p);                            \
    break;
      LOCUS_UNARY_OPS(LOCUS_CASE)
#undef LOCUS_CASE
      default: break;
    }
    return Vec<value_type>{};
  }
};

template <class T, bool ToBool>
struct UnaryLaunch {
  static cudaError_t run(OpId op, const PackedIter& p, const ops::ElementwiseScalars& s, cudaStream_t stream) {
    using Out = std::conditional_t<ToBool, bool, T>;
    return launch_packed<Out, T, 1>(p, UnarySwitch<T, ToBool>{op, params_of<compute_t<T>>(s)}, stream);
  }
};

}  // namespace

cudaError_t launch_unary(OpId op, const ops::StridedIter& it, const ops::ElementwiseScalars& scalars, cudaStream_t stream) {
  return launch_by_dtype<UnaryLaunch>(op, it, scalars, stream);
}

cudaError_t launch_elementwise(OpId op, const ops::StridedIter& it, const ops::ElementwiseScalars& scalars,
                               cudaStream_t stream) {
  if (it.numel == 0) return cudaSuccess;
  return ops::op_family(op) == ops::OpFamily::Unary ? launch_unary(op, it, scalars, stream)
                                                    : launch_binary(op, it, scalars, stream);
}

PackedIter pack(const ops::StridedIter& it) {
  if (it.shape.size() > static_cast<size_t>(kMaxDims))
    throw NotImplementedError("[locus] a CUDA elementwise kernel takes at most " + std::to_string(kMaxDims) +
                              " non-mergeable dims; call .contiguous() on the operands first");
  PackedIter p;
  p.ndim = static_cast<int>(it.shape.size());
  p.noperands = it.noperands;
  p.numel = it.numel;
  for (int d = 0; d < p.ndim; ++d) {
    p.shape[d] = it.shape[static_cast<size_t>(d)];
    for (int k = 0; k < it.noperands; ++k) p.strides[k][d] = it.strides[k][static_cast<size_t>(d)];
  }
  for (int k = 0; k < it.noperands; ++k) p.data[k] = it.data[k], p.dtype[k] = it.dtypes[k];
  return p;
}

}  // namespace locus::cuda_backend
