#pragma once
/// \file c10/util/Optional.h
/// c10::optional: std::optional, through torch/torch.h.
#include <torch/torch.h>
