// rand, randn, randint and arange fills (rand and randn scaled for uniform_ and normal_).

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"
#include "src/ops/random_values.h"

namespace locus::cpu {
namespace {

template <class T>
void generate_typed(const ops::RandomArgs& a) {
  T* out = reinterpret_cast<T*>(a.out);
  const bool parallel = a.numel * 16 >= kParallelBytes;
  const int bits = runtime::mantissa_bits(a.dtype);
  parallel_for(a.numel, parallel, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const double v = runtime::random_element(a, bits, i);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        out[i] = static_cast<T>(v);
      } else {
        out[i] = static_cast<T>(static_cast<compute_t<T>>(v));
      }
    }
  }, 1);
}

}  // namespace

void random_kernel(const ops::RandomArgs& args) {
  LOCUS_DISPATCH_ALL(args.dtype, generate_typed<scalar_t>(args));
}

}  // namespace locus::cpu
