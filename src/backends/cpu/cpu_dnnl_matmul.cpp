// Products through oneDNN's matmul: bfloat16 (its brgemm kernels use the AVX512-BF16 dot
// products where the CPU has them), with float32 accumulation and one rounding of the result;
// and float32 on CPUs with AVX-512, where oneDNN's JIT kernels run 1.3-2x OpenBLAS 0.3.21 at an
// MLP's sizes (OpenBLAS has no kernel for newer cores and runs its AVX2 one; docs/design.md,
// "Dependencies"). Linear's bias and activation ride along as oneDNN's bias and eltwise
// post-op, so the result is written once.
//
// A oneDNN primitive costs 0.3-3 ms to create, so each thread keeps the primitives of the shapes
// it has seen (an MLP has a handful); executing one costs a few microseconds.

#include "src/backends/cpu/cpu_dnnl_matmul.h"

#include "src/backends/cpu/thread_budget.h"

#ifdef LOCUS_WITH_DNNL

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_version.h>

#include <omp.h>

#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace locus::cpu {
namespace {

// Shape, strides, variant, and the team size: oneDNN plans a primitive's work split for the
// OpenMP threads it sees at creation, which follow the thread budget (Note [Thread budget]).
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, int>;

// A product's primitive with the memory descriptions it was made for (reused at each call).
struct Product {
  dnnl::memory::desc a, b, c, bias;
  dnnl::matmul primitive;
};

dnnl::memory::data_type data_type(DType dtype) {
  return dtype == DType::BFloat16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

// The part of the key that is not a size or stride: dtype, bias, epilogue.
int variant(const ops::MatmulArgs& g) {
  return static_cast<int>(g.dtype) * 16 + (g.bias ? 8 : 0) + static_cast<int>(g.epilogue);
}

// A tile product's key (dnnl_gemm): shape, leading dimensions, transposes, beta and whether it
// runs inside a parallel region (one thread) or not (the team).
using TileKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, int, int>;

struct ThreadDnnl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  // The product of each shape and stride pattern; nullopt where oneDNN has only its
  // reference kernel for this CPU (slower than widening), so the answer is asked once.
  std::map<Key, std::optional<Product>> primitives;
  std::map<TileKey, std::optional<Product>> tiles;  // dnnl_gemm's, likewise
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
dnnl::memory::desc operand(dnnl::memory::data_type type, int64_t batch, int64_t rows, int64_t cols, int64_t batch_stride,
                           int64_t rs, int64_t cs) {
  const int64_t b = batch_stride == 0 ? 1 : batch;
  return dnnl::memory::desc({b, rows, cols}, type, {b == 1 ? rows * cols : batch_stride, rs, cs});
}

dnnl::primitive_attr epilogue_attr(ops::Epilogue epilogue) {
  dnnl::primitive_attr attr;
  if (epilogue == ops::Epilogue::None) return attr;
  const auto alg = epilogue == ops::Epilogue::Relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_gelu_erf;
  dnnl::post_ops ops;
#if DNNL_VERSION_MAJOR >= 3
  ops.append_eltwise(alg, 0.f, 0.f);
#else
  ops.append_eltwise(1.f, alg, 0.f, 0.f);
#endif
  attr.set_post_ops(ops);
  return attr;
}

dnnl::matmul::primitive_desc describe(const dnnl::engine& engine, const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                                      const dnnl::memory::desc& bias, const dnnl::memory::desc& c,
                                      const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(engine, a, b, bias, c, attr);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, c), attr, engine);
#endif
}

// The cached product for `key`, made by `make` the first time (nullopt, also cached, where it
// declines or oneDNN has no implementation: the caller's BLAS path serves those).
template <class K, class Make>
const std::optional<Product>& cached(std::map<K, std::optional<Product>>& cache, const K& key, Make make) {
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxPrimitives) cache.clear();
  std::optional<Product> product;
  try {
    product = make();
  } catch (const dnnl::error&) {
    // No implementation for this layout.
  }
  return cache.emplace(key, std::move(product)).first->second;
}

// Runs `p` on the caller's buffers (bias may be null). False when oneDNN refuses the call: it
// checks its arguments before it writes, so C is as it was for the caller's own path.
bool execute(ThreadDnnl& t, const Product& p, const void* a, const void* b, void* c, const void* bias) {
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, dnnl::memory(p.a, t.engine, const_cast<void*>(a))},
                                             {DNNL_ARG_WEIGHTS, dnnl::memory(p.b, t.engine, const_cast<void*>(b))},
                                             {DNNL_ARG_DST, dnnl::memory(p.c, t.engine, c)}};
  if (bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(p.bias, t.engine, const_cast<void*>(bias)));
  try {
    p.primitive.execute(t.stream, args);
    t.stream.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  return true;
}

const std::optional<Product>& product_for(ThreadDnnl& t, const ops::MatmulArgs& g, int threads) {
  const Key key{g.batch, g.m, g.n, g.k, g.a_batch_stride, g.a_row, g.a_col, g.b_batch_stride, g.b_row, g.b_col, variant(g), threads};
  return cached(t.primitives, key, [&]() -> std::optional<Product> {
    const dnnl::memory::data_type type = data_type(g.dtype);
    const auto a = operand(type, g.batch, g.m, g.k, g.a_batch_stride, g.a_row, g.a_col);
    const auto b = operand(type, g.batch, g.k, g.n, g.b_batch_stride, g.b_row, g.b_col);
    const dnnl::memory::desc c({g.batch, g.m, g.n}, type, {g.m * g.n, g.n, 1});
    const dnnl::memory::desc bias = g.bias ? dnnl::memory::desc({1, 1, g.n}, type, {g.n, g.n, 1}) : dnnl::memory::desc();
    const dnnl::matmul::primitive_desc pd = describe(t.engine, a, b, bias, c, epilogue_attr(g.epilogue));
    if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0) return std::nullopt;
    return Product{a, b, c, bias, dnnl::matmul(pd)};
  });
}

}  // namespace

bool dnnl_matmul(const ops::MatmulArgs& args) {
  // A scaled product (addmm's alpha and beta, Note [Product scaling]) goes to BLAS, which takes
  // both in its call; these primitives have neither.
  if (args.k == 0 || (args.dtype != DType::Float32 && args.dtype != DType::BFloat16)) return false;
  if (args.alpha != 1 || args.beta != 0) return false;
  const ops::MatmulArgs g = normalized(args);
  ThreadDnnl& t = thread_dnnl();
  const std::optional<Product>& p = product_for(t, g, threads_now());
  return p && execute(t, *p, g.a, g.b, g.c, g.bias);
}

bool dnnl_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0 || k == 0 || (beta != 0 && beta != 1)) return false;
  const int team = omp_in_parallel() ? 1 : threads_now();
  ThreadDnnl& t = thread_dnnl();
  const TileKey key{m, n, k, lda, ldb, ldc, transpose_a * 2 + transpose_b, beta != 0, team};
  const std::optional<Product>& p = cached(t.tiles, key, [&]() -> std::optional<Product> {
    constexpr auto f32 = dnnl::memory::data_type::f32;
    // A as [m, k] and B as [k, n] through their strides, whichever way they are stored.
    const dnnl::memory::desc ad({m, k}, f32, transpose_a ? dnnl::memory::dims{1, lda} : dnnl::memory::dims{lda, 1});
    const dnnl::memory::desc bd({k, n}, f32, transpose_b ? dnnl::memory::dims{1, ldb} : dnnl::memory::dims{ldb, 1});
    const dnnl::memory::desc cd({m, n}, f32, dnnl::memory::dims{ldc, 1});
    dnnl::primitive_attr attr;
    if (beta != 0) {
      dnnl::post_ops ops;
      ops.append_sum(1.f);
      attr.set_post_ops(ops);
    }
    // Only the brgemm kernels: for the tile shapes they decline (not multiples of their blocks)
    // oneDNN falls back to its own packed sgemm, which was slower than OpenBLAS on a 256-token
    // causal backward (4.4 against 3.4 ms).
    const dnnl::matmul::primitive_desc pd = describe(t.engine, ad, bd, dnnl::memory::desc(), cd, attr);
    if (std::strncmp(pd.impl_info_str(), "brg", 3) != 0) return std::nullopt;
    return Product{ad, bd, cd, {}, dnnl::matmul(pd)};
  });
  return p && execute(t, *p, a, b, c, nullptr);
}

bool dnnl_preferred_for_float32() noexcept {
  // Measured on Zen 4 (AVX-512): oneDNN 1.3-2x OpenBLAS 0.3.21 from 64x784x256 to 2048^3. On
  // AVX2-only CPUs OpenBLAS's own kernels are as fast (../shared/bench's reference run), and
  // it needs no primitive per shape.
  static const bool preferred = __builtin_cpu_supports("avx512f");
  return preferred;
}

}  // namespace locus::cpu

#else

namespace locus::cpu {
bool dnnl_matmul(const ops::MatmulArgs&) { return false; }
bool dnnl_preferred_for_float32() noexcept { return false; }
bool dnnl_gemm(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float, float*, int64_t) {
  return false;
}
}  // namespace locus::cpu

#endif
