#pragma once
// Products through oneDNN (cpu_dnnl_matmul.cpp), when this build has it.

#include "src/ops/kernel_table.h"

namespace locus::cpu {

/// Runs `args` (float32 or bfloat16, with its bias and epilogue) with oneDNN's matmul and
/// returns true, or returns false when this build has no oneDNN, the dtype is another, or
/// oneDNN has no fast kernel for this CPU and layout, or the product is scaled (alpha != 1 or
/// beta != 0) (the caller then uses OpenBLAS, widening
/// bfloat16 to float32).
bool dnnl_matmul(const ops::MatmulArgs& args);

/// True when float32 products should go to oneDNN rather than OpenBLAS on this CPU.
bool dnnl_preferred_for_float32() noexcept;

}  // namespace locus::cpu
