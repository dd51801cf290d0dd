// bfloat16 products on the CPU: oneDNN's matmul (its brgemm kernels use the AVX512-BF16 dot
// products where the CPU has them), with float32 accumulation and one rounding of the result.
// OpenBLAS, Locus's BLAS, has no bfloat16 GEMM in Debian's build (BUILD_BFLOAT16 is off), and
// widening to float32 for sgemm is 3x slower at an MLP's sizes (docs/design.md, "Dependencies").
//
// A oneDNN primitive costs 0.3-3 ms to create, so each thread keeps the primitives of the shapes
// it has seen (an MLP has a handful); executing one costs a few microseconds.

#include "src/backends/cpu/cpu_dnnl_matmul.h"

#ifdef LOCUS_WITH_DNNL

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_version.h>

#include <cstring>
#include <map>
#include <optional>
#include <tuple>

namespace locus::cpu {
namespace {

using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

// A product's primitive with the memory descriptions it was made for (reused at each call).
struct Product {
  dnnl::memory::desc a, b, c;
  dnnl::matmul primitive;
};

struct ThreadDnnl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  // The product of each shape and stride pattern; nullopt where oneDNN has only its
  // reference kernel for this CPU (slower than widening), so the answer is asked once.
  std::map<Key, std::optional<Product>> primitives;
};

ThreadDnnl& thread_dnnl() {
  thread_local ThreadDnnl t;
  return t;
}

constexpr size_t kMaxPrimitives = 256;

// `g` with the strides of size-1 dims made contiguous (any stride walks one element, and oneDNN
// may check leading dimensions), so equal layouts share one primitive.
ops::MatmulArgs normalized(ops::MatmulArgs g) {
  auto fix = [&](int64_t rows, int64_t cols, int64_t& batch_stride, int64_t& rs, int64_t& cs) {
    if (cols == 1) cs = 1;
    if (rows == 1) rs = cols * cs;
    if (g.batch == 1) batch_stride = rows * cols;
  };
  fix(g.m, g.k, g.a_batch_stride, g.a_row, g.a_col);
  fix(g.k, g.n, g.b_batch_stride, g.b_row, g.b_col);
  return g;
}

// A [batch, rows, cols] operand; a broadcast batch (stride 0) is a batch of 1, which oneDNN
// broadcasts itself.
dnnl::memory::desc operand(int64_t batch, int64_t rows, int64_t cols, int64_t batch_stride, int64_t rs, int64_t cs) {
  const int64_t b = batch_stride == 0 ? 1 : batch;
  return dnnl::memory::desc({b, rows, cols}, dnnl::memory::data_type::bf16, {b == 1 ? rows * cols : batch_stride, rs, cs});
}

dnnl::matmul::primitive_desc describe(const dnnl::engine& engine, const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                                      const dnnl::memory::desc& c) {
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(engine, a, b, c);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), engine);
#endif
}

const std::optional<Product>& product_for(ThreadDnnl& t, const ops::MatmulArgs& g) {
  const Key key{g.batch, g.m, g.n, g.k, g.a_batch_stride, g.a_row, g.a_col, g.b_batch_stride, g.b_row, g.b_col};
  auto it = t.primitives.find(key);
  if (it != t.primitives.end()) return it->second;
  if (t.primitives.size() >= kMaxPrimitives) t.primitives.clear();
  std::optional<Product> product;
  try {
    const auto a = operand(g.batch, g.m, g.k, g.a_batch_stride, g.a_row, g.a_col);
    const auto b = operand(g.batch, g.k, g.n, g.b_batch_stride, g.b_row, g.b_col);
    const dnnl::memory::desc c({g.batch, g.m, g.n}, dnnl::memory::data_type::bf16, {g.m * g.n, g.n, 1});
    const dnnl::matmul::primitive_desc pd = describe(t.engine, a, b, c);
    if (std::strncmp(pd.impl_info_str(), "ref", 3) != 0) product = Product{a, b, c, dnnl::matmul(pd)};
  } catch (const dnnl::error&) {
    // No implementation for this layout: the widened path serves it.
  }
  return t.primitives.emplace(key, std::move(product)).first->second;
}

}  // namespace

bool dnnl_bf16_matmul(const ops::MatmulArgs& args) {
  const ops::MatmulArgs g = normalized(args);
  ThreadDnnl& t = thread_dnnl();
  const std::optional<Product>& p = product_for(t, g);
  if (!p) return false;
  dnnl::memory ma(p->a, t.engine, const_cast<char*>(g.a)), mb(p->b, t.engine, const_cast<char*>(g.b)), mc(p->c, t.engine, g.c);
  try {
    p->primitive.execute(t.stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    t.stream.wait();
  } catch (const dnnl::error&) {
    return false;  // the widened path computes the whole product again
  }
  return true;
}

}  // namespace locus::cpu

#else

namespace locus::cpu {
bool dnnl_bf16_matmul(const ops::MatmulArgs&) { return false; }
}  // namespace locus::cpu

#endif
