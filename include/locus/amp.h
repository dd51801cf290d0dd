#pragma once
/// \file amp.h
/// Everything of locus::amp (torch.amp): autocast and the gradient scaler.

#include "locus/amp/autocast.h"
#include "locus/amp/grad_scaler.h"
