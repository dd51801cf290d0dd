#pragma once
/// \file amp.h
/// Everything of locus::amp (torch.amp): autocast and the gradient scaler.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/amp/autocast.h"
#include "locus/amp/grad_scaler.h"

LOCUS_API_END
