// The CPU kernels of the plain unary ops (op_table.h's LOCUS_PLAIN_UNARY_OPS): their instantiations of
// elementwise_loops.h, compiled apart from the others so that two cores share the work.

#include "src/backends/cpu/elementwise_loops.h"

namespace locus::cpu::elementwise {

void fill_plain_unary_kernels(ops::KernelTable& table) { LOCUS_PLAIN_UNARY_OPS(LOCUS_CPU_UNARY_ENTRY) }

}  // namespace locus::cpu::elementwise
