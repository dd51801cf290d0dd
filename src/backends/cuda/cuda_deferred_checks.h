#pragma once
// The CUDA side of Note [Deferred checks] (src/ops/deferred_check.cpp): a failed check is
// written by the device into host-mapped memory and raised by the host at its next
// synchronization with that device.

#include "src/ops/kernel_table.h"

namespace locus::cuda_backend {

/// The kernel-table entry: queues a kernel on the current stream that checks the values and
/// records a failure. Never waits.
void defer_check(const ops::DeferredCheckArgs& args);

/// Raises the IndexError a check on `device` recorded, if any, and clears it. Called after
/// every synchronization with the device (blocking copies to the host, waits for asynchronous
/// ones, stream, event and device synchronization).
void raise_deferred_failures(int device);
/// The same for every device with a context (after an event's synchronization).
void raise_deferred_failures_anywhere();

}  // namespace locus::cuda_backend
