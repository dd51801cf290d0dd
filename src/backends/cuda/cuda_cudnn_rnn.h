#pragma once
// Whole recurrences on CUDA through cuDNN's RNN API (cuda_cudnn_rnn.cpp).

#include "src/ops/kernel_table.h"

namespace locus::cuda_backend {

/// One pass of a multi-layer recurrence (ops::RnnArgs) through cuDNN; false, having written
/// nothing, where cuDNN cannot take it (bfloat16, a cuDNN of another major version, sizes beyond
/// int32): the front end then composes the recurrence step by step (Note [cuDNN RNNs]).
bool cudnn_rnn(const ops::RnnArgs& a);

}  // namespace locus::cuda_backend
