// Unary elementwise kernels on CUDA: neg, abs, relu and clamp for every dtype; exp, log, sqrt,
// tanh, sigmoid and gelu for the floating types.

#include "src/backends/cuda/elementwise.cuh"

namespace locus::cuda_backend {
namespace {

using ops::OpId;

template <class C>
struct UnaryFn {
  OpId op;
  C lo, hi;
  bool has_lo, has_hi;
  __device__ C operator()(const C (&v)[1]) const {
    const C x = v[0];
    switch (op) {
      case OpId::Neg:
        if constexpr (!std::is_same_v<C, bool>) return static_cast<C>(-x);
        break;
      case OpId::Abs:
        if constexpr (std::is_unsigned_v<C>) return x;
        else return x < C(0) ? static_cast<C>(-x) : x;
      case OpId::Relu:  // NaN is kept: the comparison is false
        if constexpr (std::is_signed_v<C> || std::is_floating_point_v<C>) return x < C(0) ? C(0) : x;
        else return x;
      case OpId::Clamp: {
        C y = x;
        if (has_lo && y < lo) y = lo;
        if (has_hi && y > hi) y = hi;
        return y;
      }
      default: break;
    }
    if constexpr (std::is_floating_point_v<C>) {
      switch (op) {
        case OpId::Exp: return ::exp(x);
        case OpId::Log: return ::log(x);
        case OpId::Sqrt: return ::sqrt(x);
        case OpId::Tanh: return ::tanh(x);
        case OpId::Sigmoid: return C(1) / (C(1) + ::exp(-x));
        case OpId::Gelu: return C(0.5) * x * (C(1) + ::erf(x * C(0.70710678118654752440)));
        default: break;
      }
    }
    return x;
  }
};

}  // namespace

cudaError_t launch_unary(OpId op, const IterParams& it, ScalarArg lo, ScalarArg hi, bool has_lo, bool has_hi,
                         cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(it.dtype[0], {
    using C = compute_t<scalar_t>;
    err = launch_elementwise<scalar_t, scalar_t, 1>(it, UnaryFn<C>{op, host_value<C>(lo), host_value<C>(hi), has_lo, has_hi},
                                                    stream);
  });
  return err;
}

}  // namespace locus::cuda_backend
