#pragma once
// Every rank's value of one key, through the rendezvous store: how NCCL groups find out where
// their ranks run and check (LOCUS_DISTRIBUTED_DEBUG=detail) that they call the same collective.

#include <chrono>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// Publishes `value` as `key`/`rank` and returns the values of ranks 0..size-1; DistributedError
/// naming the ranks that did not publish theirs within `timeout`. `what` names the exchange in
/// that error ("joining process group 'default'").
std::vector<std::string> exchange(gloo::rendezvous::Store& store, const std::string& key, int rank, int size,
                                  const std::string& value, std::chrono::milliseconds timeout, const std::string& what);

}  // namespace locus::distributed

LOCUS_API_END
