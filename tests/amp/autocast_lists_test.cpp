// The autocast lists for the ops issue 24 added, as PyTorch's CUDA lists (Note [Autocast]): the
// float32 list's ops compute in float32 from a bfloat16 input; ops on no list keep the input's
// dtype.

#include <gtest/gtest.h>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

TEST(AutocastLists, NewFloat32OpsComputeInFloat32) {
  const Tensor x = full({3}, 0.5, TensorOptions().dtype(kBFloat16));
  const amp::AutocastGuard guard(kCPU, kBFloat16);
  for (const Tensor& y : {tan(x), sinh(x), cosh(x), asin(x), acos(x), log2(x), log10(x), reciprocal(x), softplus(x),
                          cumsum(x, 0), cumprod(x, 0), prod(x), norm(x)})
    EXPECT_EQ(y.dtype(), kFloat32);
  // On no list: the input's dtype (computed in float32 inside the kernel, rounded once).
  for (const Tensor& y : {logsumexp(x, 0), amax(x), var(x), atan(x), silu(x), exp2(x)}) EXPECT_EQ(y.dtype(), kBFloat16);
}

}  // namespace
}  // namespace locus
