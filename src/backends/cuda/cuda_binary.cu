// Binary elementwise kernels on CUDA: arithmetic, pow, maximum/minimum and comparisons, with a
// tensor or a scalar second operand. The op is a kernel argument, not a template parameter:
// the branch is uniform across the grid and these kernels are memory-bound, so one kernel
// per dtype serves every op and the build stays small.

#include "src/backends/cuda/elementwise.cuh"

namespace locus::cuda_backend {
namespace {

using ops::OpId;

template <class C>
__device__ __forceinline__ C int_pow(C base, C exp) {
  if constexpr (std::is_signed_v<C>)
    if (exp < 0) return base == 1 ? C(1) : (base == C(-1) ? ((exp & 1) ? C(-1) : C(1)) : C(0));
  C result = 1;
  while (exp) {
    if (exp & 1) result = static_cast<C>(result * base);
    base = static_cast<C>(base * base);
    exp >>= 1;
  }
  return result;
}

template <class C>
__device__ __forceinline__ C arith(OpId op, C a, C b, C alpha) {
  if constexpr (std::is_same_v<C, bool>) {
    switch (op) {
      case OpId::Add: return a || (alpha && b);
      case OpId::Mul: return a && b;
      case OpId::Pow: return a || !b;
      case OpId::Maximum: return a || b;
      case OpId::Minimum: return a && b;
      default: return false;
    }
  } else {
    switch (op) {
      case OpId::Add: return static_cast<C>(a + alpha * b);
      case OpId::Sub: return static_cast<C>(a - alpha * b);
      case OpId::Mul: return static_cast<C>(a * b);
      case OpId::Div: return static_cast<C>(a / b);
      case OpId::Pow:
        if constexpr (std::is_floating_point_v<C>) return ::pow(a, b);
        else return int_pow(a, b);
      case OpId::Maximum:
        if constexpr (std::is_floating_point_v<C>)
          if (a != a || b != b) return a + b;  // NaN propagates
        return a > b ? a : b;
      case OpId::Minimum:
        if constexpr (std::is_floating_point_v<C>)
          if (a != a || b != b) return a + b;
        return a < b ? a : b;
      default: return C(0);
    }
  }
}

template <class C>
__device__ __forceinline__ bool compare(OpId op, C a, C b) {
  switch (op) {
    case OpId::Eq: return a == b;
    case OpId::Ne: return a != b;
    case OpId::Lt: return a < b;
    case OpId::Le: return a <= b;
    case OpId::Gt: return a > b;
    case OpId::Ge: return a >= b;
    default: return false;
  }
}

template <class C>
struct ArithFn {
  OpId op;
  C alpha;
  __device__ C operator()(const C (&v)[2]) const { return arith(op, v[0], v[1], alpha); }
};
template <class C>
struct ArithScalarFn {
  OpId op;
  C alpha, b;
  __device__ C operator()(const C (&v)[1]) const { return arith(op, v[0], b, alpha); }
};
template <class C>
struct CompareFn {
  OpId op;
  __device__ bool operator()(const C (&v)[2]) const { return compare(op, v[0], v[1]); }
};
template <class C>
struct CompareScalarFn {
  OpId op;
  C b;
  __device__ bool operator()(const C (&v)[1]) const { return compare(op, v[0], b); }
};

template <class T>
cudaError_t binary_typed(OpId op, const IterParams& it, const ScalarArg* b, ScalarArg alpha, cudaStream_t stream) {
  using C = compute_t<T>;
  const bool comparison = op >= OpId::Eq && op <= OpId::Ge;
  if (comparison) {
    if (b) return launch_elementwise<bool, T, 1>(it, CompareScalarFn<C>{op, host_value<C>(*b)}, stream);
    return launch_elementwise<bool, T, 2>(it, CompareFn<C>{op}, stream);
  }
  if (b) return launch_elementwise<T, T, 1>(it, ArithScalarFn<C>{op, host_value<C>(alpha), host_value<C>(*b)}, stream);
  return launch_elementwise<T, T, 2>(it, ArithFn<C>{op, host_value<C>(alpha)}, stream);
}

}  // namespace

cudaError_t launch_binary(OpId op, const IterParams& it, const ScalarArg* b_scalar, ScalarArg alpha, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(it.dtype[1], err = binary_typed<scalar_t>(op, it, b_scalar, alpha, stream));
  return err;
}

}  // namespace locus::cuda_backend
