// The pointwise half of an LSTM or GRU step: one kernel each way where the device has one (Note
// [Fused recurrent cells]), else composed of elementwise ops; and a whole recurrence in one call
// where the device has one (cuDNN's, Note [cuDNN RNNs] in src/backends/cuda/cuda_cudnn_rnn.cpp).

#include <optional>
#include <tuple>
#include <vector>

#include "locus/autograd.h"
#include "locus/elementwise.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "locus/shape_ops.h"
#include "src/autograd/node.h"
#include "src/ops/autocast.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/recurrent.h"
#include "src/ops/structured_call.h"

namespace locus::ops {
namespace {

// Note [Fused recurrent cells]
// An LSTM step is one product (h W_hh^T added onto the step's rows of the input's projection)
// and then a dozen elementwise ops on [B, 4H] and [B, H]: four activations, c' and h'. Composed,
// each is a pass over memory and a node that keeps its operands, and the language model's step
// spent more in them than in its products. Where the device has KernelTable::rnn_cell (the CPU's,
// cpu_rnn_cell.cpp; CUDA's, cuda_rnn_cell.cu), the step is one kernel that writes h' and c' and
// keeps the activated gates, and one node whose backward is one kernel (PyTorch's
// _thnn_fused_lstm_cell on CUDA; its names, ThnnFusedLstmCellBackward0 and
// ThnnFusedGruCellBackward0). The LSTM's h' and c' are the two rows of one [2, B, H] result,
// unbound into two contiguous tensors (one UnbindBackward0 node joins their gradients), so the
// cell has one output for autograd. The backward reads c, c' and the activations; c and c' are
// declared saved tensors, so an in-place change to either fails the version check as in
// PyTorch. The composition below is the path without the kernel (sim configured without
// "lstm_cell" or "gru_cell"; tests compare the two) and the fused node's double backward.
// float16 and bfloat16 steps compute in float32, as PyTorch's kernels do.

std::tuple<Tensor, Tensor> composed_lstm(const Tensor& gates, const Tensor& c) {
  const int64_t h = gates.size(1) / 4;
  const std::vector<Tensor> g = split(gates, {h, h, h, h}, 1);
  const Tensor in_gate = sigmoid(g[0]), forget_gate = sigmoid(g[1]), cell_gate = locus::tanh(g[2]),
               out_gate = sigmoid(g[3]);
  const Tensor c_next = forget_gate * c + in_gate * cell_gate;
  return {out_gate * locus::tanh(c_next), c_next};
}

Tensor composed_gru(const Tensor& gi, const Tensor& gh, const Tensor& h) {
  const int64_t n = gi.size(1) / 3;
  const std::vector<Tensor> i = split(gi, {n, n, n}, 1), hh = split(gh, {n, n, n}, 1);
  const Tensor reset_gate = sigmoid(i[0] + hh[0]), update_gate = sigmoid(i[1] + hh[1]);
  const Tensor new_gate = locus::tanh(i[2] + reset_gate * hh[2]);
  return (h - new_gate) * update_gate + new_gate;
}

DType compute_dtype(DType dtype) { return dtype == DType::Float16 || dtype == DType::BFloat16 ? DType::Float32 : dtype; }

// `t` in `dtype`, contiguous, outside autograd.
Tensor dense_in(const Tensor& t, DType dtype) {
  NoGradGuard no_grad;
  return t.to(dtype).contiguous();
}

RnnCellArgs sizes_of(RnnCellArgs::Cell cell, const StructuredCall& call, DType compute, int64_t batch, int64_t hidden) {
  RnnCellArgs a;
  a.cell = cell;
  a.device = call.device_index();
  a.dtype = compute;
  a.batch = batch, a.hidden = hidden;
  return a;
}

Tensor fused_lstm(const KernelTable* table, const StructuredCall& call, const Tensor& gates, const Tensor& cx, DType dtype) {
  const Device device = call.device();
  const DType compute = compute_dtype(dtype);
  const int64_t batch = gates.size(0), hidden = cx.size(1);
  const Tensor g = dense_in(gates, compute), c = dense_in(cx, compute);
  const bool grad = call.needs_grad();
  const Tensor hc = empty_on(Shape{2, batch, hidden}, compute, device);
  const Tensor saved = grad ? empty_on(Shape{batch, 4 * hidden}, compute, device) : Tensor();
  const RnnCellArgs sizes = sizes_of(RnnCellArgs::Cell::Lstm, call, compute, batch, hidden);
  RnnCellArgs a = sizes;
  a.gates = dense_operand(g, "gates");
  a.state = dense_operand(c, "cx");
  a.out = dense_result(hc);
  a.workspace = dense_result(saved);
  wait_for_host(g), wait_for_host(c);
  table->rnn_cell(a);
  const Tensor result = hc.to(dtype);
  if (!grad) return result;
  const DType gates_dtype = gates.dtype(), state_dtype = cx.dtype();
  const Tensor held = hc.detach();
  autograd::FunctionNode& node = autograd::record(
      result, "ThnnFusedLstmCellBackward0",
      [=](const Tensor& grad_out) -> std::vector<Tensor> {
        const Tensor go = dense_in(grad_out, compute);
        const Tensor grad_gates = empty_on(Shape{batch, 4 * hidden}, compute, device),
                     grad_c = empty_on(Shape{batch, hidden}, compute, device);
        RnnCellArgs back = sizes;
        back.pass = RnnCellArgs::Pass::Backward;
        back.state = dense_operand(c, "cx");
        back.forward_out = dense_operand(held, "cy");
        back.activations = dense_operand(saved, "activations");
        back.grad_out = dense_operand(go);
        back.grad_gates = dense_result(grad_gates);
        back.grad_state = dense_result(grad_c);
        wait_for_host(go);
        table->rnn_cell(back);
        return {grad_gates.to(gates_dtype), grad_c.to(state_dtype)};
      },
      {&gates, &cx}, {{c, cx}, {held, result}});
  node.recompute_with({gates, cx}, [](const std::vector<Tensor>& in) {
    const auto [h, c_next] = composed_lstm(in[0], in[1]);
    return stack({h, c_next}, 0);
  });
  return result;
}

Tensor fused_gru(const KernelTable* table, const StructuredCall& call, const Tensor& gi, const Tensor& gh,
                 const Tensor& hx, DType dtype) {
  const Device device = call.device();
  const DType compute = compute_dtype(dtype);
  const int64_t batch = gi.size(0), hidden = hx.size(1);
  const Tensor xi = dense_in(gi, compute), xh = dense_in(gh, compute), h = dense_in(hx, compute);
  const bool grad = call.needs_grad();
  const Tensor out = empty_on(Shape{batch, hidden}, compute, device);
  const Tensor saved = grad ? empty_on(Shape{batch, 4 * hidden}, compute, device) : Tensor();
  const RnnCellArgs sizes = sizes_of(RnnCellArgs::Cell::Gru, call, compute, batch, hidden);
  RnnCellArgs a = sizes;
  a.gates = dense_operand(xi, "gi");
  a.hidden_gates = dense_operand(xh, "gh");
  a.state = dense_operand(h, "hx");
  a.out = dense_result(out);
  a.workspace = dense_result(saved);
  wait_for_host(xi), wait_for_host(xh), wait_for_host(h);
  table->rnn_cell(a);
  const Tensor result = out.to(dtype);
  if (!grad) return result;
  const DType gi_dtype = gi.dtype(), gh_dtype = gh.dtype(), state_dtype = hx.dtype();
  autograd::FunctionNode& node = autograd::record(
      result, "ThnnFusedGruCellBackward0",
      [=](const Tensor& grad_out) -> std::vector<Tensor> {
        const Tensor go = dense_in(grad_out, compute);
        const Tensor grad_gi = empty_on(Shape{batch, 3 * hidden}, compute, device),
                     grad_gh = empty_on(Shape{batch, 3 * hidden}, compute, device),
                     grad_h = empty_on(Shape{batch, hidden}, compute, device);
        RnnCellArgs back = sizes;
        back.pass = RnnCellArgs::Pass::Backward;
        back.state = dense_operand(h, "hx");
        back.activations = dense_operand(saved, "activations");
        back.grad_out = dense_operand(go);
        back.grad_gates = dense_result(grad_gi);
        back.grad_hidden_gates = dense_result(grad_gh);
        back.grad_state = dense_result(grad_h);
        wait_for_host(go);
        table->rnn_cell(back);
        return {grad_gi.to(gi_dtype), grad_gh.to(gh_dtype), grad_h.to(state_dtype)};
      },
      {&gi, &gh, &hx}, {{h, hx}});
  node.recompute_with({gi, gh, hx}, [](const std::vector<Tensor>& in) { return composed_gru(in[0], in[1], in[2]); });
  return result;
}

RnnArgs::Mode args_mode(RecurrenceMode mode) {
  switch (mode) {
    case RecurrenceMode::RnnTanh: return RnnArgs::Mode::RnnTanh;
    case RecurrenceMode::RnnRelu: return RnnArgs::Mode::RnnRelu;
    case RecurrenceMode::Gru: return RnnArgs::Mode::Gru;
    default: return RnnArgs::Mode::Lstm;
  }
}

std::vector<const char*> operands_of(const std::vector<Tensor>& tensors) {
  std::vector<const char*> out;
  for (const Tensor& t : tensors) out.push_back(dense_operand(t, "weight"));
  return out;
}

std::vector<char*> results_of(const std::vector<Tensor>& tensors) {
  std::vector<char*> out;
  for (const Tensor& t : tensors) out.push_back(dense_result(t, "weight gradient"));
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& gates, const Tensor& cx) {
  const StructuredCall call(OpId::LstmCell, {{gates, "gates"}, {cx, "cx"}});
  const DType dtype = promote_types(gates.dtype(), cx.dtype());
  const KernelTable* table = is_floating_point(dtype) && gates.numel() > 0
                                 ? call.fused(&KernelTable::rnn_cell, compute_dtype(dtype))
                                 : nullptr;
  if (!table) return composed_lstm(gates, cx);
  const std::vector<Tensor> hc = unbind(fused_lstm(table, call, gates, cx, dtype), 0);
  return {hc[0], hc[1]};
}

Tensor gru_cell(const Tensor& gi, const Tensor& gh, const Tensor& hx) {
  const StructuredCall call(OpId::GruCell, {{gi, "gi"}, {gh, "gh"}, {hx, "hx"}});
  const DType dtype = promote_types(promote_types(gi.dtype(), gh.dtype()), hx.dtype());
  const KernelTable* table =
      is_floating_point(dtype) && gi.numel() > 0 ? call.fused(&KernelTable::rnn_cell, compute_dtype(dtype)) : nullptr;
  if (!table) return composed_gru(gi, gh, hx);
  return fused_gru(table, call, gi, gh, hx, dtype);
}

std::optional<std::tuple<Tensor, Tensor, Tensor>> fused_recurrence(const RecurrenceShape& shape, const Tensor& rows,
                                                                   const std::vector<int64_t>& batch_sizes,
                                                                   const Tensor& hx, const Tensor& cx,
                                                                   const std::vector<Tensor>& weights) {
  if (autocast_active() || weights.empty() || batch_sizes.empty() || rows.numel() == 0) return std::nullopt;
  const StructuredCall call(OpId::Recurrence, {{rows, "input"}, {hx, "hx"}, {cx, "cx"}, {weights[0], "weight_ih_l0"}});
  const DType dtype = weights[0].dtype();
  const KernelTable* table = call.fused(&KernelTable::rnn, dtype);
  if (!table) return std::nullopt;
  const Device device = call.device();
  const bool lstm = shape.mode == RecurrenceMode::Lstm;
  Tensor x, h, c;
  std::vector<Tensor> w;
  {
    NoGradGuard no_grad;
    x = rows.contiguous(), h = hx.contiguous();
    if (lstm) c = cx.contiguous();
    for (const Tensor& t : weights) w.push_back(t.contiguous());
  }
  RnnArgs sizes;
  sizes.mode = args_mode(shape.mode);
  sizes.device = call.device_index();
  sizes.dtype = dtype;
  sizes.input_size = shape.input_size, sizes.hidden = shape.hidden_size, sizes.proj = shape.proj_size;
  sizes.layers = shape.num_layers, sizes.bidirectional = shape.bidirectional, sizes.bias = shape.bias;
  sizes.steps = static_cast<int64_t>(batch_sizes.size());
  sizes.weight_count = static_cast<int64_t>(w.size());
  int64_t reserve_bytes = 0;
  RnnArgs query = sizes;
  query.batch_sizes = batch_sizes.data();
  query.reserve_bytes = &reserve_bytes;
  if (!table->rnn(query)) return std::nullopt;

  std::vector<Tensor> inputs{rows, hx, cx};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  const bool grad = autograd::needs_grad(inputs);
  const int64_t out = shape.proj_size > 0 ? shape.proj_size : shape.hidden_size, directions = shape.bidirectional ? 2 : 1;
  const int64_t batch = batch_sizes[0], slices = shape.num_layers * directions;
  const int64_t ny = x.size(0) * directions * out, nh = slices * batch * out, nc = lstm ? slices * batch * shape.hidden_size : 0;
  const std::vector<int64_t> part_sizes = lstm ? std::vector<int64_t>{ny, nh, nc} : std::vector<int64_t>{ny, nh};
  const Tensor flat = empty_on(Shape{ny + nh + nc}, dtype, device);
  const Tensor reserve = grad ? empty_on(Shape{reserve_bytes}, kUInt8, device) : Tensor();
  for (const Tensor* t : {&x, &h, &c})
    if (t->defined()) wait_for_host(*t);
  for (const Tensor& t : w) wait_for_host(t);
  {
    const std::vector<Tensor> parts = split(flat, part_sizes, 0);
    const std::vector<const char*> wp = operands_of(w);
    RnnArgs a = sizes;
    a.pass = RnnArgs::Pass::Forward;
    a.batch_sizes = batch_sizes.data();
    a.x = dense_operand(x, "input"), a.hx = dense_operand(h, "hx"), a.cx = dense_operand(c, "cx");
    a.weights = wp.data();
    a.reserve = grad ? dense_result(reserve, "reserve") : nullptr;
    a.y = dense_result(parts[0]), a.hy = dense_result(parts[1]), a.cy = lstm ? dense_result(parts[2]) : nullptr;
    table->rnn(a);
  }
  if (grad) {
    const Tensor held = flat.detach();
    const std::vector<int64_t> steps = batch_sizes;
    autograd::FunctionNode& node = autograd::record(
        flat, "CudnnRnnBackward0",
        [=](const Tensor& grad_flat) -> std::vector<Tensor> {
          const std::vector<Tensor> g = split(grad_flat.contiguous(), part_sizes, 0);
          const Tensor dx = empty_on(x.shape(), dtype, device), dh = empty_on(h.shape(), dtype, device);
          const Tensor dc = lstm ? empty_on(c.shape(), dtype, device) : Tensor();
          std::vector<Tensor> grad_weights;
          for (const Tensor& t : w) grad_weights.push_back(empty_on(t.shape(), dtype, device));
          const std::vector<const char*> wp = operands_of(w);
          const std::vector<char*> gp = results_of(grad_weights);
          RnnArgs back = sizes;
          back.pass = RnnArgs::Pass::Backward;
          back.batch_sizes = steps.data();
          back.x = dense_operand(x, "input"), back.hx = dense_operand(h, "hx"), back.cx = dense_operand(c, "cx");
          back.weights = wp.data();
          back.reserve = dense_result(reserve, "reserve");
          back.forward_y = dense_operand(held.narrow(0, 0, ny), "output");
          back.dy = dense_operand(g[0]), back.dhy = dense_operand(g[1]), back.dcy = lstm ? dense_operand(g[2]) : nullptr;
          back.dx = dense_result(dx), back.dhx = dense_result(dh), back.dcx = dense_result(dc);
          back.grad_weights = gp.data();
          if (!table->rnn(back)) throw Error("locus::rnn: the backend declined the backward of a recurrence it ran");
          std::vector<Tensor> grads{dx, dh, dc};
          grads.insert(grads.end(), grad_weights.begin(), grad_weights.end());
          return grads;
        },
        inputs, {{x, rows}, {h, hx}, {c, cx}, {held, flat}});
    for (size_t i = 0; i < w.size(); ++i) node.save(w[i], weights[i], false, node.next_functions()[3 + i]);
    node.no_double_backward();
  }
  const std::vector<Tensor> parts = split(flat, part_sizes, 0);
  return std::make_tuple(parts[0].view({x.size(0), directions * out}), parts[1].view({slices, batch, out}),
                         lstm ? parts[2].view({slices, batch, shape.hidden_size}) : Tensor());
}

}  // namespace locus::ops
