// The entry point of liblocus_nccl.so (Note [Backend modules]); built only into the module.

#include "locus/export.h"
#include "src/core/build_info.h"
#include "src/distributed/nccl/nccl_process_group.h"
#include "src/distributed/nccl_module.h"
#include "src/runtime/backend_module.h"

namespace {
// The NCCL process group's factory, for src/distributed/process_group.cpp.
const void* provide_nccl_factory() {
  static const locus::distributed::NcclGroupFactory factory = &locus::distributed::make_nccl_group;
  return &factory;
}
}  // namespace

LOCUS_BACKEND_MODULE(provide_nccl_factory)
