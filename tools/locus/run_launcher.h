#pragma once
// The launcher of `locus run`, for commands that start ranks of themselves (`locus train --nproc`).

#include <string>
#include <vector>

namespace locus::cli {

/// Runs `command` as `nproc` ranks on this node, as `locus run --nproc-per-node nproc` would,
/// on a free master port; returns when all have exited. Throws CLI::RuntimeError with the
/// failed rank's exit code when one fails (the others are stopped first).
void run_ranks_on_this_node(int nproc, const std::vector<std::string>& command);

}  // namespace locus::cli
