#pragma once
/// \file transforms/collate.h
/// Collation: the transforms that merge a vector of examples into one batch object.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <vector>

#include "locus/data/transforms/base.h"
#include "locus/data/transforms/lambda.h"

namespace locus::data::transforms {

/// A BatchTransform from a vector of examples (`T`) to one `BatchType` (Stack is one).
template <typename BatchType, typename T = std::vector<BatchType>>
using Collation = BatchTransform<T, BatchType>;

/// A Collation given by a function of the vector of examples.
template <typename BatchType, typename T = std::vector<BatchType>>
using Collate = BatchLambda<T, BatchType>;

}  // namespace locus::data::transforms

LOCUS_API_END
