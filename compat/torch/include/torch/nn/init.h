#pragma once
/// \file torch/nn/init.h
/// LibTorch's <torch/nn/init.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
