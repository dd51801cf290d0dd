#pragma once
// The front end of GradScaler's unscale kernel (KernelTable::unscale).

#include <vector>

#include "locus/tensor.h"

namespace locus::ops {

/// Multiplies every tensor of `grads` in place by `inv_scale` and sets `found_inf` (a float32
/// tensor of one element on their device) to 1 when any of them held an inf or NaN. One kernel
/// pass per dtype; nothing waits for the device. The tensors must all be on `found_inf`'s device.
void unscale_grads_(const std::vector<Tensor>& grads, double inv_scale, const Tensor& found_inf);

}  // namespace locus::ops
