// Fuzz target: what a process reads to join a process group: the store URL (LOCUS_STORE) and the
// RANK / WORLD_SIZE / LOCAL_RANK variables. The first byte picks the input, the rest is its value.
#include <cstdlib>
#include <string>

#include "locus/errors.h"
#include "src/distributed/rendezvous_address.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] % 2 == 0) {
      const auto a = locus::distributed::parse_store_url(value);
      if (a.kind == locus::distributed::StoreAddress::Kind::Redis && (a.port < 1 || a.port > 65535 || a.host.empty()))
        __builtin_trap();
      if (a.kind == locus::distributed::StoreAddress::Kind::File && a.dir.empty()) __builtin_trap();
    } else {
      ::setenv("RANK", value.substr(0, value.find('\0')).c_str(), 1);
      if (locus::distributed::rank_variable(-1, "RANK") < 0) __builtin_trap();
    }
  } catch (const locus::Error&) {
  }
  return 0;
}
