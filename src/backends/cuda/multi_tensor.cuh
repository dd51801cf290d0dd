#pragma once
// Multi-tensor launches: many tensors of one dtype in as few kernel launches as the
// kernel-argument limit allows (PyTorch's multi_tensor_apply). GradScaler's unscale and the
// optimizers' step use it.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace locus::cuda_backend {

/// Which of a launch's tensors, and which chunk of it, each block handles.
template <int kMaxBlocks>
struct BlockMap {
  unsigned char tensor[kMaxBlocks];
  int chunk[kMaxBlocks];
};

/// A block's share of a multi-tensor launch: the slot `t` of its tensor and the elements
/// [begin, end) of its chunk.
struct BlockChunk {
  int t;
  int64_t begin, end;
};

/// The calling block's BlockChunk, for chunks of `chunk` elements of tensors of numel[slot].
template <int kMaxBlocks>
__device__ __forceinline__ BlockChunk block_chunk(const BlockMap<kMaxBlocks>& map, const int64_t* numel, int64_t chunk) {
  const int t = map.tensor[blockIdx.x];
  const int64_t begin = static_cast<int64_t>(map.chunk[blockIdx.x]) * chunk;
  return {t, begin, begin + chunk < numel[t] ? begin + chunk : numel[t]};
}

/// Launches `count` tensors of numel[k] elements, one block per `chunk` elements, at most
/// kMaxTensors tensors and kMaxBlocks blocks per launch. put(slot, k) stores tensor k's
/// pointers in the launch's slot; `map` is filled with each block's slot and chunk; launch(blocks)
/// enqueues the kernel and returns its status. A tensor cut by a full launch continues in the
/// next one. Empty tensors take no slot. Returns the first failed launch's status.
template <int kMaxTensors, int kMaxBlocks, class Put, class Launch>
cudaError_t launch_multi_tensor(int count, const int64_t* numel, int64_t chunk, BlockMap<kMaxBlocks>& map, Put&& put,
                                Launch&& launch) {
  int tensors = 0, blocks = 0;
  cudaError_t err = cudaSuccess;
  auto flush = [&] {
    if (blocks > 0 && err == cudaSuccess) err = launch(blocks);
    tensors = 0, blocks = 0;
  };
  auto add_tensor = [&](int k) {
    put(tensors, k);
    return tensors++;
  };
  for (int k = 0; k < count; ++k) {
    const int64_t n = numel[k];
    if (n == 0) continue;
    if (tensors == kMaxTensors) flush();
    int slot = add_tensor(k);
    const int64_t chunks = (n + chunk - 1) / chunk;
    for (int64_t c = 0; c < chunks; ++c) {
      if (blocks == kMaxBlocks) {  // a full launch: the rest of this tensor starts the next
        flush();
        slot = add_tensor(k);
      }
      map.tensor[blocks] = static_cast<unsigned char>(slot);
      map.chunk[blocks] = static_cast<int>(c);
      ++blocks;
    }
  }
  flush();
  return err;
}

}  // namespace locus::cuda_backend
