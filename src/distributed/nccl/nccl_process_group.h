#pragma once
// ProcessGroup over NCCL for cuda tensors (Note [NCCL process group] in the .cpp).

#include <chrono>
#include <memory>
#include <string>

#include "locus/distributed.h"

namespace locus::distributed {

/// Joins an NCCL group of `size` processes, one GPU each (`device`, -1: the current device),
/// meeting through the store `store_url`; BackendUnavailableError without a CUDA device,
/// DistributedError when the others do not arrive within the timeout or two ranks share a GPU.
std::shared_ptr<ProcessGroup> make_nccl_group(const std::string& store_url, int rank, int size,
                                              std::chrono::milliseconds timeout, const std::string& name, int device);

}  // namespace locus::distributed
