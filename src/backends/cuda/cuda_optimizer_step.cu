// SGD, Adam and AdamW on CUDA: every parameter of one dtype on the device in as few launches as
// the kernel-argument limit allows (a multi-tensor pass, as PyTorch's fused optimizers), each
// element of parameter, gradient and state read and written once. The arithmetic is the CPU
// kernel's (cpu_optimizer_step.cpp), op by op in the compute type, each intermediate rounded to
// the parameter's dtype where the composed ops would store it.

#include "src/backends/cuda/device_types.cuh"
#include "src/backends/cuda/multi_tensor.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kTensorsPerLaunch = 24;
constexpr int kBlocksPerLaunch = 320;
constexpr int64_t kChunk = 65536;  // elements one block handles

// A launch's tensors and, per block, which tensor and which chunk of it (about 2.6 KB: within
// the 4 KB a kernel argument may take).
struct StepBatch {
  void* param[kTensorsPerLaunch];
  const void* grad[kTensorsPerLaunch];
  void* state1[kTensorsPerLaunch];
  void* state2[kTensorsPerLaunch];
  int64_t numel[kTensorsPerLaunch];
  unsigned char fresh[kTensorsPerLaunch];
  BlockMap<kBlocksPerLaunch> blocks;
};

// The hyperparameters, trivially copyable for the launch.
struct StepHyper {
  ops::OptimizerKind kind;
  double lr, weight_decay, momentum, dampening, beta1, beta2, eps, bias_correction1, bias_correction2;
  bool nesterov, has_state1;
};

// Rounds `x` to T and back: what storing an intermediate tensor of dtype T does.
template <class T>
__device__ __forceinline__ compute_t<T> stored(compute_t<T> x) {
  T t;
  store(&t, x);
  return load(&t);
}

template <class T>
__device__ void sgd_element(const StepBatch& b, const StepHyper& h, int t, int64_t i) {
  using C = compute_t<T>;
  T* p = static_cast<T*>(b.param[t]);
  const T* g = static_cast<const T*>(b.grad[t]);
  C d = load(g + i);
  const C pv = load(p + i);
  if (h.weight_decay != 0) d = stored<T>(d + C(h.weight_decay) * pv);
  if (h.has_state1) {
    T* buf = static_cast<T*>(b.state1[t]);
    const C mom = C(h.momentum);
    const C v = b.fresh[t] ? d : stored<T>(stored<T>(load(buf + i) * mom) + C(1 - h.dampening) * d);
    store(buf + i, v);
    d = h.nesterov ? stored<T>(d + mom * v) : v;
  }
  store(p + i, pv + C(-h.lr) * d);
}

template <class T>
__device__ void adam_element(const StepBatch& b, const StepHyper& h, int t, int64_t i) {
  using C = compute_t<T>;
  T* p = static_cast<T*>(b.param[t]);
  const T* g = static_cast<const T*>(b.grad[t]);
  T* m1 = static_cast<T*>(b.state1[t]);
  T* m2 = static_cast<T*>(b.state2[t]);
  C gv = load(g + i), pv = load(p + i);
  if (h.weight_decay != 0) {
    if (h.kind == ops::OptimizerKind::AdamW) pv = stored<T>(pv * C(1 - h.lr * h.weight_decay));
    else gv = stored<T>(gv + C(h.weight_decay) * pv);
  }
  const C m = stored<T>(stored<T>(load(m1 + i) * C(h.beta1)) + C(1 - h.beta1) * gv);
  const C v = stored<T>(stored<T>(load(m2 + i) * C(h.beta2)) + C(1 - h.beta2) * stored<T>(gv * gv));
  store(m1 + i, m);
  store(m2 + i, v);
  const C denom = stored<T>(stored<T>(stored<T>(sqrt(v)) / C(sqrt(h.bias_correction2))) + C(h.eps));
  store(p + i, pv - C(h.lr / h.bias_correction1) * stored<T>(m / denom));
}

template <class T>
__global__ void step_kernel(StepBatch batch, StepHyper hyper) {
  const BlockChunk c = block_chunk(batch.blocks, batch.numel, kChunk);
  for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
    if (hyper.kind == ops::OptimizerKind::Sgd) sgd_element<T>(batch, hyper, c.t, i);
    else adam_element<T>(batch, hyper, c.t, i);
  }
}

template <class T>
cudaError_t launch_batches(const ops::OptimizerStepArgs& a, cudaStream_t stream) {
  const StepHyper hyper{a.kind, a.lr, a.weight_decay, a.momentum, a.dampening, a.beta1, a.beta2, a.eps,
                        a.bias_correction1, a.bias_correction2, a.nesterov, a.state1 != nullptr};
  StepBatch batch;
  return launch_multi_tensor<kTensorsPerLaunch, kBlocksPerLaunch>(
      a.count, a.numel, kChunk, batch.blocks,
      [&](int slot, int k) {
        batch.param[slot] = a.params[k];
        batch.grad[slot] = a.grads[k];
        batch.state1[slot] = a.state1 ? a.state1[k] : nullptr;
        batch.state2[slot] = a.state2 ? a.state2[k] : nullptr;
        batch.numel[slot] = a.numel[k];
        batch.fresh[slot] = a.fresh ? a.fresh[k] : 0;
      },
      [&](int blocks) {
        step_kernel<T><<<blocks, kBlock, 0, stream>>>(batch, hyper);
        return cudaGetLastError();
      });
}

}  // namespace

cudaError_t launch_optimizer_step(const ops::OptimizerStepArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH_FLOAT(a.dtype, { err = launch_batches<scalar_t>(a, stream); });
  return err;
}

}  // namespace locus::cuda_backend
