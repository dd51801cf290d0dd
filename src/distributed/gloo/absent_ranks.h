#pragma once
// Who did not reach a failed collective, asked of the rendezvous store: each rank that gives up
// on collective #seq leaves a mark there, and waits briefly for the others' marks.

#include <cstdint>
#include <string>

#include <gloo/rendezvous/store.h>

namespace locus::distributed {

/// Marks collective `seq` as reached by `rank`, then names the ranks of `size` whose marks do
/// not appear within 1.5 s ("2" or "1, 3"); empty when every rank reached it, and a sentence
/// when the store itself cannot be reached.
std::string absent_ranks(gloo::rendezvous::Store& store, uint64_t seq, int rank, int size);

}  // namespace locus::distributed
