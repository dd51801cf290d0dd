// rand, randn, randint and arange fills.

#include <cmath>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"
#include "src/runtime/philox.h"

namespace locus::cpu {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Uniform in [0, 1) with 53 random bits.
inline double uniform53(uint32_t lo, uint32_t hi) {
  return static_cast<double>(((uint64_t{hi} << 32) | lo) >> 11) * 0x1.0p-53;
}

template <class T>
constexpr int kMantissaBits = std::is_same_v<T, double> ? 53
                              : std::is_same_v<T, Half> ? 11
                              : std::is_same_v<T, BFloat16> ? 8
                                                             : 24;

template <class T>
void generate_typed(const ops::RandomArgs& a) {
  T* out = reinterpret_cast<T*>(a.out);
  const bool parallel = a.numel * 16 >= kParallelBytes;
  parallel_for(a.numel, parallel, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      double v;
      if (a.op == ops::OpId::Arange) {
        v = a.low + static_cast<double>(i) * a.high;
      } else {
        const auto r = runtime::philox4x32(a.seed, a.offset + static_cast<uint64_t>(i));
        if (a.op == ops::OpId::Rand) {
          // As many random bits as the dtype's significand holds, so rounding never reaches 1.
          v = kMantissaBits<T> >= 53 ? uniform53(r[0], r[1]) : std::ldexp(static_cast<double>(r[0] >> (32 - kMantissaBits<T>)), -kMantissaBits<T>);
        } else if (a.op == ops::OpId::Randn) {
          const double u1 = 1.0 - uniform53(r[0], r[1]);  // (0, 1]: log stays finite
          v = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * uniform53(r[2], r[3]));
        } else {
          const auto range = static_cast<uint64_t>(a.high - a.low);
          v = a.low + static_cast<double>(((uint64_t{r[1]} << 32) | r[0]) % range);
        }
      }
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
