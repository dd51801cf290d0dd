#pragma once
/// \file optim.h
/// Optimizers (torch.optim) and learning-rate schedulers (torch.optim.lr_scheduler). State
/// lives on each parameter's device and follows it when the model moves.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/optim/adagrad.h"
#include "locus/optim/adam.h"
#include "locus/optim/adamax.h"
#include "locus/optim/lr_scheduler.h"
#include "locus/optim/nadam.h"
#include "locus/optim/optimizer.h"
#include "locus/optim/radam.h"
#include "locus/optim/rmsprop.h"
#include "locus/optim/sgd.h"

LOCUS_API_END
