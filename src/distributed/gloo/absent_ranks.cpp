// absent_ranks: the store keys are "arrived/<seq>/<rank>" under the group's prefix.

#include "src/distributed/gloo/absent_ranks.h"

#include <chrono>
#include <exception>
#include <sstream>

namespace locus::distributed {

std::string absent_ranks(gloo::rendezvous::Store& store, uint64_t seq, int rank, int size) {
  const std::string key = "arrived/" + std::to_string(seq) + "/";
  std::string missing;
  try {
    store.set(key + std::to_string(rank), {'1'});
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      try {
        store.wait({key + std::to_string(r)}, std::chrono::milliseconds(1500));
      } catch (const std::exception&) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
    }
  } catch (const std::exception&) {
    return "unknown (the store is unreachable too)";
  }
  return missing;
}

std::string describe_failed_collective(gloo::rendezvous::Store& store, const CollectiveCall& call, uint64_t seq, int rank,
                                       int size, std::chrono::milliseconds timeout, const std::string& engine) {
  const std::string missing = absent_ranks(store, seq, rank, size);
  std::ostringstream os;
  os << call.describe() << " #" << seq << " failed on rank " << rank << " after waiting up to " << timeout.count() << " ms; ";
  if (missing.empty()) os << "every rank reached it, so the engine itself failed";
  else os << "ranks that did not arrive: " << missing;
  os << " (" << engine << ")";
  return os.str();
}

}  // namespace locus::distributed
