#pragma once
/// \file torch/all.h
/// LibTorch's <torch/all.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
