// open_store: the URL forms of docs/distributed.md.

#include "src/distributed/gloo/store_url.h"

#include <filesystem>
#include <system_error>

#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/redis_store.h>

#include "locus/errors.h"

namespace locus::distributed {

bool is_local_store(const std::string& url) { return url.rfind("file://", 0) == 0; }

std::unique_ptr<gloo::rendezvous::Store> open_store(const std::string& url) {
  if (is_local_store(url)) {
    const std::string dir = url.substr(7);
    if (dir.empty()) throw ValueError("store URL '" + url + "' names no directory (file:///path/to/dir)");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw DistributedError("cannot create the store directory '" + dir + "': " + ec.message());
    return std::make_unique<gloo::rendezvous::FileStore>(dir);
  }
  if (url.rfind("redis://", 0) == 0) {
    const std::string rest = url.substr(8);
    const size_t colon = rest.rfind(':');
    const std::string host = colon == std::string::npos ? rest : rest.substr(0, colon);
    int port = 6379;
    if (colon != std::string::npos) {
      try {
        size_t used = 0;
        port = std::stoi(rest.substr(colon + 1), &used);
        if (used != rest.size() - colon - 1 || port <= 0 || port > 65535) throw std::invalid_argument("port");
      } catch (const std::exception&) {
        throw ValueError("store URL '" + url + "' has a bad port (redis://host:port)");
      }
    }
    if (host.empty()) throw ValueError("store URL '" + url + "' names no host (redis://host:port)");
    try {
      return std::make_unique<gloo::rendezvous::RedisStore>(host, port);
    } catch (const std::exception& e) {
      throw DistributedError("cannot reach the Redis store at " + host + ":" + std::to_string(port) + ": " + e.what());
    }
  }
  throw ValueError("unknown store URL '" + url + "': use file:///a/shared/dir or redis://host:port");
}

}  // namespace locus::distributed
