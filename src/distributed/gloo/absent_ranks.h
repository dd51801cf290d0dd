#pragma once
// Who did not reach a failed collective, asked of the rendezvous store: each rank that gives up
// on collective #seq leaves a mark there, and waits briefly for the others' marks.

#include <chrono>
#include <cstdint>
#include <string>

#include <gloo/rendezvous/store.h>

#include "src/distributed/collective_check.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// Marks collective `seq` as reached by `rank`, then names the ranks of `size` whose marks do
/// not appear within 1.5 s ("2" or "1, 3"); empty when every rank reached it, and a sentence
/// when the store itself cannot be reached.
std::string absent_ranks(gloo::rendezvous::Store& store, uint64_t seq, int rank, int size);

/// The error of collective `seq` that the engine gave up on, naming the absent ranks:
/// "all_reduce(float32 [4], sum) #0 failed on rank 0 after waiting up to 3000 ms; ranks that did
/// not arrive: 2 (<engine>)", `engine` being what the engine said ("Gloo: Timed out ...").
std::string describe_failed_collective(gloo::rendezvous::Store& store, const CollectiveCall& call, uint64_t seq, int rank,
                                       int size, std::chrono::milliseconds timeout, const std::string& engine);

}  // namespace locus::distributed

LOCUS_API_END
