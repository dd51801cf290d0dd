// launcher_backend: LOCUS_DIST_BACKEND, read where a program picks its default group's backend
// (`locus train` under `locus run`).

#include "locus/distributed.h"

#include <cstdlib>

#include "locus/errors.h"

namespace locus::distributed {

std::string launcher_backend() {
  const char* v = std::getenv("LOCUS_DIST_BACKEND");
  if (!v || !*v) return "gloo";
  const std::string backend = v;
  if (backend != "gloo" && backend != "mpi")
    throw ValueError("LOCUS_DIST_BACKEND='" + backend + "' is not a launch backend: use gloo (`locus run`) or mpi " +
                     "(`locus run --backend mpi`, which sets it)");
  return backend;
}

}  // namespace locus::distributed
