#pragma once
// The launchers of the .cu files. They take the op front ends' own argument structs
// (src/ops/kernel_table.h): nvcc compiles those headers like the host compiler does, so the
// CUDA backend has no types of its own that mirror them. See Note [CUDA launchers].

#include <cuda_runtime_api.h>

#include <cstddef>

#include "src/ops/kernel_table.h"

namespace locus::cuda_backend {

// Each launcher enqueues its kernels on `stream` and returns the launch status; none
// synchronises. A description with more dims than a kernel takes is a NotImplementedError.

/// Every unary and binary op of the op table (the op is a kernel argument, see
/// cuda_elementwise.cu), with its scalars.
cudaError_t launch_elementwise(ops::OpId op, const ops::StridedIter& it, const ops::ElementwiseScalars& scalars,
                               cudaStream_t stream);
cudaError_t launch_where(const ops::StridedIter& it, cudaStream_t stream);
cudaError_t launch_copy(const ops::StridedIter& it, cudaStream_t stream);
cudaError_t launch_fill(const ops::StridedIter& it, const Scalar& value, cudaStream_t stream);
/// Bytes of scratch launch_reduce needs for `a` (0 when it writes the output directly).
size_t reduce_workspace_bytes(const ops::ReduceArgs& a, int sm_count);
/// Sum, mean, max, min, argmax, argmin.
cudaError_t launch_reduce(const ops::ReduceArgs& a, void* workspace, int sm_count, cudaStream_t stream);
cudaError_t launch_softmax(const ops::SoftmaxArgs& a, cudaStream_t stream);
/// im2col and col2im (cuda_im2col.cu).
cudaError_t launch_im2col(const ops::Im2colArgs& a, cudaStream_t stream);
/// A convolution's bias (cuda_conv_bias.cu): Forward adds `bias` to `output` per channel;
/// BackwardWeights writes grad_bias, the per-channel sums of grad_output.
cudaError_t launch_conv_bias(const ops::ConvArgs& a, cudaStream_t stream);
/// Training-mode batch norm's per-channel passes, float32 and float64 (cuda_batch_norm.cu).
cudaError_t launch_batch_norm(const ops::BatchNormArgs& a, cudaStream_t stream);
/// Bytes of scratch launch_sort needs for `a` (Note [CUDA sort] in cuda_sort.cu).
size_t sort_workspace_bytes(const ops::SortArgs& a);
/// Sort and top-k along the rows of `a`.
cudaError_t launch_sort(const ops::SortArgs& a, void* workspace, cudaStream_t stream);
/// Cumsum and cumprod along the rows of `a`.
cudaError_t launch_scan(const ops::ScanArgs& a, cudaStream_t stream);
/// Bytes of scratch launch_index needs for `a`: index_add sorts its indices (Note
/// [Deterministic index_add on CUDA] in cuda_index.cu); the other index ops need none.
size_t index_workspace_bytes(const ops::IndexArgs& a);
/// index_select, gather, scatter, scatter_add and index_add.
cudaError_t launch_index(const ops::IndexArgs& a, void* workspace, cudaStream_t stream);
cudaError_t launch_random(const ops::RandomArgs& a, cudaStream_t stream);
/// GradScaler's unscale and inf/NaN check over every tensor of `a` (cuda_unscale.cu).
cudaError_t launch_unscale(const ops::UnscaleArgs& a, cudaStream_t stream);
/// The pointwise half of an LSTM or GRU step, float32 and float64 (cuda_rnn_cell.cu).
cudaError_t launch_rnn_cell(const ops::RnnCellArgs& a, cudaStream_t stream);
/// SGD, Adam or AdamW over every tensor of `a` (cuda_optimizer_step.cu).
cudaError_t launch_optimizer_step(const ops::OptimizerStepArgs& a, cudaStream_t stream);
/// Integer matrix products (cuBLAS has none), C contiguous.
cudaError_t launch_int_matmul(const ops::MatmulArgs& a, cudaStream_t stream);

}  // namespace locus::cuda_backend
