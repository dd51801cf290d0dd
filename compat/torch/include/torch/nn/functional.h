#pragma once
/// \file torch/nn/functional.h
/// LibTorch's <torch/nn/functional.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
