#pragma once
// `locus run --backend mpi`: the ranks of this node started by Open MPI's mpirun (Note [MPI
// launch] in mpi_launch.cpp).

#include <string>
#include <vector>

#include "tools/locus/rank_supervisor.h"

namespace locus::cli {

/// The mpirun command line that starts `program` (and its arguments) as `nproc` ranks of this
/// node: Open MPI's mpirun with --oversubscribe, --bind-to none, --tag-output, stdin from nowhere,
/// `grace_period_s` (rounded up to seconds) between SIGTERM and SIGKILL, --allow-run-as-root when
/// `as_root`, -x for each variable of `environment` the ranks need on any node (LOCUS_*, torchrun's,
/// OMP_NUM_THREADS), and each rank's RANK and LOCAL_RANK taken from MPI's numbering.
std::vector<std::string> mpirun_command(int nproc, const std::vector<std::string>& environment, double grace_period_s,
                                        bool as_root, const std::vector<std::string>& program);

/// Runs `argv` (an mpirun command line) with exactly `environment`, its output going straight to
/// the launcher's, and returns when it has exited: its exit code (128 + signal when killed), and
/// the first of SIGINT, SIGTERM, SIGHUP or SIGQUIT the launcher received and passed on to it.
/// Throws SpawnError when mpirun cannot be started.
SupervisorResult run_mpirun(const std::vector<std::string>& argv, const std::vector<std::string>& environment);

}  // namespace locus::cli
