#include "tools/locus/port_check.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace locus::cli {
namespace {

// Binds (without listening) the wildcard address of `family` on `port`: that conflicts with a
// listener on any single address of the family too. Empty when it worked or the family is absent.
std::string try_bind(int family, int port) {
  const int fd = socket(family, SOCK_STREAM, 0);
  if (fd < 0) return family == AF_INET6 ? "" : std::strerror(errno);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (family == AF_INET) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    rc = bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } else {
    // IPv6 only: the IPv4 side was probed above, and a dual-stack socket would fail on that alone.
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_port = htons(static_cast<uint16_t>(port));
    addr.sin6_addr = in6addr_any;
    rc = bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  }
  const int error = errno;
  close(fd);
  if (rc == 0 || (family == AF_INET6 && error == EADDRNOTAVAIL)) return "";
  return std::strerror(error);
}

}  // namespace

std::string port_unavailable_reason(int port) {
  std::string reason = try_bind(AF_INET, port);
  if (reason.empty()) reason = try_bind(AF_INET6, port);
  return reason;
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace locus::cli
