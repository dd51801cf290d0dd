#pragma once
// What the NCCL module hands the core (Note [Backend modules]): the factory of its process group.

#include <chrono>
#include <memory>
#include <string>

#include "locus/distributed.h"

namespace locus::distributed {

/// Joins an NCCL group of `size` processes, one GPU each (`device`, -1: the current device),
/// meeting through the store `store_url` (src/distributed/nccl/nccl_process_group.h).
using NcclGroupFactory = std::shared_ptr<ProcessGroup> (*)(const std::string& store_url, int rank, int size,
                                                           std::chrono::milliseconds timeout, const std::string& name,
                                                           int device);

}  // namespace locus::distributed
