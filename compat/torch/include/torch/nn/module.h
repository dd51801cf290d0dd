#pragma once
/// \file torch/nn/module.h
/// LibTorch's <torch/nn/module.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
