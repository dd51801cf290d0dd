#pragma once
/// \file torch/optim.h
/// LibTorch's <torch/optim.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
