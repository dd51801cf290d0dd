// The pointwise half of an LSTM or GRU step on CUDA (RnnCellArgs, Note [Fused recurrent cells]
// in src/ops/recurrent_ops.cpp): one thread per (row, unit) of the [B, H] state, each reading its
// unit's gates and writing its unit's results, forward and backward; float32 computes in float,
// float64 in double (the front end brings float16 and bfloat16 to float32).

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kThreads = 256;

template <class T>
__device__ __forceinline__ T sigmoid_of(T x) {
  return T(1) / (T(1) + exp(-x));
}

// Grid-stride over the batch * hidden units; `unit` calls f(row, j).
template <class F>
__device__ __forceinline__ void for_units(int64_t batch, int64_t hidden, F f) {
  const int64_t total = batch * hidden;
  for (int64_t k = blockIdx.x * int64_t{kThreads} + threadIdx.x; k < total; k += int64_t{gridDim.x} * kThreads)
    f(k / hidden, k % hidden);
}

template <class T>
__global__ void __launch_bounds__(kThreads) lstm_forward(const T* gates, const T* c, T* out, T* saved, int64_t batch,
                                                          int64_t hs) {
  for_units(batch, hs, [&](int64_t b, int64_t j) {
    const T* a = gates + b * 4 * hs;
    const T i = sigmoid_of(a[j]), f = sigmoid_of(a[hs + j]), g = tanh(a[2 * hs + j]), o = sigmoid_of(a[3 * hs + j]);
    const T cn = f * c[b * hs + j] + i * g;
    out[b * hs + j] = o * tanh(cn);
    out[(batch + b) * hs + j] = cn;
    if (saved) {
      T* w = saved + b * 4 * hs;
      w[j] = i, w[hs + j] = f, w[2 * hs + j] = g, w[3 * hs + j] = o;
    }
  });
}

template <class T>
__global__ void __launch_bounds__(kThreads) lstm_backward(const T* w_all, const T* c, const T* forward_out,
                                                           const T* grad_out, T* grad_gates, T* grad_c, int64_t batch,
                                                           int64_t hs) {
  for_units(batch, hs, [&](int64_t b, int64_t j) {
    const T* w = w_all + b * 4 * hs;
    const T i = w[j], f = w[hs + j], g = w[2 * hs + j], o = w[3 * hs + j];
    const T tc = tanh(forward_out[(batch + b) * hs + j]);
    const T dh = grad_out[b * hs + j];
    const T dc = grad_out[(batch + b) * hs + j] + dh * o * (T(1) - tc * tc);
    T* dg = grad_gates + b * 4 * hs;
    dg[j] = dc * g * i * (T(1) - i);
    dg[hs + j] = dc * c[b * hs + j] * f * (T(1) - f);
    dg[2 * hs + j] = dc * i * (T(1) - g * g);
    dg[3 * hs + j] = dh * tc * o * (T(1) - o);
    grad_c[b * hs + j] = dc * f;
  });
}

template <class T>
__global__ void __launch_bounds__(kThreads) gru_forward(const T* gi, const T* gh, const T* h, T* out, T* saved,
                                                         int64_t batch, int64_t hs) {
  for_units(batch, hs, [&](int64_t b, int64_t j) {
    const T *xi = gi + b * 3 * hs, *xh = gh + b * 3 * hs;
    const T r = sigmoid_of(xi[j] + xh[j]), z = sigmoid_of(xi[hs + j] + xh[hs + j]);
    const T ghn = xh[2 * hs + j];
    const T n = tanh(xi[2 * hs + j] + r * ghn);
    out[b * hs + j] = (h[b * hs + j] - n) * z + n;
    if (saved) {
      T* w = saved + b * 4 * hs;
      w[j] = r, w[hs + j] = z, w[2 * hs + j] = n, w[3 * hs + j] = ghn;
    }
  });
}

template <class T>
__global__ void __launch_bounds__(kThreads) gru_backward(const T* w_all, const T* h, const T* grad_out, T* grad_gi,
                                                          T* grad_gh, T* grad_h, int64_t batch, int64_t hs) {
  for_units(batch, hs, [&](int64_t b, int64_t j) {
    const T* w = w_all + b * 4 * hs;
    const T r = w[j], z = w[hs + j], n = w[2 * hs + j], ghn = w[3 * hs + j];
    const T dh = grad_out[b * hs + j];
    const T dn = dh * (T(1) - z) * (T(1) - n * n);
    const T dz = dh * (h[b * hs + j] - n) * z * (T(1) - z);
    const T dr = dn * ghn * r * (T(1) - r);
    T *di = grad_gi + b * 3 * hs, *dhh = grad_gh + b * 3 * hs;
    di[j] = dr, di[hs + j] = dz, di[2 * hs + j] = dn;
    dhh[j] = dr, dhh[hs + j] = dz, dhh[2 * hs + j] = dn * r;
    grad_h[b * hs + j] = dh * z;
  });
}

template <class T>
cudaError_t launch(const ops::RnnCellArgs& a, cudaStream_t stream) {
  const int64_t total = a.batch * a.hidden;
  if (total == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(total, kThreads);
  const auto in = [](const char* p) { return reinterpret_cast<const T*>(p); };
  const auto out = [](char* p) { return reinterpret_cast<T*>(p); };
  const bool forward = a.pass == ops::RnnCellArgs::Pass::Forward;
  if (a.cell == ops::RnnCellArgs::Cell::Lstm) {
    if (forward)
      lstm_forward<T><<<blocks, kThreads, 0, stream>>>(in(a.gates), in(a.state), out(a.out), out(a.workspace), a.batch,
                                                       a.hidden);
    else
      lstm_backward<T><<<blocks, kThreads, 0, stream>>>(in(a.activations), in(a.state), in(a.forward_out),
                                                        in(a.grad_out), out(a.grad_gates), out(a.grad_state), a.batch,
                                                        a.hidden);
  } else if (forward) {
    gru_forward<T><<<blocks, kThreads, 0, stream>>>(in(a.gates), in(a.hidden_gates), in(a.state), out(a.out),
                                                    out(a.workspace), a.batch, a.hidden);
  } else {
    gru_backward<T><<<blocks, kThreads, 0, stream>>>(in(a.activations), in(a.state), in(a.grad_out),
                                                     out(a.grad_gates), out(a.grad_hidden_gates), out(a.grad_state),
                                                     a.batch, a.hidden);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_rnn_cell(const ops::RnnCellArgs& a, cudaStream_t stream) {
  return a.dtype == DType::Float64 ? launch<double>(a, stream) : launch<float>(a, stream);
}

}  // namespace locus::cuda_backend
