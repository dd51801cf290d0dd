#pragma once
/// \file torch/types.h
/// LibTorch's <torch/types.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
