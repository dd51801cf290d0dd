// The CPU kernel table: the CPU backend's one entry point for the op front ends (the sim
// backend registers it too).

#include "src/backends/cpu/cpu_kernels.h"

namespace locus::cpu {

const ops::KernelTable& kernel_table() noexcept {
  static const ops::KernelTable table = [] {
    ops::KernelTable t;
    fill_elementwise_kernels(t);
    t.reduce = &reduce_kernel;
    t.softmax = &softmax_kernel;
    t.im2col = &im2col_kernel;
    t.max_pool_channels_last = true;
    t.convolution = &dnnl_convolution;
    t.convolution_channels_last = true;
    t.batch_norm = &batch_norm_kernel;
    t.batch_norm_channels_last = true;
    t.attention = &attention_kernel;
    t.layer_norm = &layer_norm_kernel;
    t.rnn_cell = &rnn_cell_kernel;
    t.sort = &sort_kernel;
    t.scan = &scan_kernel;
    t.matmul = &matmul_kernel;
    t.index = &index_kernel;
    t.random = &random_kernel;
    t.unscale = &unscale_kernel;
    t.linear = &linear_kernel;
    t.linear_grad = &linear_grad_kernel;
    t.optimizer_step = &optimizer_step_kernel;
    t.cross_entropy = &cross_entropy_kernel;
    t.cross_entropy_grad = &cross_entropy_grad_kernel;
    return t;
  }();
  return table;
}

}  // namespace locus::cpu
