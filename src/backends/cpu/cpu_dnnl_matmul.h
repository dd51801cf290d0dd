#pragma once
// bfloat16 products through oneDNN (cpu_dnnl_matmul.cpp), when this build has it.

#include "src/ops/kernel_table.h"

namespace locus::cpu {

/// Runs `args` (bfloat16) with oneDNN's matmul and returns true, or returns false when this
/// build has no oneDNN or oneDNN has no fast kernel for this CPU (the caller then widens to
/// float32 and uses OpenBLAS).
bool dnnl_bf16_matmul(const ops::MatmulArgs& args);

}  // namespace locus::cpu
