#pragma once
/// \file torch/serialize.h
/// LibTorch's <torch/serialize.h>: Locus's compatibility header torch/torch.h, which maps all of it.
#include <torch/torch.h>
