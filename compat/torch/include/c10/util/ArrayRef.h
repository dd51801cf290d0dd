#pragma once
/// \file c10/util/ArrayRef.h
/// c10::IntArrayRef (Locus's Shape), through torch/torch.h. Locus has no generic ArrayRef<T>.
#include <torch/torch.h>
