#pragma once
// The model of the tutorials, of `locus train` / `locus bench` and of the mlp benchmarks:
// 784-256-10 with ReLU.

#include <memory>

#include "locus/nn.h"

namespace locus::cli {

/// nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).
inline std::shared_ptr<nn::Sequential> make_mlp() {
  return std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(784, 256), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(256, 10)});
}

}  // namespace locus::cli
