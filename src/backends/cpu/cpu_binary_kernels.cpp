// The CPU kernels of the plain binary ops (op_table.h's LOCUS_PLAIN_BINARY_OPS): their instantiations of
// elementwise_loops.h, compiled apart from the others so that two cores share the work.

#include "src/backends/cpu/elementwise_loops.h"

namespace locus::cpu::elementwise {

void fill_plain_binary_kernels(ops::KernelTable& table) { LOCUS_PLAIN_BINARY_OPS(LOCUS_CPU_BINARY_ENTRY) }

}  // namespace locus::cpu::elementwise
