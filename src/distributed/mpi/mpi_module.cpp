// The entry point of liblocus_mpi.so (Note [Backend modules]); built only into the module.

#include "locus/export.h"
#include "src/core/build_info.h"
#include "src/distributed/mpi/mpi_process_group.h"
#include "src/distributed/mpi_module.h"
#include "src/runtime/backend_module.h"

namespace {
// The MPI process group's factory, for src/distributed/process_group.cpp.
const void* provide_mpi_factory() {
  static const locus::distributed::MpiGroupFactory factory = &locus::distributed::make_mpi_group;
  return &factory;
}
}  // namespace

LOCUS_BACKEND_MODULE(provide_mpi_factory)
