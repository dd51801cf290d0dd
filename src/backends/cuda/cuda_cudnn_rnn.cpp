// Whole recurrences (nn::RNN, LSTM, GRU) through cuDNN's RNN API. See Note [cuDNN RNNs].

#include "src/backends/cuda/cuda_cudnn_rnn.h"

#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "locus/dtype.h"
#include "locus/precision.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_cudnn_handles.h"
#include "src/backends/cuda/cuda_memory.h"
#include "src/backends/cuda/cuda_streams.h"

// Note [cuDNN RNNs]
// On CUDA a layer without dropout between its layers runs as one cuDNN call each way
// (cudnnRNNForward; cudnnRNNBackwardData_v8 then cudnnRNNBackwardWeights_v8), as PyTorch's
// _cudnn_rnn does, instead of one product and one fused step per time step. The rows are
// cuDNN's SEQ_MAJOR_PACKED layout, which is a PackedSequence's data and, with every sequence of
// full length, the padded time-major batch. Gate order and the two biases are PyTorch's (cuDNN's
// DOUBLE_BIAS; LSTM i, f, g, o; GRU r, z, n with r applied to the recurrent product plus its
// bias), and an LSTM's projection is cuDNN's projSize.
// cuDNN reads its parameters from one weight space in its own layout. Locus's modules keep
// PyTorch's separate parameters (what state_dict, optimizers and replicas see), so each call
// copies them into a scratch weight space at the places cudnnGetRNNWeightParams names (one
// device-to-device copy per gate matrix and bias), and the backward copies the gradient space
// back out into one gradient per parameter; PyTorch's flatten_parameters avoids those copies by
// making the parameters views of the weight space, which Locus leaves for later.
// The backend declines (the front end composes the recurrence) for bfloat16, which cuDNN's RNN
// API does not take, when the loaded cuDNN's major version is not the headers', and for sizes
// beyond cuDNN's int32 arguments. float32 computes with TF32 only where cuda::allow_tf32() says so,
// as the products and convolutions.

namespace locus::cuda_backend {
namespace {

using Args = ops::RnnArgs;

int64_t gate_count(Args::Mode mode) {
  switch (mode) {
    case Args::Mode::Lstm: return 4;
    case Args::Mode::Gru: return 3;
    default: return 1;
  }
}

cudnnRNNMode_t cell_mode(Args::Mode mode) {
  switch (mode) {
    case Args::Mode::Lstm: return CUDNN_LSTM;
    case Args::Mode::Gru: return CUDNN_GRU;
    case Args::Mode::RnnRelu: return CUDNN_RNN_RELU;
    default: return CUDNN_RNN_TANH;
  }
}

cudnnDataType_t data_type(DType dtype) {
  switch (dtype) {
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

int64_t out_size(const Args& a) { return a.proj > 0 ? a.proj : a.hidden; }
int64_t directions(const Args& a) { return a.bidirectional ? 2 : 1; }

// The descriptors of one call, destroyed with it.
struct Descriptors {
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
  cudnnTensorDescriptor_t h = nullptr, c = nullptr, matrix = nullptr, bias = nullptr;
  size_t weight_bytes = 0, work_bytes = 0, reserve_bytes = 0;
  std::vector<int32_t> lengths;  // each sequence's steps, longest first

  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    if (rnn) cudnnDestroyRNNDescriptor(rnn);
    if (dropout) cudnnDestroyDropoutDescriptor(dropout);
    if (x) cudnnDestroyRNNDataDescriptor(x);
    if (y) cudnnDestroyRNNDataDescriptor(y);
    for (cudnnTensorDescriptor_t t : {h, c, matrix, bias})
      if (t) cudnnDestroyTensorDescriptor(t);
  }
};

void state_descriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int64_t slices, int64_t batch, int64_t width) {
  const int dims[3] = {static_cast<int>(slices), static_cast<int>(batch), static_cast<int>(width)};
  const int strides[3] = {static_cast<int>(batch * width), static_cast<int>(width), 1};
  check_cudnn(cudnnSetTensorNdDescriptor(desc, type, 3, dims, strides), "cudnnSetTensorNdDescriptor");
}

// Whether every size fits cuDNN's int32 arguments.
bool fits_int32(const Args& a) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  const int64_t batch = a.steps > 0 ? a.batch_sizes[0] : 0;
  int64_t rows = 0;
  for (int64_t t = 0; t < a.steps; ++t) rows += a.batch_sizes[t];
  const int64_t widest = std::max({a.input_size, a.hidden * gate_count(a.mode), out_size(a) * directions(a)});
  return a.steps <= kMax && batch <= kMax && rows * widest <= kMax && a.layers * directions(a) * batch * a.hidden <= kMax;
}

void describe(const Args& a, cudnnHandle_t handle, Descriptors& d) {
  const cudnnDataType_t type = data_type(a.dtype);
  const int64_t batch = a.batch_sizes[0];
  d.lengths.assign(static_cast<size_t>(batch), 0);
  for (int64_t t = 0; t < a.steps; ++t)
    for (int64_t b = 0; b < a.batch_sizes[t]; ++b) ++d.lengths[static_cast<size_t>(b)];
  check_cudnn(cudnnCreateDropoutDescriptor(&d.dropout), "cudnnCreateDropoutDescriptor");
  // No dropout between the layers (the front end composes when there is some): no RNG states.
  check_cudnn(cudnnSetDropoutDescriptor(d.dropout, handle, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  if (a.dtype == DType::Float16) math = CUDNN_TENSOR_OP_MATH;
  else if (a.dtype == DType::Float32 && !cuda::allow_tf32()) math = CUDNN_FMA_MATH;
  const cudnnDataType_t precision = a.dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  check_cudnn(cudnnCreateRNNDescriptor(&d.rnn), "cudnnCreateRNNDescriptor");
  check_cudnn(cudnnSetRNNDescriptor_v8(d.rnn, CUDNN_RNN_ALGO_STANDARD, cell_mode(a.mode),
                                       a.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
                                       a.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
                                       type, precision, math, static_cast<int32_t>(a.input_size),
                                       static_cast<int32_t>(a.hidden), static_cast<int32_t>(out_size(a)),
                                       static_cast<int32_t>(a.layers), d.dropout, CUDNN_RNN_PADDED_IO_DISABLED),
              "cudnnSetRNNDescriptor_v8");
  for (auto [desc, width] : {std::pair{&d.x, a.input_size}, std::pair{&d.y, out_size(a) * directions(a)}}) {
    check_cudnn(cudnnCreateRNNDataDescriptor(desc), "cudnnCreateRNNDataDescriptor");
    check_cudnn(cudnnSetRNNDataDescriptor(*desc, type, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                          static_cast<int>(a.steps), static_cast<int>(batch), static_cast<int>(width),
                                          d.lengths.data(), nullptr),
                "cudnnSetRNNDataDescriptor");
  }
  for (cudnnTensorDescriptor_t* t : {&d.h, &d.c, &d.matrix, &d.bias})
    check_cudnn(cudnnCreateTensorDescriptor(t), "cudnnCreateTensorDescriptor");
  const int64_t slices = a.layers * directions(a);
  state_descriptor(d.h, type, slices, batch, out_size(a));
  state_descriptor(d.c, type, slices, batch, a.hidden);
  check_cudnn(cudnnGetRNNWeightSpaceSize(handle, d.rnn, &d.weight_bytes), "cudnnGetRNNWeightSpaceSize");
  check_cudnn(cudnnGetRNNTempSpaceSizes(handle, d.rnn, CUDNN_FWD_MODE_TRAINING, d.x, &d.work_bytes, &d.reserve_bytes),
              "cudnnGetRNNTempSpaceSizes");
}

// Copies between PyTorch's parameters (`params`, in RnnArgs' order) and cuDNN's weight space:
// into the space with `into_space`, out of it (the gradients) otherwise. Each gate's matrix is
// rows [gate * hidden, (gate + 1) * hidden) of weight_ih or weight_hh, row-major as cuDNN keeps it.
void copy_parameters(const Args& a, cudnnHandle_t handle, const Descriptors& d, char* space, const char* const* params,
                     bool into_space, cudaStream_t stream) {
  const int64_t gates = gate_count(a.mode), elt = static_cast<int64_t>(itemsize(a.dtype));
  const int64_t per_direction = 2 + (a.bias ? 2 : 0) + (a.proj > 0 ? 1 : 0);
  const auto copy = [&](void* place, const char* param, int64_t bytes) {
    if (!place || bytes == 0) return;
    void* dst = into_space ? place : const_cast<char*>(param);
    const void* src = into_space ? static_cast<const void*>(param) : place;
    check(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream),
          "locus::rnn (cuDNN weight space)");
  };
  for (int64_t layer = 0; layer < a.layers; ++layer) {
    for (int64_t direction = 0; direction < directions(a); ++direction) {
      const int64_t pseudo = layer * directions(a) + direction;
      const char* const* p = params + pseudo * per_direction;
      const int64_t in = layer == 0 ? a.input_size : out_size(a) * directions(a);
      for (int64_t lin = 0; lin < 2 * gates; ++lin) {
        void* matrix = nullptr;
        void* bias = nullptr;
        check_cudnn(cudnnGetRNNWeightParams(handle, d.rnn, static_cast<int32_t>(pseudo), d.weight_bytes, space,
                                            static_cast<int32_t>(lin), d.matrix, &matrix, d.bias, &bias),
                    "cudnnGetRNNWeightParams");
        const bool recurrent = lin >= gates;
        const int64_t gate = lin % gates, cols = recurrent ? out_size(a) : in;
        copy(matrix, p[recurrent ? 1 : 0] + gate * a.hidden * cols * elt, a.hidden * cols * elt);
        if (a.bias) copy(bias, p[recurrent ? 3 : 2] + gate * a.hidden * elt, a.hidden * elt);
      }
      if (a.proj > 0) {  // linLayerID 8: an LSTM's recurrent projection
        void* matrix = nullptr;
        void* bias = nullptr;
        check_cudnn(cudnnGetRNNWeightParams(handle, d.rnn, static_cast<int32_t>(pseudo), d.weight_bytes, space, 8,
                                            d.matrix, &matrix, d.bias, &bias),
                    "cudnnGetRNNWeightParams");
        copy(matrix, p[per_direction - 1], a.proj * a.hidden * elt);
      }
    }
  }
}

// The sequences' lengths on the device, as cuDNN's calls read them.
detail::DataPtr device_lengths(const Args& a, const Descriptors& d, cudaStream_t stream) {
  const size_t bytes = d.lengths.size() * sizeof(int32_t);
  detail::DataPtr lengths = device_scratch(a.device, bytes);
  check(cudaMemcpyAsync(lengths.get(), d.lengths.data(), bytes, cudaMemcpyHostToDevice, stream),
        "locus::rnn (sequence lengths)");
  return lengths;
}

detail::DataPtr scratch(int device, size_t bytes) { return bytes ? device_scratch(device, bytes) : detail::DataPtr(); }

}  // namespace

bool cudnn_rnn(const ops::RnnArgs& a) {
  if (!cudnn_runtime_matches() || a.dtype == DType::BFloat16 || a.steps == 0 || !fits_int32(a)) return false;
  activate(a.device);
  const cudaStream_t stream = current_native_stream(a.device);
  const cudnnHandle_t handle = cudnn_handle(a.device);
  check_cudnn(cudnnSetStream(handle, stream), "cudnnSetStream");
  Descriptors d;
  describe(a, handle, d);
  if (a.pass == Args::Pass::Sizes) {
    *a.reserve_bytes = static_cast<int64_t>(d.reserve_bytes);
    return true;
  }
  const detail::DataPtr lengths = device_lengths(a, d, stream);
  const detail::DataPtr weights = scratch(a.device, d.weight_bytes), work = scratch(a.device, d.work_bytes);
  copy_parameters(a, handle, d, static_cast<char*>(weights.get()), a.weights, true, stream);
  const bool lstm = a.mode == Args::Mode::Lstm;
  const auto* lens = static_cast<const int32_t*>(lengths.get());
  if (a.pass == Args::Pass::Forward) {
    check_cudnn(cudnnRNNForward(handle, d.rnn, a.reserve ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE, lens, d.x,
                                a.x, d.y, a.y, d.h, a.hx, a.hy, lstm ? d.c : nullptr, lstm ? a.cx : nullptr,
                                lstm ? a.cy : nullptr, d.weight_bytes, weights.get(), d.work_bytes, work.get(),
                                a.reserve ? d.reserve_bytes : 0, a.reserve),
                "cudnnRNNForward");
    return true;
  }
  check_cudnn(cudnnRNNBackwardData_v8(handle, d.rnn, lens, d.y, a.forward_y, a.dy, d.x, a.dx, d.h, a.hx, a.dhy, a.dhx,
                                      lstm ? d.c : nullptr, lstm ? a.cx : nullptr, lstm ? a.dcy : nullptr,
                                      lstm ? a.dcx : nullptr, d.weight_bytes, weights.get(), d.work_bytes, work.get(),
                                      d.reserve_bytes, a.reserve),
              "cudnnRNNBackwardData_v8");
  // The weights' gradients are added into the space (cuDNN's only mode), so it starts at zero.
  const detail::DataPtr grads = scratch(a.device, d.weight_bytes);
  check(cudaMemsetAsync(grads.get(), 0, d.weight_bytes, stream), "locus::rnn (gradient space)");
  check_cudnn(cudnnRNNBackwardWeights_v8(handle, d.rnn, CUDNN_WGRAD_MODE_ADD, lens, d.x, a.x, d.h, a.hx, d.y,
                                         a.forward_y, d.weight_bytes, grads.get(), d.work_bytes, work.get(),
                                         d.reserve_bytes, a.reserve),
              "cudnnRNNBackwardWeights_v8");
  copy_parameters(a, handle, d, static_cast<char*>(grads.get()), a.grad_weights, false, stream);
  return true;
}

}  // namespace locus::cuda_backend
