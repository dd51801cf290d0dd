// Scaled dot-product attention through cuDNN 9's graph API (cudnn-frontend's sdpa and
// sdpa_backward nodes). See Note [cuDNN attention].

#include "src/backends/cuda/cuda_cudnn_attention.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "locus/errors.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_cudnn_handles.h"
#include "src/backends/cuda/cuda_memory.h"
#include "src/backends/cuda/cuda_streams.h"

// Note [cuDNN attention]
// The front end hands over q [B, L, E], k [B, S, E] and v [B, S, Ev], contiguous, in float16 or
// bfloat16 (Note [Attention paths]); cuDNN sees them as [B, 1, L, E] (one head per batch entry:
// the heads are already folded into B). Forward is cuDNN's flash attention with its softmax
// statistics (the rows' log-sum-exp, float32 [B, 1, L, 1]) as output; Backward takes them with
// the output and its gradient. Both passes compute in float32.
// - The causal mask is cuDNN's top-left diagonal, as PyTorch's is_causal. An additive mask is a
//   bias of the operands' dtype with contiguous rows, either one [L, S] matrix for the whole
//   batch or [B, L, S]; any other layout declines (the front end makes one of the two).
// - Dropout is cuDNN's own Philox draw, from the seed and offset the front end took from the
//   global generator; both passes get the same pair, so the backward drops what the forward did.
//   The words differ from the CPU kernel's: the paths give different masks for one seed.
// - The backward is asked for cuDNN's deterministic algorithm, so gradients are the same on
//   every run, as everywhere else in Locus.
// - A graph is built once per thread, device and geometry (the pass, dtype, lengths, feature
//   sizes, mask form, causal, dropout probability and scale) and kept, as the convolutions' plans
//   are (Note [cuDNN convolutions]). A forward whose backward follows builds both, and declines
//   when either has no engine: a forward taken by cuDNN then always has its backward. Where cuDNN
//   has no engine (float32, compute capability below 8.0, head sizes it does not take), the graph
//   is remembered as absent and the call declines; the front end then takes the composition.
// - Workspaces and the seed/offset pair come from the caching allocator on the current stream.
//   Every pointer must be 16-byte aligned, as the graph declares its tensors (the front end copies
//   a view that starts elsewhere); the seed and offset get 16 bytes each.

namespace locus::cuda_backend {
namespace {

namespace fe = cudnn_frontend;
using Pass = ops::AttentionArgs::Pass;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

// The variant pack's tensor ids.
enum : int64_t { kQ = 1, kK, kV, kO, kStats, kBias, kSeed, kOffset, kGradO, kGradQ, kGradK, kGradV };

enum class Bias : int64_t { None, Shared, PerBatch };

// How `a`'s mask reads as a cuDNN bias; false when it reads as neither form.
bool bias_form(const ops::AttentionArgs& a, Bias* form) {
  if (!a.mask) {
    *form = Bias::None;
    return true;
  }
  if (a.mask_col_stride != 1 || a.mask_row_stride != a.keys) return false;
  bool shared = true, per_batch = true;
  for (int64_t b = 0; b < a.batch; ++b) {
    shared = shared && a.mask_offsets[b] == 0;
    per_batch = per_batch && a.mask_offsets[b] == b * a.length * a.keys;
  }
  if (!shared && !per_batch) return false;
  *form = shared ? Bias::Shared : Bias::PerBatch;
  return true;
}

using GraphKey = std::array<int64_t, 12>;

GraphKey key_of(const ops::AttentionArgs& a, Pass pass, Bias bias) {
  int64_t scale_bits = 0;
  const double scale = a.scale;
  std::memcpy(&scale_bits, &scale, sizeof(scale_bits));
  int64_t dropout_bits = 0;
  const double p = a.dropout_p;
  std::memcpy(&dropout_bits, &p, sizeof(dropout_bits));
  return {static_cast<int64_t>(pass), static_cast<int64_t>(a.dtype), a.device, a.batch, a.length, a.keys, a.features,
          a.value_features, static_cast<int64_t>(bias), a.causal, dropout_bits, scale_bits};
}

struct Graph {
  std::unique_ptr<fe::graph::Graph> graph;  ///< null: cuDNN has no engine for this key
  int64_t workspace = 0;
};

// A contiguous [B, 1, rows, cols] tensor of the graph.
fe::graph::Tensor_attributes tensor(const char* name, int64_t uid, int64_t batch, int64_t rows, int64_t cols) {
  return fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim({batch, 1, rows, cols}).set_stride(
      {rows * cols, rows * cols, cols, 1});
}

// The options both passes share: scale, causal mask, bias and dropout.
template <class Attributes>
void describe(Attributes& options, fe::graph::Graph& g, const ops::AttentionArgs& a, Bias bias) {
  options.set_attn_scale(static_cast<float>(a.scale));
  if (a.causal) options.set_causal_mask(true);
  if (bias != Bias::None)
    options.set_bias(g.tensor(tensor("bias", kBias, bias == Bias::Shared ? 1 : a.batch, a.length, a.keys)));
  if (a.dropout_p > 0) {
    const auto word = [&](const char* name, int64_t uid) {
      return g.tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim({1, 1, 1, 1}).set_stride(
          {1, 1, 1, 1}).set_data_type(fe::DataType_t::INT64));
    };
    options.set_dropout(static_cast<float>(a.dropout_p), word("seed", kSeed), word("offset", kOffset));
  }
}

Graph build(const ops::AttentionArgs& a, Pass pass, Bias bias, cudnnHandle_t handle) {
  auto g = std::make_unique<fe::graph::Graph>();
  g->set_io_data_type(cudnn_io_type(a.dtype))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const TensorPtr q = g->tensor(tensor("q", kQ, a.batch, a.length, a.features));
  const TensorPtr k = g->tensor(tensor("k", kK, a.batch, a.keys, a.features));
  const TensorPtr v = g->tensor(tensor("v", kV, a.batch, a.keys, a.value_features));
  const fe::graph::Tensor_attributes out = tensor("out", kO, a.batch, a.length, a.value_features);
  const fe::graph::Tensor_attributes stats =
      tensor("stats", kStats, a.batch, a.length, 1).set_data_type(fe::DataType_t::FLOAT);
  const auto output = [](const TensorPtr& t, const fe::graph::Tensor_attributes& as) {
    t->set_output(true).set_name(as.get_name()).set_uid(as.get_uid()).set_dim(as.get_dim()).set_stride(as.get_stride());
  };
  if (pass == Pass::Forward) {
    auto options = fe::graph::SDPA_attributes().set_name("attention").set_generate_stats(true);
    describe(options, *g, a, bias);
    auto [o, lse] = g->sdpa(q, k, v, options);
    output(o, out);
    output(lse, stats);
    lse->set_data_type(fe::DataType_t::FLOAT);
  } else {
    auto options = fe::graph::SDPA_backward_attributes().set_name("attention_backward").set_deterministic_algorithm(true);
    describe(options, *g, a, bias);
    auto [dq, dk, dv] = g->sdpa_backward(q, k, v, g->tensor(out), g->tensor(tensor("grad_out", kGradO, a.batch, a.length, a.value_features)),
                                         g->tensor(stats), options);
    output(dq, tensor("grad_q", kGradQ, a.batch, a.length, a.features));
    output(dk, tensor("grad_k", kGradK, a.batch, a.keys, a.features));
    output(dv, tensor("grad_v", kGradV, a.batch, a.keys, a.value_features));
  }
  Graph built;
  if (!g->validate().is_good() || !g->build_operation_graph(handle).is_good() ||
      !g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}).is_good() ||
      !g->check_support().is_good() || !g->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE).is_good() ||
      !g->get_workspace_size(built.workspace).is_good())
    return built;
  built.graph = std::move(g);
  return built;
}

// The calling thread's graph for `a`'s pass.
const Graph& graph_for(const ops::AttentionArgs& a, Pass pass, Bias bias, cudnnHandle_t handle) {
  return cached_graph<GraphKey, Graph>(key_of(a, pass, bias), [&] { return build(a, pass, bias, handle); });
}

}  // namespace

bool cudnn_attention(const ops::AttentionArgs& a) {
  if (!cudnn_runtime_matches()) return false;
  if (a.dtype != DType::Float16 && a.dtype != DType::BFloat16) return false;
  if (a.batch == 0 || a.length == 0 || a.keys == 0 || a.features == 0 || a.value_features == 0) return false;
  Bias bias;
  if (!bias_form(a, &bias)) return false;
  if (!cudnn_aligned({a.q, a.k, a.v, a.out, a.lse, bias != Bias::None ? a.mask : nullptr})) return false;
  if (a.pass == Pass::Backward && !cudnn_aligned({a.grad_out, a.grad_q, a.grad_k, a.grad_v})) return false;
  activate(a.device);
  const cudaStream_t stream = current_native_stream(a.device);
  const cudnnHandle_t handle = cudnn_handle(a.device);
  const Graph& graph = graph_for(a, a.pass, bias, handle);
  if (!graph.graph) return false;
  if (a.pass == Pass::Forward && a.backward_follows && !graph_for(a, Pass::Backward, bias, handle).graph) return false;
  check_cudnn(cudnnSetStream(handle, stream), "cudnnSetStream");
  std::unordered_map<int64_t, void*> pack = {{kQ, const_cast<char*>(a.q)},
                                             {kK, const_cast<char*>(a.k)},
                                             {kV, const_cast<char*>(a.v)},
                                             {kO, a.out},
                                             {kStats, a.lse}};
  if (a.pass == Pass::Backward) {
    pack[kGradO] = const_cast<char*>(a.grad_out);
    pack[kGradQ] = a.grad_q, pack[kGradK] = a.grad_k, pack[kGradV] = a.grad_v;
  }
  if (bias != Bias::None) pack[kBias] = const_cast<char*>(a.mask);
  // The seed and offset live in device memory, as cuDNN reads them there, each 16-byte aligned
  // as the graph declares them.
  detail::DataPtr rng;
  if (a.dropout_p > 0) {
    rng = device_scratch(a.device, 4 * sizeof(int64_t));
    const int64_t words[4] = {static_cast<int64_t>(a.seed), 0, static_cast<int64_t>(a.offset), 0};
    // From pageable memory the copy has read `words` when it returns.
    check(cudaMemcpyAsync(rng.get(), words, sizeof(words), cudaMemcpyHostToDevice, stream), "locus::scaled_dot_product_attention");
    pack[kSeed] = rng.get();
    pack[kOffset] = static_cast<int64_t*>(rng.get()) + 2;
  }
  const detail::DataPtr workspace =
      graph.workspace > 0 ? device_scratch(a.device, static_cast<size_t>(graph.workspace)) : detail::DataPtr();
  auto status = graph.graph->execute(handle, pack, workspace.get());
  if (!status.is_good()) throw Error("cuDNN error during locus::scaled_dot_product_attention: " + status.get_message());
  return true;
}

}  // namespace locus::cuda_backend
