// The entry points of liblocus_nccl.so (Note [Backend modules]); built only into the module.

#include "locus/export.h"
#include "src/core/build_info.h"
#include "src/distributed/nccl/nccl_process_group.h"
#include "src/distributed/nccl_module.h"

extern "C" {

/// The Locus version this module was built with; the core loads only its own.
LOCUS_API const char* locus_module_version() { return LOCUS_VERSION_STRING; }

/// The NCCL process group's factory, for src/distributed/process_group.cpp.
LOCUS_API locus::distributed::NcclGroupFactory locus_nccl_module_entry() { return &locus::distributed::make_nccl_group; }

}  // extern "C"
