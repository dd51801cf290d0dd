#pragma once
// The CPU kernels (shared by the sim backend), by kernel family.

#include "src/ops/kernel_table.h"

namespace locus::cpu {

/// Fills the elementwise entries: every unary and binary op of the op table, where, copy, fill.
void fill_elementwise_kernels(ops::KernelTable& table);
void copy_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars& scalars);
void fill_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars& scalars);
void reduce_kernel(const ops::ReduceArgs& args);
void softmax_kernel(const ops::SoftmaxArgs& args);
void im2col_kernel(const ops::Im2colArgs& args);
/// Training-mode batch norm's per-channel passes, float32 and float64 (cpu_batch_norm.cpp).
void batch_norm_kernel(const ops::BatchNormArgs& args);
/// Fused scaled dot-product attention, forward and backward, float32 and float64
/// (cpu_attention.cpp); always taken.
bool attention_kernel(const ops::AttentionArgs& args);
/// Layer and RMS normalisation, forward and backward, float32 and float64 (cpu_layer_norm.cpp).
void layer_norm_kernel(const ops::LayerNormArgs& args);
/// The pointwise half of an LSTM or GRU step, forward and backward, float32 and float64
/// (cpu_rnn_cell.cpp).
void rnn_cell_kernel(const ops::RnnCellArgs& args);
/// oneDNN's convolution (cpu_dnnl_conv.cpp): float32 on builds with oneDNN; false otherwise.
bool dnnl_convolution(const ops::ConvArgs& args);
void sort_kernel(const ops::SortArgs& args);
void scan_kernel(const ops::ScanArgs& args);
void matmul_kernel(const ops::MatmulArgs& args);
/// A product with Linear's bias and activation (cpu_matmul.cpp).
void linear_kernel(const ops::MatmulArgs& args);
/// Linear's ReLU mask and bias gradient in one pass (cpu_linear_grad.cpp).
void linear_grad_kernel(const ops::LinearGradArgs& args);
/// SGD, Adam and AdamW over every parameter in one pass each (cpu_optimizer_step.cpp).
void optimizer_step_kernel(const ops::OptimizerStepArgs& args);
/// cross_entropy with class targets and its backward, one pass each (cpu_cross_entropy.cpp).
void cross_entropy_kernel(const ops::CrossEntropyArgs& args);
void cross_entropy_grad_kernel(const ops::CrossEntropyGradArgs& args);
void index_kernel(const ops::IndexArgs& args);
void random_kernel(const ops::RandomArgs& args);
/// GradScaler's unscale and inf/NaN check (cpu_unscale.cpp).
void unscale_kernel(const ops::UnscaleArgs& args);

/// The CPU kernel table (also serves sim devices, whose memory is host memory).
const ops::KernelTable& kernel_table() noexcept;

}  // namespace locus::cpu
