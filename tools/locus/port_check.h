#pragma once
// Is a TCP port free on this machine? `locus run` asks before starting anything.

#include <string>

namespace locus::cli {

/// Empty when `port` can be bound on every local IPv4 address (and IPv6 ones, where the machine
/// has IPv6); otherwise the reason it cannot ("Address already in use"). The probe sets
/// SO_REUSEADDR, as servers do, so the TIME_WAIT connections of a run that just ended do not
/// count as "in use". A check, not a reservation: the port may be taken between the check and
/// its use, so this turns the common mistake (a second launch on the same port, a leftover
/// server) into a clear error up front rather than guaranteeing anything.
std::string port_unavailable_reason(int port);

/// A port the kernel just handed out on 127.0.0.1 and took back (0 if it would not): free, and
/// unlikely to be handed out again soon. For launches whose master port nothing listens on.
int free_port();

}  // namespace locus::cli
