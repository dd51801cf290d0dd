#pragma once
// What an optimizer hands the fused update (ops::FusedUpdate) and the kernels read
// (KernelTable::optimizer_step): its kind and hyperparameters, with no tensor in them.

#include <cstdint>

namespace locus::ops {

/// The optimizer a fused update runs, in PyTorch's order of operations.
enum class OptimizerKind : uint8_t {
  Sgd,    ///< d = g + wd p; b = momentum ? (fresh ? d : m b + (1 - dampening) d) : d; p -= lr (nesterov ? d + m b : b)
  Adam,   ///< g += wd p; m1 = b1 m1 + (1 - b1) g; m2 = b2 m2 + (1 - b2) g^2; p -= lr/c1 m1 / (sqrt(m2)/sqrt(c2) + eps)
  AdamW,  ///< as Adam, with p *= 1 - lr wd first instead of adding wd p to g
};

/// One step's hyperparameters (the fields a kind does not use stay as they are).
struct OptimizerHyperparameters {
  OptimizerKind kind = OptimizerKind::Sgd;
  double lr = 0, weight_decay = 0;
  double momentum = 0, dampening = 0;  ///< SGD
  bool nesterov = false;               ///< SGD
  double beta1 = 0, beta2 = 0, eps = 0;
  double bias_correction1 = 1, bias_correction2 = 1;  ///< Adam: 1 - beta^step
};

}  // namespace locus::ops
