#pragma once
/// \file ATen/ATen.h
/// ATen's umbrella header: Locus's compatibility header torch/torch.h (at:: is Locus).
#include <torch/torch.h>
