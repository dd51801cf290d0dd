// Copy with dtype conversion, and fill.

#include <cstring>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/loops.h"
#include "src/ops/float_to_int.h"

namespace locus::cpu {
namespace {

// Every pair of dtypes, as the CUDA copy converts them: floats to integers by
// ops::float_to_int (Note [Float to int]), float64 to the 16-bit floats through float32 (as
// PyTorch), anything to bool as "not zero".
template <class Out, class In>
Out convert(In v) {
  using C = compute_t<In>;
  if constexpr (std::is_same_v<Out, bool>) return static_cast<C>(v) != C(0);
  else if constexpr (std::is_same_v<Out, Half> || std::is_same_v<Out, BFloat16>) return Out(static_cast<float>(C(v)));
  else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<C>) return ops::float_to_int<Out>(C(v));
  else return static_cast<Out>(C(v));
}

template <class Out, class In>
void copy_typed(const ops::StridedIter& it) {
  for_each_run<2>(it, sizeof(Out) + sizeof(In), [](char* const* p, const int64_t* s, int64_t n) {
    if constexpr (std::is_same_v<Out, In>) {
      if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
        std::memcpy(p[0], p[1], static_cast<size_t>(n) * sizeof(Out));
        return;
      }
    }
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      auto* out = reinterpret_cast<Out*>(p[0]);
      const auto* in = reinterpret_cast<const In*>(p[1]);
      for (int64_t i = 0; i < n; ++i) out[i] = convert<Out>(in[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = convert<Out>(*reinterpret_cast<const In*>(p[1] + i * s[1]));
    }
  });
}

template <class Out>
void copy_to(const ops::StridedIter& it) {
  LOCUS_DISPATCH_ALL(it.dtypes[1], copy_typed<Out, scalar_t>(it));
}

}  // namespace

void copy_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars&) {
  LOCUS_DISPATCH_ALL(it.dtypes[0], copy_to<scalar_t>(it));
}

void fill_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars& scalars) {
  LOCUS_DISPATCH_ALL(it.dtypes[0], {
    const scalar_t v = scalars.other.to<scalar_t>();
    for_each_run<1>(it, sizeof(scalar_t), [v](char* const* p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(scalar_t)) {
        auto* out = reinterpret_cast<scalar_t*>(p[0]);
        for (int64_t i = 0; i < n; ++i) out[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

}  // namespace locus::cpu
