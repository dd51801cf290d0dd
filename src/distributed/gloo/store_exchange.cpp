// exchange: one set, then one wait per other rank against a shared deadline, so the error can
// name every rank that is missing rather than the first.

#include "src/distributed/gloo/store_exchange.h"

#include <algorithm>
#include <exception>

#include "locus/errors.h"

namespace locus::distributed {

std::vector<std::string> exchange(gloo::rendezvous::Store& store, const std::string& key, int rank, int size,
                                  const std::string& value, std::chrono::milliseconds timeout, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  try {
    store.set(key + "/" + std::to_string(rank), std::vector<char>(value.begin(), value.end()));
  } catch (const std::exception& e) {
    throw DistributedError(what + ": rank " + std::to_string(rank) + " cannot write to the store: " + e.what());
  }
  std::vector<std::string> values(static_cast<size_t>(size));
  std::string missing;
  for (int r = 0; r < size; ++r) {
    const std::string k = key + "/" + std::to_string(r);
    try {
      const auto left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
                                 std::chrono::milliseconds(1));
      store.wait({k}, left);
      const std::vector<char> v = store.get(k);
      values[static_cast<size_t>(r)].assign(v.begin(), v.end());
    } catch (const std::exception&) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
  }
  if (!missing.empty())
    throw DistributedError(what + ": rank " + std::to_string(rank) + " of " + std::to_string(size) + " waited " +
                           std::to_string(timeout.count()) + " ms; ranks that did not arrive: " + missing);
  return values;
}

}  // namespace locus::distributed
