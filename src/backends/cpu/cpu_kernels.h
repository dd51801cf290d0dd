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
void matmul_kernel(const ops::MatmulArgs& args);
void index_kernel(const ops::IndexArgs& args);
void random_kernel(const ops::RandomArgs& args);
/// GradScaler's unscale and inf/NaN check (cpu_unscale.cpp).
void unscale_kernel(const ops::UnscaleArgs& args);

/// The CPU kernel table (also serves sim devices, whose memory is host memory).
const ops::KernelTable& kernel_table() noexcept;

}  // namespace locus::cpu
