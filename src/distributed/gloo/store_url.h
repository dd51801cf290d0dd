#pragma once
// Rendezvous stores from URLs: "file:///dir" (Gloo's FileStore) and "redis://host:port"
// (Gloo's RedisStore).

#include <memory>
#include <string>

#include <gloo/rendezvous/store.h>
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// The store `url` names; ValueError for a malformed URL, DistributedError when it cannot be
/// reached (Redis down, directory not writable).
std::unique_ptr<gloo::rendezvous::Store> open_store(const std::string& url);

/// True for a store that only processes of one machine share (file://): the transport then
/// listens on the loopback address.
bool is_local_store(const std::string& url);

}  // namespace locus::distributed

LOCUS_API_END
