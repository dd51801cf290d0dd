#pragma once
/// \file c10/util/ArrayRef.h
/// c10::ArrayRef / IntArrayRef, through torch/torch.h.
#include <torch/torch.h>
