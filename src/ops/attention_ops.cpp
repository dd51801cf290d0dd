// Scaled dot-product attention: the front end's checks, the choice between the fused kernel and
// the composition (Note [Attention paths]), the fused path with its gradient node, and the
// composition as PyTorch 2.x's math path.
//
// Note [Attention paths]
// scaled_dot_product_attention has three implementations, named as PyTorch's SDPBackend:
//  - CUDNN_ATTENTION, cuDNN's fused attention on CUDA (KernelTable::attention of the CUDA
//    backend, Note [cuDNN attention] in cuda_cudnn_attention.cpp), for float16 and bfloat16:
//    forward and backward graphs of cuDNN's flash attention, its own dropout, the causal mask
//    and an additive bias. cuDNN declines what it has no engine for (float32, compute
//    capability below 8.0, some head sizes); the call then goes on down the list.
//  - FLASH_ATTENTION, the CPU's fused kernel (cpu_attention.cpp), a tiled online softmax. Its
//    forward keeps the rows' log-sum-exp and its backward recomputes the weights tile by tile,
//    so nothing of size L x S is ever stored: memory is linear in the lengths. It takes float32
//    and float64 (float16 and bfloat16 are widened to float32 around it, as PyTorch's CPU kernel
//    accumulates), is_causal and dropout (drawn inside the kernel from the global Philox
//    stream, the same words in both passes).
//  - MATH, the composition: products, mask, softmax, dropout, product. It runs everywhere, and
//    it is what the fused kernels are tested against (sim configured without
//    "scaled_dot_product_attention" takes it).
// Both fused paths take any mask that is not being differentiated: a bool mask becomes 0 / -inf
// in the mask's own shape, then broadcasts by strides (cuDNN reads it as one contiguous [L, S]
// bias, or a [B, L, S] one where it varies over the batch).
// The first allowed backend that applies runs: CUDNN_ATTENTION, FLASH_ATTENTION, then MATH.
// nn::attention::sdpa_kernel restricts the allowed set on a thread, as PyTorch's context manager
// does, and last_sdpa_backend() / sdpa_backend_calls() tell which ran. The paths draw different
// dropout masks for the same seed.

#include "locus/attention.h"

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/device_ordinal.h"
#include "src/core/public_op.h"
#include "src/ops/autocast.h"
#include "src/ops/dispatch.h"
#include "src/ops/fused.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/public_op.h"
#include "src/ops/random_counters.h"
#include "src/ops/strided_iter.h"

namespace locus {
namespace {

using detail::error_prefix;
using nn::attention::SDPBackend;

constexpr int kBackends = 4;
constexpr uint8_t kAllBackends = (1u << kBackends) - 1;

thread_local uint8_t t_allowed = kAllBackends;
thread_local SDPBackend t_last = SDPBackend::MATH;
std::array<std::atomic<int64_t>, kBackends> g_calls{};

uint8_t bit(SDPBackend b) { return static_cast<uint8_t>(1u << static_cast<int>(b)); }

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::string dims_text(const Tensor& t) { return shape_text(t.shape()); }

void check_operands(const Tensor& q, const Tensor& k, const Tensor& v) {
  const std::string prefix = error_prefix("scaled_dot_product_attention");
  for (const auto& [t, name] : {std::pair{&q, "query"}, std::pair{&k, "key"}, std::pair{&v, "value"}})
    if (t->dim() < 2)
      throw ShapeError(prefix + name + " must have at least 2 dims [..., length, features], got " + dims_text(*t));
  if (q.size(-1) != k.size(-1))
    throw ShapeError(prefix + "query and key must have the same number of features E, got query " + dims_text(q) +
                     " and key " + dims_text(k));
  if (k.size(-2) != v.size(-2))
    throw ShapeError(prefix + "key and value must have the same length S, got key " + dims_text(k) + " and value " +
                     dims_text(v));
}

Shape leading(const Tensor& t) { return Shape(std::vector<int64_t>(t.shape().begin(), t.shape().end() - 2)); }
Shape with_tail(Shape s, int64_t a, int64_t b) {
  s.push_back(a);
  s.push_back(b);
  return s;
}

// The dtype a fused backend computes in: cuDNN takes the operands' own; the CPU's kernel float32
// or float64.
DType fused_dtype(SDPBackend backend, DType dtype) {
  if (backend == SDPBackend::CUDNN_ATTENTION) return dtype;
  return dtype == kFloat64 ? kFloat64 : kFloat32;
}

// Why `backend`'s fused kernel cannot run this call, or empty when it can; `table` gets the
// kernels.
std::string fused_refusal(SDPBackend backend, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                          const ops::KernelTable** table) {
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) return "query, key and value differ in dtype";
  if (!is_floating_point(q.dtype())) return "the dtype is not floating";
  if (k.device() != q.device() || v.device() != q.device()) return "the operands are on different devices";
  if (mask.defined() && mask.device() != q.device()) return "attn_mask is on another device";
  if (mask.defined() && mask.requires_grad() && is_grad_enabled()) return "attn_mask requires grad";
  if (q.numel() == 0 || k.numel() == 0 || v.numel() == 0) return "an operand is empty";
  if (backend == SDPBackend::CUDNN_ATTENTION) {
    if (!q.device().is_cuda()) return "the operands are not on a CUDA device";
    if (q.dtype() != kFloat16 && q.dtype() != kBFloat16)
      return "cuDNN's attention takes float16 and bfloat16, not " + std::string(dtype_name(q.dtype()));
  } else if (q.device().is_cuda()) {
    return "on CUDA the fused kernel is cuDNN's (CUDNN_ATTENTION)";
  }
  *table = ops::fused_kernels(&ops::KernelTable::attention, q.device(), fused_dtype(backend, q.dtype()),
                              {ops::OpId::ScaledDotProductAttention});
  if (!*table)
    return backend == SDPBackend::CUDNN_ATTENTION ? "this build of Locus has no cuDNN" : "the device has no fused attention kernel";
  return {};
}

// `t`, or a copy of it where cuDNN, which reads its operands 16-byte aligned, would not take
// where a view starts.
Tensor aligned_for(SDPBackend backend, const Tensor& t) {
  const bool misaligned = ops::operand_address(t) % 16 != 0;
  return backend == SDPBackend::CUDNN_ATTENTION && misaligned ? t.clone() : t;
}

// `a` with the operands both passes read bound from the tensors they live in (Note [Kernel
// operands]): q, k, v, the optional mask (read through mask_row_stride and mask_col_stride), and
// the forward's results out and lse, which the backward reads.
ops::AttentionArgs with_operands(ops::AttentionArgs a, const Tensor& q, const Tensor& k, const Tensor& v,
                                 const Tensor& mask, const Tensor& out, const Tensor& lse) {
  a.q = ops::dense_operand(q, "query");
  a.k = ops::dense_operand(k, "key");
  a.v = ops::dense_operand(v, "value");
  a.mask = ops::strided_operand(mask);
  a.out = ops::dense_result(out, "output");
  a.lse = ops::dense_result(lse, "lse");
  return a;
}

Tensor math_attention(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                      double dropout_p, bool is_causal, double s);

// A fused path (Note [Attention paths]); nothing when its kernel declines the call.
std::optional<Tensor> fused_attention(SDPBackend backend, const ops::KernelTable* table, const Tensor& query,
                                      const Tensor& key, const Tensor& value, const Tensor& attn_mask, double dropout_p,
                                      bool is_causal, double scale) {
  const Device device = query.device();
  const DType compute = fused_dtype(backend, query.dtype());
  const DType lse_dtype = compute == kFloat64 ? kFloat64 : kFloat32;
  const int64_t length = query.size(-2), keys = key.size(-2), e = query.size(-1), ev = value.size(-1);
  const ops::OpId op = ops::OpId::ScaledDotProductAttention;
  const Shape batch = ops::broadcast_shapes(ops::broadcast_shapes(leading(query), leading(key), op), leading(value), op);
  int64_t b_count = 1;
  for (int64_t s : batch) b_count *= s;
  ops::AttentionArgs args;
  Tensor q, k, v, mask;
  std::vector<int64_t> mask_offsets;
  {
    NoGradGuard no_grad;
    const auto flat = [&](const Tensor& t, int64_t rows, int64_t features) {
      return aligned_for(backend, t.expand(with_tail(batch, rows, features)).to(compute).contiguous().reshape({b_count, rows, features}));
    };
    q = flat(query, length, e), k = flat(key, keys, e), v = flat(value, keys, ev);
    if (attn_mask.defined()) {
      const Tensor additive =
          attn_mask.dtype() == kBool
              ? masked_fill(zeros(attn_mask.shape(), TensorOptions().dtype(compute).device(device)), logical_not(attn_mask),
                            -std::numeric_limits<double>::infinity())
              : attn_mask.to(compute);
      const Shape full = with_tail(batch, length, keys);
      if (ops::broadcast_shapes(additive.shape(), full, op) != full)
        throw ShapeError(error_prefix("scaled_dot_product_attention") + "attn_mask of shape " + dims_text(attn_mask) +
                         " does not broadcast to the scores' shape " + shape_text(full));
      if (backend == SDPBackend::CUDNN_ATTENTION) {
        // cuDNN's bias has contiguous rows: one [L, S] matrix where the mask is the same for the
        // whole batch, else [B, L, S].
        Tensor rows = additive;
        while (rows.dim() > 2 && rows.size(0) == 1) rows = rows.squeeze(0);
        mask = rows.dim() <= 2 ? aligned_for(backend, rows.expand({length, keys}).contiguous()).expand(full)
                               : aligned_for(backend, additive.expand(full).contiguous());
      } else {
        mask = additive.expand(full);
      }
      mask_offsets.resize(static_cast<size_t>(b_count));
      const int64_t nb = static_cast<int64_t>(batch.size());
      for (int64_t b = 0; b < b_count; ++b) {
        int64_t rest = b, offset = 0;
        for (int64_t d = nb - 1; d >= 0; --d) {
          offset += (rest % batch[static_cast<size_t>(d)]) * mask.stride(d);
          rest /= batch[static_cast<size_t>(d)];
        }
        mask_offsets[static_cast<size_t>(b)] = offset;
      }
      args.mask_row_stride = mask.stride(-2), args.mask_col_stride = mask.stride(-1);
      ops::wait_for_host(mask);
    }
  }
  args.device = detail::ordinal(device);
  args.dtype = compute;
  args.batch = b_count, args.length = length, args.keys = keys, args.features = e, args.value_features = ev;
  args.scale = scale, args.causal = is_causal, args.dropout_p = dropout_p;
  args.backward_follows = autograd::needs_grad({&query, &key, &value});
  args.mask_offsets = mask_offsets.data();
  const uint64_t dropout_words = dropout_p > 0 ? static_cast<uint64_t>((b_count * length * keys + 3) / 4) : 0;
  if (dropout_words) std::tie(args.seed, args.offset) = ops::take_random_counters(dropout_words);
  for (const Tensor* t : {&q, &k, &v}) ops::wait_for_host(*t);
  const Tensor out = ops::empty_on(Shape{b_count, length, ev}, compute, device);
  const Tensor lse = ops::empty_on(Shape{b_count, length}, lse_dtype, device);
  args = with_operands(args, q, k, v, mask, out, lse);
  if (!table->attention(args)) {
    // A declined call leaves the generator as it was, so the next path draws what it would have.
    if (dropout_words) ops::give_back_random_counters(args.seed, args.offset, dropout_words);
    return std::nullopt;
  }
  args.mask_offsets = nullptr;  // the backward points it at its own copy
  const Tensor result = out.reshape(with_tail(batch, length, ev)).to(query.dtype());
  if (!args.backward_follows) return result;
  const Shape q_shape = query.shape(), k_shape = key.shape(), v_shape = value.shape();
  const DType q_dtype = query.dtype(), k_dtype = key.dtype(), v_dtype = value.dtype();
  const char* node = backend == SDPBackend::CUDNN_ATTENTION ? "ScaledDotProductCudnnAttentionBackward0"
                                                            : "ScaledDotProductFlashAttentionForCpuBackward0";
  autograd::FunctionNode& recorded = autograd::record(result, node,
                   [=](const Tensor& grad) -> std::vector<Tensor> {
                     const Tensor g = aligned_for(backend, grad.to(compute).contiguous().reshape({b_count, length, ev}));
                     const Tensor gq = ops::empty_on(q.shape(), compute, device);
                     const Tensor gk = ops::empty_on(k.shape(), compute, device);
                     const Tensor gv = ops::empty_on(v.shape(), compute, device);
                     ops::AttentionArgs back = with_operands(args, q, k, v, mask, out, lse);
                     back.pass = ops::AttentionArgs::Pass::Backward;
                     back.mask_offsets = mask_offsets.data();
                     back.grad_out = ops::dense_operand(g);
                     back.grad_q = ops::dense_result(gq);
                     back.grad_k = ops::dense_result(gk);
                     back.grad_v = ops::dense_result(gv);
                     ops::wait_for_host(g);
                     // The forward was taken only with the backward's plan built (backward_follows).
                     if (!table->attention(back))
                       throw Error("scaled_dot_product_attention: the fused kernel declined the backward of its own forward");
                     return {autograd::sum_to(gq.reshape(with_tail(batch, length, e)), q_shape, q_dtype),
                             autograd::sum_to(gk.reshape(with_tail(batch, keys, e)), k_shape, k_dtype),
                             autograd::sum_to(gv.reshape(with_tail(batch, keys, ev)), v_shape, v_dtype)};
                   },
                   {&query, &key, &value}, {{q, query}, {k, key}, {v, value}, {out, result}});
  // Double backward through the math path, which draws no dropout mask: with dropout the
  // recomputation would not be the forward that ran.
  if (dropout_p > 0) {
    recorded.no_double_backward();
  } else {
    recorded.recompute_with({query, key, value}, [attn_mask = attn_mask.defined() ? attn_mask.detach() : Tensor(), is_causal, scale](const std::vector<Tensor>& in) {
      return math_attention(in[0], in[1], in[2], attn_mask, 0.0, is_causal, scale);
    });
  }
  return result;
}

// The composition, PyTorch 2.x's math path.
Tensor math_attention(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                      double dropout_p, bool is_causal, double s) {
  const int64_t length = query.size(-2), keys = key.size(-2);
  Tensor scores = mul(matmul(query, key.transpose(-2, -1)), s);
  const double minus_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    // Key j is after query i where j > i: the upper triangle, aligned at the top left.
    const TensorOptions positions = TensorOptions().dtype(kInt64).device(query.device());
    const Tensor after = gt(arange(keys, positions).unsqueeze(0), arange(length, positions).unsqueeze(1));
    scores = masked_fill(scores, after, minus_inf);
  }
  if (attn_mask.defined()) {
    if (attn_mask.dtype() == kBool) scores = masked_fill(scores, logical_not(attn_mask), minus_inf);
    else scores = add(scores, attn_mask);
  }
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0) weights = locus::dropout(weights, dropout_p, true);
  return matmul(weights, value);
}

Tensor attend(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask, double dropout_p,
              bool is_causal, std::optional<double> scale) {
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  const uint8_t allowed = t_allowed;
  std::string why;
  const auto ran = [](SDPBackend b) {
    t_last = b;
    g_calls[static_cast<size_t>(b)].fetch_add(1, std::memory_order_relaxed);
  };
  for (SDPBackend fused : {SDPBackend::CUDNN_ATTENTION, SDPBackend::FLASH_ATTENTION}) {
    if (!(allowed & bit(fused))) continue;
    const ops::KernelTable* table = nullptr;
    std::string refusal = fused_refusal(fused, query, key, value, attn_mask, &table);
    if (refusal.empty()) {
      if (std::optional<Tensor> out = fused_attention(fused, table, query, key, value, attn_mask, dropout_p, is_causal, s)) {
        ran(fused);
        return *std::move(out);
      }
      refusal = "the kernel has no engine for these shapes on this device";
    }
    why += std::string(nn::attention::sdpa_backend_name(fused)) + ": " + refusal + "; ";
  }
  if (allowed & bit(SDPBackend::MATH)) {
    Tensor out = math_attention(query, key, value, attn_mask, dropout_p, is_causal, s);
    ran(SDPBackend::MATH);
    return out;
  }
  if (allowed & bit(SDPBackend::EFFICIENT_ATTENTION)) why += "EFFICIENT_ATTENTION: Locus has no such kernel; ";
  why += "MATH: not allowed by sdpa_kernel";
  throw NotImplementedError(error_prefix("scaled_dot_product_attention") + "no available kernel (" + why + ")");
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                                    double dropout_p, bool is_causal, std::optional<double> scale) {
  const ops::PublicOp op("scaled_dot_product_attention",
                         {{query, "query"}, {key, "key"}, {value, "value"}, {attn_mask, "attn_mask"}});
  const std::string prefix = error_prefix("scaled_dot_product_attention");
  check_operands(query, key, value);
  if (attn_mask.defined() && is_causal)
    throw ValueError(prefix + "attn_mask should not be set when is_causal=True (the causal mask is the mask)");
  if (!(dropout_p >= 0 && dropout_p <= 1))
    throw ValueError(prefix + "dropout_p must be between 0 and 1, got " + std::to_string(dropout_p));
  if (ops::autocast_active())
    return ops::autocast(
        ops::OpId::ScaledDotProductAttention,
        [&](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& m) {
          return attend(q, k, v, m, dropout_p, is_causal, scale);
        },
        query, key, value, attn_mask);
  return attend(query, key, value, attn_mask, dropout_p, is_causal, scale);
}

namespace nn::attention {

sdpa_kernel::sdpa_kernel(const std::vector<SDPBackend>& backends) : previous_(t_allowed) {
  if (backends.empty()) throw ValueError("sdpa_kernel: give at least one backend");
  uint8_t allowed = 0;
  for (SDPBackend b : backends) {
    if (static_cast<int>(b) < 0 || static_cast<int>(b) >= kBackends)
      throw ValueError("sdpa_kernel: unknown backend " + std::to_string(static_cast<int>(b)));
    allowed |= bit(b);
  }
  t_allowed = allowed;
}

sdpa_kernel::~sdpa_kernel() { t_allowed = previous_; }

SDPBackend last_sdpa_backend() noexcept { return t_last; }

int64_t sdpa_backend_calls(SDPBackend backend) noexcept {
  const int i = static_cast<int>(backend);
  return i >= 0 && i < kBackends ? g_calls[static_cast<size_t>(i)].load(std::memory_order_relaxed) : 0;
}

const char* sdpa_backend_name(SDPBackend backend) noexcept {
  switch (backend) {
    case SDPBackend::MATH: return "MATH";
    case SDPBackend::FLASH_ATTENTION: return "FLASH_ATTENTION";
    case SDPBackend::EFFICIENT_ATTENTION: return "EFFICIENT_ATTENTION";
    case SDPBackend::CUDNN_ATTENTION: return "CUDNN_ATTENTION";
  }
  return "unknown";
}

}  // namespace nn::attention
}  // namespace locus
