// The CPU elementwise table: the special unary and binary ops (op_table.h), where, copy and fill
// here; the plain ops in cpu_unary_kernels.cpp and cpu_binary_kernels.cpp. The loops are
// elementwise_loops.h's.

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/elementwise_loops.h"

namespace locus::cpu {
namespace {

void where_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars&) {
  LOCUS_DISPATCH_ALL(it.dtypes[0], {
    for_each_run<4>(it, 3 * sizeof(scalar_t) + 1, [](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
        *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = *reinterpret_cast<const scalar_t*>(p[c ? 2 : 3] + i * s[c ? 2 : 3]);
      }
    });
  });
}

}  // namespace

void fill_elementwise_kernels(ops::KernelTable& table) {
  elementwise::fill_plain_unary_kernels(table);
  elementwise::fill_plain_binary_kernels(table);
  LOCUS_SPECIAL_UNARY_OPS(LOCUS_CPU_UNARY_ENTRY)
  LOCUS_SPECIAL_BINARY_OPS(LOCUS_CPU_BINARY_ENTRY)
  table.elementwise[static_cast<int>(ops::OpId::Where)] = &where_kernel;
  table.elementwise[static_cast<int>(ops::OpId::Copy)] = &copy_kernel;
  table.elementwise[static_cast<int>(ops::OpId::Fill)] = &fill_kernel;
}

}  // namespace locus::cpu
