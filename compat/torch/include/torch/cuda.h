#pragma once
/// \file torch/cuda.h
/// LibTorch's <torch/cuda.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
