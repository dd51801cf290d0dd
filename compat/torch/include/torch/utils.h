#pragma once
/// \file torch/utils.h
/// LibTorch's <torch/utils.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
