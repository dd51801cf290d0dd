#pragma once
// The process-group backend a launcher chose for its ranks (launcher_backend.cpp).

#include <string>

#include "locus/export.h"

// Exported for the `locus` command and Locus's tests (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// The backend of this rank's default group as its launcher chose it: LOCUS_DIST_BACKEND, which
/// `locus run --backend mpi` sets to "mpi"; "gloo" when it is unset or empty (`locus run`'s own
/// launch). ValueError naming the variable for anything but gloo or mpi.
std::string launcher_backend();

}  // namespace locus::distributed

LOCUS_API_END
