// The rendezvous store's URL and the rank variables, parsed strictly.

#include "src/distributed/rendezvous_address.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "locus/errors.h"

namespace locus::distributed {

StoreAddress parse_store_url(const std::string& url) {
  StoreAddress a;
  if (url.rfind("file://", 0) == 0) {
    a.kind = StoreAddress::Kind::File;
    a.dir = url.substr(7);
    if (a.dir.empty()) throw ValueError("store URL '" + url + "' names no directory (file:///path/to/dir)");
    if (a.dir.find('\0') != std::string::npos) throw ValueError("store URL '" + url + "' holds a NUL byte");
    return a;
  }
  if (url.rfind("redis://", 0) == 0) {
    a.kind = StoreAddress::Kind::Redis;
    const std::string rest = url.substr(8);
    const size_t colon = rest.rfind(':');
    a.host = colon == std::string::npos ? rest : rest.substr(0, colon);
    if (colon != std::string::npos) {
      const std::string port = rest.substr(colon + 1);
      long v = 0;
      bool ok = !port.empty() && port.size() <= 5;
      for (const char c : port) ok = ok && c >= '0' && c <= '9';
      if (ok) v = std::strtol(port.c_str(), nullptr, 10);
      if (!ok || v < 1 || v > 65535) throw ValueError("store URL '" + url + "' has a bad port (redis://host:port)");
      a.port = static_cast<int>(v);
    }
    if (a.host.empty()) throw ValueError("store URL '" + url + "' names no host (redis://host:port)");
    if (a.host.find('\0') != std::string::npos) throw ValueError("store URL '" + url + "' holds a NUL byte");
    return a;
  }
  throw ValueError("unknown store URL '" + url + "': use file:///a/shared/dir or redis://host:port");
}

int rank_variable(int given, const char* var) {
  if (given >= 0) return given;
  const char* v = std::getenv(var);
  if (!v || !*v)
    throw ValueError(std::string("init_process_group: environment variable ") + var +
                     " expected, but not set (run under `locus run`, or pass GroupOptions().rank(r).world_size(n))");
  bool digits = true;
  for (const char* p = v; *p; ++p) digits = digits && *p >= '0' && *p <= '9';
  errno = 0;
  const long n = digits ? std::strtol(v, nullptr, 10) : -1;
  if (!digits || errno == ERANGE || n > INT_MAX)
    throw ValueError(std::string("init_process_group: ") + var + "='" + v + "' is not an integer from 0 to " +
                     std::to_string(INT_MAX));
  return static_cast<int>(n);
}

}  // namespace locus::distributed
