#pragma once
/// \file locus.h
/// Everything public in Locus. `#include <locus/locus.h>` and use namespace locus.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/accelerator.h"
#include "locus/amp.h"
#include "locus/attention.h"
#include "locus/autograd.h"
#include "locus/data.h"
#include "locus/cuda.h"
#include "locus/device.h"
#include "locus/device_guard.h"
#include "locus/distributed.h"
#include "locus/device_properties.h"
#include "locus/dlpack.h"
#include "locus/dtype.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/fallback.h"
#include "locus/memory.h"
#include "locus/nn.h"
#include "locus/ops.h"
#include "locus/optim.h"
#include "locus/precision.h"
#include "locus/products.h"
#include "locus/random.h"
#include "locus/scalar.h"
#include "locus/serialize.h"
#include "locus/serialize/archive.h"
#include "locus/shape.h"
#include "locus/shape_ops.h"
#include "locus/sim.h"
#include "locus/str.h"
#include "locus/stream.h"
#include "locus/tensor.h"
#include "locus/tensor_options.h"
#include "locus/threads.h"
#include "locus/version.h"

LOCUS_API_END
