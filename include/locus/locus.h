#pragma once
/// \file locus.h
/// Everything public in Locus. `#include <locus/locus.h>` and use namespace locus.

#include "locus/accelerator.h"
#include "locus/autograd.h"
#include "locus/cuda.h"
#include "locus/device.h"
#include "locus/device_guard.h"
#include "locus/dtype.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/fallback.h"
#include "locus/memory.h"
#include "locus/ops.h"
#include "locus/precision.h"
#include "locus/scalar.h"
#include "locus/shape.h"
#include "locus/sim.h"
#include "locus/stream.h"
#include "locus/tensor.h"
#include "locus/tensor_options.h"
#include "locus/version.h"
