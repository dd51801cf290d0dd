#pragma once
// The CPU kernels, one function per kernel-table slot (shared by the sim backend).

#include "src/ops/kernel_table.h"

namespace locus::cpu {

void binary_kernel(ops::OpId op, const ops::StridedIter& it, const Scalar& alpha);
void binary_scalar_kernel(ops::OpId op, const ops::StridedIter& it, const Scalar& b, const Scalar& alpha);
void unary_kernel(ops::OpId op, const ops::StridedIter& it, const Scalar& lo, const Scalar& hi, bool has_lo, bool has_hi);
void where_kernel(const ops::StridedIter& it);
void copy_kernel(const ops::StridedIter& it);
void fill_kernel(const ops::StridedIter& it, const Scalar& value);
void reduce_kernel(const ops::ReduceArgs& args);
void softmax_kernel(const ops::SoftmaxArgs& args);
void matmul_kernel(const ops::MatmulArgs& args);
void index_kernel(const ops::IndexArgs& args);
void random_kernel(const ops::RandomArgs& args);

/// The CPU kernel table (also serves sim devices, whose memory is host memory).
const ops::KernelTable& kernel_table() noexcept;

}  // namespace locus::cpu
