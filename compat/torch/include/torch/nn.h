#pragma once
/// \file torch/nn.h
/// LibTorch's <torch/nn.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
