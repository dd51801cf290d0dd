#pragma once
// The model of the tutorials, of `locus train` / `locus bench` and of the mlp benchmarks:
// 784-256-10 with ReLU.

#include "locus/nn.h"

namespace locus::cli {

/// nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).
inline nn::Sequential make_mlp() { return nn::Sequential{nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10)}; }

}  // namespace locus::cli
