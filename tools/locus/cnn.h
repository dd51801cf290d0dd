#pragma once
// The CNN of `locus train --model cnn`, `locus bench --model cnn` and the cnn benchmarks, as
// ../shared/bench's cnn_model(): two conv-BN-ReLU-pool stages and a two-layer head. Its
// state_dict names are PyTorch's for the same nn.Sequential (0.weight, 1.running_mean, ...),
// so checkpoints go both ways.

#include "locus/nn.h"

namespace locus::cli {

/// nn.Sequential(Conv2d(1,32,3,p=1), BatchNorm2d(32), ReLU, MaxPool2d(2), Conv2d(32,64,3,p=1),
/// BatchNorm2d(64), ReLU, MaxPool2d(2), Flatten, Linear(3136,128), ReLU, Dropout(0.3),
/// Linear(128,10)) over [N, 1, 28, 28].
inline nn::Sequential make_cnn() {
  return nn::Sequential{nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)),  nn::BatchNorm2d(32), nn::ReLU(),
                        nn::MaxPool2d(nn::MaxPool2dOptions(2)),                nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),
                        nn::BatchNorm2d(64),                                   nn::ReLU(),
                        nn::MaxPool2d(nn::MaxPool2dOptions(2)),                nn::Flatten(),
                        nn::Linear(3136, 128),                                 nn::ReLU(),
                        nn::Dropout(0.3),                                      nn::Linear(128, 10)};
}

/// Fashion-MNIST's [N, 784] rows as the CNN's [N, 1, 28, 28] images (a view).
inline Tensor as_images(const Tensor& rows) { return rows.view({-1, 1, 28, 28}); }

}  // namespace locus::cli
