// The pointwise half of an LSTM or GRU step on the CPU (RnnCellArgs, Note [Fused recurrent
// cells] in src/ops/recurrent_ops.cpp): one pass over each row of the batch for the forward and
// one for the backward, the float32 activations eight lanes at a time (vec_math.h). Rows are
// independent, so they split across threads with nothing to merge.

#include <cmath>
#include <cstdint>
#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/parallel.h"
#include "src/backends/cpu/vec_math.h"

namespace locus::cpu {
namespace {

using Args = ops::RnnCellArgs;

void sigmoid_of(const float* x, float* y, int64_t n) { sigmoid_row(x, y, n); }
void tanh_of(const float* x, float* y, int64_t n) { tanh_row(x, y, n); }
void sigmoid_of(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0 / (1.0 + std::exp(-x[i]));
}
void tanh_of(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

// Row chunks of the batch on threads, each with `scratch_per_row` elements of its own scratch
// per call of f(row, scratch).
template <class T, class F>
void for_rows(const Args& a, int64_t bytes_per_row, int64_t scratch, F&& f) {
  parallel_for(
      a.batch, a.batch * bytes_per_row > kParallelBytes,
      [&](int64_t begin, int64_t end) {
        std::vector<T> buffer(static_cast<size_t>(scratch));
        for (int64_t b = begin; b < end; ++b) f(b, buffer.data());
      },
      1);
}

// LSTM, gates i, f, g, o: w holds sigmoid(i), sigmoid(f), tanh(g), sigmoid(o);
// c' = f c + i g, h' = o tanh(c').
template <class T>
void lstm_forward(const Args& a) {
  const int64_t hs = a.hidden, g4 = 4 * hs;
  const T* gates = reinterpret_cast<const T*>(a.gates);
  const T* c = reinterpret_cast<const T*>(a.state);
  T* h_out = reinterpret_cast<T*>(a.out);
  T* c_out = h_out + a.batch * hs;
  T* saved = reinterpret_cast<T*>(a.workspace);
  for_rows<T>(a, 8 * g4 * static_cast<int64_t>(sizeof(T)), g4 + hs, [&](int64_t b, T* scratch) {
    const T* in = gates + b * g4;
    T* w = saved ? saved + b * g4 : scratch;
    T* tc = scratch + g4;
    sigmoid_of(in, w, 2 * hs);
    tanh_of(in + 2 * hs, w + 2 * hs, hs);
    sigmoid_of(in + 3 * hs, w + 3 * hs, hs);
    const T *i = w, *f = w + hs, *g = w + 2 * hs, *o = w + 3 * hs, *cr = c + b * hs;
    T* cn = c_out + b * hs;
    for (int64_t j = 0; j < hs; ++j) cn[j] = f[j] * cr[j] + i[j] * g[j];
    tanh_of(cn, tc, hs);
    T* hn = h_out + b * hs;
    for (int64_t j = 0; j < hs; ++j) hn[j] = o[j] * tc[j];
  });
}

// With dc = dc' + dh o (1 - tanh(c')^2): d(i) = dc g i (1 - i), d(f) = dc c f (1 - f),
// d(g) = dc i (1 - g^2), d(o) = dh tanh(c') o (1 - o), and dc_prev = dc f.
template <class T>
void lstm_backward(const Args& a) {
  const int64_t hs = a.hidden, g4 = 4 * hs;
  const T* w_all = reinterpret_cast<const T*>(a.activations);
  const T* c = reinterpret_cast<const T*>(a.state);
  const T* c_next = reinterpret_cast<const T*>(a.forward_out) + a.batch * hs;
  const T* grad_h = reinterpret_cast<const T*>(a.grad_out);
  const T* grad_c = grad_h + a.batch * hs;
  T* grad_gates = reinterpret_cast<T*>(a.grad_gates);
  T* grad_state = reinterpret_cast<T*>(a.grad_state);
  for_rows<T>(a, 12 * g4 * static_cast<int64_t>(sizeof(T)), hs, [&](int64_t b, T* tc) {
    const T* w = w_all + b * g4;
    const T *i = w, *f = w + hs, *g = w + 2 * hs, *o = w + 3 * hs;
    const T *cr = c + b * hs, *dh = grad_h + b * hs, *dcn = grad_c + b * hs;
    tanh_of(c_next + b * hs, tc, hs);
    T* dg = grad_gates + b * g4;
    T* dc_prev = grad_state + b * hs;
    for (int64_t j = 0; j < hs; ++j) {
      const T dc = dcn[j] + dh[j] * o[j] * (T(1) - tc[j] * tc[j]);
      dg[j] = dc * g[j] * i[j] * (T(1) - i[j]);
      dg[hs + j] = dc * cr[j] * f[j] * (T(1) - f[j]);
      dg[2 * hs + j] = dc * i[j] * (T(1) - g[j] * g[j]);
      dg[3 * hs + j] = dh[j] * tc[j] * o[j] * (T(1) - o[j]);
      dc_prev[j] = dc * f[j];
    }
  });
}

// GRU, gates r, z, n: r, z = sigmoid(gi + gh), n = tanh(gi_n + r gh_n), h' = (h - n) z + n;
// w holds r, z, n and gh_n.
template <class T>
void gru_forward(const Args& a) {
  const int64_t hs = a.hidden, g3 = 3 * hs, g4 = 4 * hs;
  const T* gi = reinterpret_cast<const T*>(a.gates);
  const T* gh = reinterpret_cast<const T*>(a.hidden_gates);
  const T* h = reinterpret_cast<const T*>(a.state);
  T* h_out = reinterpret_cast<T*>(a.out);
  T* saved = reinterpret_cast<T*>(a.workspace);
  for_rows<T>(a, 8 * g4 * static_cast<int64_t>(sizeof(T)), g4 + 2 * hs, [&](int64_t b, T* scratch) {
    const T *xi = gi + b * g3, *xh = gh + b * g3, *hr = h + b * hs;
    T* w = saved ? saved + b * g4 : scratch;
    T* pre = scratch + g4;
    for (int64_t j = 0; j < 2 * hs; ++j) pre[j] = xi[j] + xh[j];
    sigmoid_of(pre, w, 2 * hs);
    const T* r = w;
    T* ghn = w + 3 * hs;
    for (int64_t j = 0; j < hs; ++j) ghn[j] = xh[2 * hs + j], pre[j] = xi[2 * hs + j] + r[j] * ghn[j];
    tanh_of(pre, w + 2 * hs, hs);
    const T *z = w + hs, *n = w + 2 * hs;
    T* hn = h_out + b * hs;
    for (int64_t j = 0; j < hs; ++j) hn[j] = (hr[j] - n[j]) * z[j] + n[j];
  });
}

// d(n) = dh' (1 - z) (1 - n^2), d(z) = dh' (h - n) z (1 - z), d(r) = d(n) gh_n r (1 - r);
// gh's n part gets d(n) r, and dh = dh' z.
template <class T>
void gru_backward(const Args& a) {
  const int64_t hs = a.hidden, g3 = 3 * hs, g4 = 4 * hs;
  const T* w_all = reinterpret_cast<const T*>(a.activations);
  const T* h = reinterpret_cast<const T*>(a.state);
  const T* grad = reinterpret_cast<const T*>(a.grad_out);
  T* grad_gi = reinterpret_cast<T*>(a.grad_gates);
  T* grad_gh = reinterpret_cast<T*>(a.grad_hidden_gates);
  T* grad_h = reinterpret_cast<T*>(a.grad_state);
  for_rows<T>(a, 12 * g4 * static_cast<int64_t>(sizeof(T)), 0, [&](int64_t b, T*) {
    const T* w = w_all + b * g4;
    const T *r = w, *z = w + hs, *n = w + 2 * hs, *ghn = w + 3 * hs, *hr = h + b * hs, *dh = grad + b * hs;
    T *di = grad_gi + b * g3, *dhh = grad_gh + b * g3, *dprev = grad_h + b * hs;
    for (int64_t j = 0; j < hs; ++j) {
      const T dn = dh[j] * (T(1) - z[j]) * (T(1) - n[j] * n[j]);
      const T dz = dh[j] * (hr[j] - n[j]) * z[j] * (T(1) - z[j]);
      const T dr = dn * ghn[j] * r[j] * (T(1) - r[j]);
      di[j] = dr, di[hs + j] = dz, di[2 * hs + j] = dn;
      dhh[j] = dr, dhh[hs + j] = dz, dhh[2 * hs + j] = dn * r[j];
      dprev[j] = dh[j] * z[j];
    }
  });
}

template <class T>
void run(const Args& a) {
  const bool forward = a.pass == Args::Pass::Forward;
  if (a.cell == Args::Cell::Lstm) return forward ? lstm_forward<T>(a) : lstm_backward<T>(a);
  return forward ? gru_forward<T>(a) : gru_backward<T>(a);
}

}  // namespace

void rnn_cell_kernel(const ops::RnnCellArgs& a) {
  if (a.batch == 0 || a.hidden == 0) return;
  return a.dtype == DType::Float64 ? run<double>(a) : run<float>(a);
}

}  // namespace locus::cpu
