#pragma once
// What the CUDA unary and binary kernels share: the op functors' parameters in a compute
// type, and which kernel serves which op. See cuda_unary.cu and cuda_binary.cu.

#include <type_traits>

#include "src/backends/cuda/elementwise.cuh"
#include "src/ops/dtype_rules.h"
#include "src/ops/functors.h"

namespace locus::cuda_backend {

namespace fn = ops::fn;

/// The scalars of an elementwise call in compute type C (host side, passed to a kernel).
template <class C>
fn::Params<C> params_of(const ops::ElementwiseScalars& s) {
  fn::Params<C> p;
  p.alpha = s.alpha.to<C>();
  p.lo = s.lo.to<C>(), p.hi = s.hi.to<C>();
  p.has_lo = s.has_lo, p.has_hi = s.has_hi;
  p.beta = s.beta.to<C>(), p.threshold = s.threshold.to<C>();
  p.nan = s.nan.to<C>(), p.posinf = s.posinf.to<C>(), p.neginf = s.neginf.to<C>();
  return p;
}

/// A number operand in compute type C, first rounded to the storage type T as the CPU does (and
/// PyTorch's CPU kernels do): bfloat16 * 0.3 multiplies by 0.30078125, the bfloat16 nearest 0.3.
template <class T>
compute_t<T> number_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, __half>) return static_cast<float>(s.to<Half>());
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return static_cast<float>(s.to<BFloat16>());
  else return s.to<T>();
}

/// Whether an op with rule R, whose functor returns Result, runs in the kernel for storage type
/// T whose output is bool (ToBool) or T. A bool input's kernel serves every op its rule allows.
template <ops::DtypeRule R, class T, bool ToBool, class Result>
constexpr bool serves() {
  if constexpr (!ops::rule_allows(R, device_dtype<T>())) return false;
  else if constexpr (std::is_same_v<T, bool>) return true;
  else return std::is_same_v<Result, bool> == ToBool;
}

/// The compute-side result of the kernel for T: bool, or T's compute type.
template <class T, bool ToBool>
using out_t = std::conditional_t<ToBool, bool, compute_t<T>>;

/// One op's functor over a thread's elements. Not inlined: the kernel's switch over the ops
/// then holds a call per op instead of every functor's body, which keeps nvcc's time and the
/// binary small; the operands travel in registers and one call serves kPerThread elements.
template <class F, class R, class C>
__device__ __noinline__ Vec<R> apply_unary(Vec<C> x, fn::Params<C> p) {
  Vec<R> y;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) y.v[j] = F{}(x.v[j], p);
  return y;
}

template <class F, class R, class C>
__device__ __noinline__ Vec<R> apply_binary(Vec<C> a, Vec<C> b, fn::Params<C> p) {
  Vec<R> y;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) y.v[j] = F{}(a.v[j], b.v[j], p);
  return y;
}

/// Launches the kernel of an op family (unary or binary) over `it`: the bool-output kernel
/// for comparisons, logical ops and bool inputs, the same-type kernel otherwise.
template <template <class, bool> class Launch>
cudaError_t launch_by_dtype(ops::OpId op, const ops::StridedIter& it, const ops::ElementwiseScalars& scalars,
                            cudaStream_t stream) {
  const PackedIter p = pack(it);
  const bool to_bool = ops::returns_bool(ops::dtype_rule(op));
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(it.dtypes[1], {
    if constexpr (std::is_same_v<scalar_t, bool>) err = Launch<scalar_t, true>::run(op, p, scalars, stream);
    else err = to_bool ? Launch<scalar_t, true>::run(op, p, scalars, stream) : Launch<scalar_t, false>::run(op, p, scalars, stream);
  });
  return err;
}

/// The unary and binary halves of launch_elementwise (cuda_unary.cu, cuda_binary.cu).
cudaError_t launch_unary(ops::OpId op, const ops::StridedIter& it, const ops::ElementwiseScalars& scalars,
                         cudaStream_t stream);
cudaError_t launch_binary(ops::OpId op, const ops::StridedIter& it, const ops::ElementwiseScalars& scalars,
                          cudaStream_t stream);

}  // namespace locus::cuda_backend
