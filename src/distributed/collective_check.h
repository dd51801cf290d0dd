#pragma once
// What a rank is about to run, as a fixed-size record the ranks can exchange
// (LOCUS_DISTRIBUTED_DEBUG=detail): a mismatch there is the hang users report most, and the
// records name who called what.

#include <cstdint>
#include <string>
#include <vector>

#include "locus/tensor.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// One collective call: which one, the tensor's dtype and shape, root and reduce op.
struct CollectiveCall {
  static constexpr int kMaxDims = 8;
  int32_t kind = 0;  ///< index into the names of collective_check.cpp
  int32_t dtype = -1;
  int32_t root = -1;
  int32_t op = 0;
  int32_t ndim = 0;
  int32_t truncated = 0;  ///< more dims than kMaxDims: the rest are compared through numel
  int64_t numel = 0;
  int64_t dims[kMaxDims] = {};

  /// The record of collective `name` ("all_reduce", ...) on `t`.
  static CollectiveCall of(const char* name, const Tensor& t, int root, int op);
  /// The record of a barrier.
  static CollectiveCall barrier();
  /// "all_reduce".
  std::string name() const;
  /// "all_reduce(float32 [4, 3], sum)".
  std::string describe() const;
  bool same_as(const CollectiveCall& other) const;
};

/// Empty when every rank's record is the same; else which ranks called what.
std::string describe_mismatch(const std::vector<CollectiveCall>& calls);

/// LOCUS_DISTRIBUTED_DEBUG=detail (a group reads it when it is made).
bool collective_debug_enabled();

}  // namespace locus::distributed

LOCUS_API_END
