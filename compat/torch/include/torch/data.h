#pragma once
/// \file torch/data.h
/// LibTorch's <torch/data.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
