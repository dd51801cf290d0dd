// open_store: the URL forms of docs/distributed.md.

#include "src/distributed/gloo/store_url.h"

#include <filesystem>
#include <system_error>

#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/redis_store.h>

#include "locus/errors.h"
#include "src/distributed/rendezvous_address.h"

namespace locus::distributed {

bool is_local_store(const std::string& url) { return url.rfind("file://", 0) == 0; }

std::unique_ptr<gloo::rendezvous::Store> open_store(const std::string& url) {
  const StoreAddress a = parse_store_url(url);
  if (a.kind == StoreAddress::Kind::File) {
    std::error_code ec;
    std::filesystem::create_directories(a.dir, ec);
    if (ec) throw DistributedError("cannot create the store directory '" + a.dir + "': " + ec.message());
    return std::make_unique<gloo::rendezvous::FileStore>(a.dir);
  }
  try {
    return std::make_unique<gloo::rendezvous::RedisStore>(a.host, a.port);
  } catch (const std::exception& e) {
    throw DistributedError("cannot reach the Redis store at " + a.host + ":" + std::to_string(a.port) + ": " + e.what());
  }
}

}  // namespace locus::distributed
