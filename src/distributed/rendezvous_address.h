#pragma once
// What a process reads to join a group before any peer is involved: the store URL and the
// RANK / WORLD_SIZE / LOCAL_RANK variables (rendezvous_address.cpp). Parsing only, no I/O, so a
// fuzz target can take every input these parsers see.

#include <string>
#include "locus/export.h"

// Exported for Locus's tests (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// A rendezvous store, as its URL names it.
struct StoreAddress {
  enum class Kind { File, Redis };
  Kind kind = Kind::File;
  std::string dir;   ///< File: the shared directory
  std::string host;  ///< Redis: the server's host
  int port = 6379;   ///< Redis: the server's port
};

/// Parses "file:///a/shared/dir" or "redis://host[:port]"; ValueError naming the URL otherwise.
StoreAddress parse_store_url(const std::string& url);

/// A rank or size from the variable `var`: `given` when it is not negative, else the variable's
/// value, a decimal integer from 0 to INT_MAX. ValueError naming the variable when it is unset,
/// empty, not such a number, or out of range.
int rank_variable(int given, const char* var);

}  // namespace locus::distributed

LOCUS_API_END
