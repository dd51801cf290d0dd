#pragma once
/// \file torch/nn/options.h
/// LibTorch's <torch/nn/options.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
