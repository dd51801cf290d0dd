#pragma once
// The default group as the shared pointer DDP and fully_shard hold their group by.

#include <memory>

#include "locus/distributed.h"

namespace locus::distributed {

/// The default group, not owned: it lives until destroy_process_group. ValueError without one.
inline std::shared_ptr<ProcessGroup> default_group_handle() {
  return std::shared_ptr<ProcessGroup>(std::shared_ptr<ProcessGroup>(), &default_group());
}

}  // namespace locus::distributed
