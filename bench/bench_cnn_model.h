#pragma once
// The CNN of ../shared/bench's cnn rows, on every device's benchmark (locus_cpu_bench,
// locus_gpu_bench): `locus train --model cnn`'s network without its dropout, as the PyTorch side.

#include "locus/locus.h"

namespace bench {

/// Conv2d(1,32,3,p=1)-BN-ReLU-MaxPool2 -> Conv2d(32,64,3,p=1)-BN-ReLU-MaxPool2 -> Flatten ->
/// Linear(3136,128)-ReLU -> Linear(128,10), for [B, 1, 28, 28] inputs.
inline locus::nn::Sequential cnn_model() {
  namespace nn = locus::nn;
  return nn::Sequential{nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)),  nn::BatchNorm2d(32), nn::ReLU(),
                        nn::MaxPool2d(2),                                      nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),
                        nn::BatchNorm2d(64),                                   nn::ReLU(),
                        nn::MaxPool2d(2),                                      nn::Flatten(),
                        nn::Linear(3136, 128),                                 nn::ReLU(),
                        nn::Linear(128, 10)};
}

}  // namespace bench
