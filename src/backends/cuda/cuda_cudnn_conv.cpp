// 2-d convolutions through cuDNN 9's graph API, built with NVIDIA's cudnn-frontend headers
// (installed by scripts/install-deps.sh). See Note [cuDNN convolutions].

#include "src/backends/cuda/cuda_cudnn_conv.h"

#include <array>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "locus/errors.h"
#include "locus/precision.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_cudnn_handles.h"
#include "src/backends/cuda/cuda_launchers.h"
#include "src/backends/cuda/cuda_memory.h"
#include "src/backends/cuda/cuda_streams.h"

// Note [cuDNN convolutions]
// Each pass (fprop, dgrad, wgrad) is a one-node cuDNN graph over contiguous NCHW tensors; the
// groups follow from the filter's channel count, as cuDNN reads them. A built graph is an
// execution plan, kept per thread and device (as the cuDNN handle it was built with) under a key
// of everything that changes the plan: the pass, the dtype, every size of the geometry, and the
// TF32 switch. Building costs milliseconds to seconds (heuristics, sometimes runtime
// compilation), executing microseconds, so a training loop builds each shape once.
//
// Engine choice, in cuDNN's terms:
// - float32 without TF32 (cuda::set_allow_tf32 / set_float32_matmul_precision("highest"), the
//   default) leaves out the engines with the TENSOR_CORE note, which compute float32 in TF32: one
//   switch governs products and convolutions, where PyTorch has one for each with different
//   defaults.
// - NONDETERMINISTIC engines (atomics in wgrad and dgrad) are left out, so a convolution's
//   gradients are the same on every run, as everywhere else in Locus; PyTorch's default allows
//   them. DOWN_CONVERT_INPUTS engines, which compute in a narrower type than asked, are left out
//   as PyTorch leaves them out.
// - Where no engine remains (or cuDNN refuses the geometry), the graph is remembered as absent
//   and the pass declines: the front end runs the general path (im2col and cuBLAS).
// The workspace comes from Locus's caching allocator on the current stream, so it is counted in
// the memory statistics. The bias is added, and its gradient summed, by launch_conv_bias beside
// the graph: the plain convolution has engines for every geometry, a fused bias does not.

namespace locus::cuda_backend {
namespace {

namespace fe = cudnn_frontend;
using Pass = ops::ConvArgs::Pass;

// The variant pack's tensor ids.
enum : int64_t { kImage = 1, kFilter = 2, kResponse = 3 };

using PlanKey = std::array<int64_t, 20>;

PlanKey key_of(const ops::ConvArgs& a, bool tf32) {
  return {static_cast<int64_t>(a.pass), static_cast<int64_t>(a.dtype), a.device, tf32, a.n, a.c_in, a.h, a.w,
          a.c_out, a.kh, a.kw, a.out_h, a.out_w, a.groups, a.pad_h, a.pad_w, a.stride_h, a.stride_w,
          a.dilation_h, a.dilation_w};
}

struct Plan {
  std::unique_ptr<fe::graph::Graph> graph;  ///< null: cuDNN has no engine for this key
  int64_t workspace = 0;
};

// A contiguous 4-d tensor of the graph.
fe::graph::Tensor_attributes tensor(const char* name, int64_t uid, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  return fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim({d0, d1, d2, d3}).set_stride(
      {d1 * d2 * d3, d2 * d3, d3, 1});
}

template <class Attributes>
Attributes geometry(const ops::ConvArgs& a) {
  return Attributes().set_padding({a.pad_h, a.pad_w}).set_stride({a.stride_h, a.stride_w}).set_dilation(
      {a.dilation_h, a.dilation_w});
}

// The graph of one pass, built into a plan; a null graph where cuDNN has none.
Plan build(const ops::ConvArgs& a, bool tf32, cudnnHandle_t handle) {
  auto g = std::make_unique<fe::graph::Graph>();
  const fe::DataType_t compute = a.dtype == DType::Float64 ? fe::DataType_t::DOUBLE : fe::DataType_t::FLOAT;
  g->set_io_data_type(cudnn_io_type(a.dtype)).set_intermediate_data_type(compute).set_compute_data_type(compute);
  const auto image = [&](const char* name) { return tensor(name, kImage, a.n, a.c_in, a.h, a.w); };
  const auto filter = [&](const char* name) { return tensor(name, kFilter, a.c_out, a.c_in / a.groups, a.kh, a.kw); };
  const auto response = [&](const char* name) { return tensor(name, kResponse, a.n, a.c_out, a.out_h, a.out_w); };
  std::shared_ptr<fe::graph::Tensor_attributes> result;
  fe::graph::Tensor_attributes shape;
  switch (a.pass) {
    case Pass::Forward:
      result = g->conv_fprop(g->tensor(image("input")), g->tensor(filter("weight")),
                             geometry<fe::graph::Conv_fprop_attributes>(a));
      shape = response("output");
      break;
    case Pass::BackwardData:
      result = g->conv_dgrad(g->tensor(response("grad_output")), g->tensor(filter("weight")),
                             geometry<fe::graph::Conv_dgrad_attributes>(a));
      shape = image("grad_input");
      break;
    case Pass::BackwardWeights:
      result = g->conv_wgrad(g->tensor(response("grad_output")), g->tensor(image("input")),
                             geometry<fe::graph::Conv_wgrad_attributes>(a));
      shape = filter("grad_weight");
      break;
  }
  result->set_name(shape.get_name()).set_uid(shape.get_uid()).set_dim(shape.get_dim()).set_stride(shape.get_stride());
  result->set_output(true);
  std::vector<fe::NumericalNote_t> left_out{fe::NumericalNote_t::NONDETERMINISTIC,
                                            fe::NumericalNote_t::DOWN_CONVERT_INPUTS};
  if (a.dtype == DType::Float32 && !tf32) left_out.push_back(fe::NumericalNote_t::TENSOR_CORE);
  Plan plan;
  if (!g->validate().is_good() || !g->build_operation_graph(handle).is_good() ||
      !g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}).is_good())
    return plan;
  g->deselect_numeric_notes(left_out);
  if (!g->check_support().is_good() || !g->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE).is_good() ||
      !g->get_workspace_size(plan.workspace).is_good())
    return plan;
  plan.graph = std::move(g);
  return plan;
}

// The calling thread's plan for `a` (Note [cuDNN convolutions]).
const Plan& plan_for(const ops::ConvArgs& a, cudnnHandle_t handle) {
  const bool tf32 = a.dtype == DType::Float32 && cuda::allow_tf32();
  return cached_graph<PlanKey, Plan>(key_of(a, tf32), [&] { return build(a, tf32, handle); });
}

}  // namespace

bool cudnn_convolution(const ops::ConvArgs& a) {
  if (!cudnn_runtime_matches()) return false;
  if (a.n == 0 || a.c_in == 0 || a.c_out == 0 || a.out_h == 0 || a.out_w == 0) return false;
  // A misaligned view among the graph's operands declines, and the general path runs (the bias
  // goes to Locus's own kernel, which takes any element alignment).
  if (!cudnn_aligned({a.input, a.weight, a.grad_output, a.output, a.grad_input, a.grad_weight})) return false;
  activate(a.device);
  const cudaStream_t stream = current_native_stream(a.device);
  const cudnnHandle_t handle = cudnn_handle(a.device);
  const Plan& plan = plan_for(a, handle);
  if (!plan.graph) return false;
  check_cudnn(cudnnSetStream(handle, stream), "cudnnSetStream");
  std::unordered_map<int64_t, void*> pack;
  switch (a.pass) {
    case Pass::Forward:
      pack = {{kImage, const_cast<char*>(a.input)}, {kFilter, const_cast<char*>(a.weight)}, {kResponse, a.output}};
      break;
    case Pass::BackwardData:
      pack = {{kResponse, const_cast<char*>(a.grad_output)}, {kFilter, const_cast<char*>(a.weight)},
              {kImage, a.grad_input}};
      break;
    case Pass::BackwardWeights:
      pack = {{kResponse, const_cast<char*>(a.grad_output)}, {kImage, const_cast<char*>(a.input)},
              {kFilter, a.grad_weight}};
      break;
  }
  const detail::DataPtr workspace =
      plan.workspace > 0 ? device_scratch(a.device, static_cast<size_t>(plan.workspace)) : detail::DataPtr();
  auto status = plan.graph->execute(handle, pack, workspace.get());
  if (!status.is_good()) throw Error("cuDNN error during locus::convolution: " + status.get_message());
  const bool bias = a.pass == Pass::Forward ? a.bias != nullptr : a.pass == Pass::BackwardWeights && a.grad_bias;
  if (bias) check(launch_conv_bias(a, stream), "locus::convolution (bias)");
  return true;
}

}  // namespace locus::cuda_backend
