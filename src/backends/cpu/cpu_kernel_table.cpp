// The CPU kernel table: the CPU backend's one entry point for the op front ends.

#include "src/backends/cpu/cpu_kernels.h"

namespace locus::cpu {

const ops::KernelTable& kernel_table() noexcept {
  static const ops::KernelTable table{
      &binary_kernel, &binary_scalar_kernel, &unary_kernel, &where_kernel, &copy_kernel, &fill_kernel,
      &reduce_kernel, &softmax_kernel,       &matmul_kernel, &index_kernel, &random_kernel,
  };
  return table;
}


}  // namespace locus::cpu
