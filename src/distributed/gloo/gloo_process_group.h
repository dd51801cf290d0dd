#pragma once
// ProcessGroup over Gloo's TCP transport (Note [Gloo process group] in the .cpp).

#include <memory>
#include <string>

#include "locus/distributed.h"

namespace locus::distributed {

/// Connects a Gloo group of `size` processes through the store `store_url` (every rank must
/// name the same store and group name); DistributedError when the others do not arrive within
/// the timeout.
std::shared_ptr<ProcessGroup> make_gloo_group(const std::string& store_url, int rank, int size,
                                              std::chrono::milliseconds timeout, const std::string& name);

}  // namespace locus::distributed
