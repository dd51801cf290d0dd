#pragma once
// Epilogue: what a product does to its result before storing it. A front-end type (nn's
// Sequential folds a ReLU or GELU into the Linear before it) that the kernel table's
// MatmulArgs carries down to the kernels.

#include <cstdint>

namespace locus::ops {

/// What a product does to its result before storing it (ops::linear, KernelTable::linear).
enum class Epilogue : uint8_t {
  None,  ///< C = A @ B (+ bias)
  Relu,  ///< C = max(A @ B (+ bias), 0)
  Gelu,  ///< C = gelu(A @ B (+ bias)), the exact (erf) form
};

}  // namespace locus::ops
