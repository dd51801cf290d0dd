#pragma once
/// \file torch/autograd.h
/// LibTorch's <torch/autograd.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
