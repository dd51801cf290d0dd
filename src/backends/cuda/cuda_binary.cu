// Every binary op of the op table on CUDA, with a tensor or a number as second operand,
// computed by the functors the CPU uses too (src/ops/functors.h). As in cuda_unary.cu, the op
// is a kernel argument and each functor is compiled once per kernel.

#include "src/backends/cuda/op_switch.cuh"

namespace locus::cuda_backend {
namespace {

using ops::DtypeRule;
using ops::OpId;

// The second operand is the tensor input (NIn == 2) or the number `b` (NIn == 1).
template <class T, bool ToBool, int NIn>
struct BinarySwitch {
  using C = compute_t<T>;
  using value_type = out_t<T, ToBool>;
  OpId op;
  fn::Params<C> p;
  C b;
  __device__ Vec<value_type> operator()(const Vec<C> (&in)[NIn]) const {
    Vec<C> second;
    if constexpr (NIn == 2) {
      second = in[1];
    } else {
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) second.v[j] = b;
    }
    switch (op) {
#define LOCUS_CASE(id, name, rule, ...)                                                \
  case OpId::id:                                                                      \
    if constexpr (serves<DtypeRule::rule, T, ToBool, decltype(fn::id{}(C{}, C{}, p))>()) \
      return apply_binary<fn::id, value_type>(in[0], second, p);                      \
    break;
      LOCUS_BINARY_OPS(LOCUS_CASE)
#undef LOCUS_CASE
      default: break;
    }
    return Vec<value_type>{};
  }
};

template <class T, bool ToBool>
struct BinaryLaunch {
  static cudaError_t run(OpId op, const PackedIter& p, const ops::ElementwiseScalars& s, cudaStream_t stream) {
    using C = compute_t<T>;
    using Out = std::conditional_t<ToBool, bool, T>;
    const fn::Params<C> params = params_of<C>(s);
    if (s.has_other) return launch_packed<Out, T, 1>(p, BinarySwitch<T, ToBool, 1>{op, params, number_as<T>(s.other)}, stream);
    return launch_packed<Out, T, 2>(p, BinarySwitch<T, ToBool, 2>{op, params, C{}}, stream);
  }
};

}  // namespace

cudaError_t launch_binary(OpId op, const ops::StridedIter& it, const ops::ElementwiseScalars& scalars, cudaStream_t stream) {
  return launch_by_dtype<BinaryLaunch>(op, it, scalars, stream);
}

}  // namespace locus::cuda_backend
