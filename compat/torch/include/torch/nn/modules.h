#pragma once
/// \file torch/nn/modules.h
/// LibTorch's <torch/nn/modules.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
