#pragma once
/// \file dlpack.h
/// DLPack import and export: tensors shared with NumPy, CuPy, JAX, PyTorch and other libraries
/// without copying (DLPack 1.1, `third_party/dlpack`; docs/interop.md).
///
/// Ownership, the same for both struct kinds:
/// - Export: the returned struct keeps the tensor's memory alive until the consumer calls its
///   `deleter` (exactly once, from any thread); until then the consumer may read the memory and,
///   unless the read-only flag is set, write it, and Locus sees the writes.
/// - Import: on success Locus owns the struct, and calls its `deleter` exactly once, when the
///   last tensor viewing the memory dies. When the call throws, the struct was not taken: the
///   caller still owns it and must call its deleter (what a PyCapsule's destructor does).
///   Imported memory is the producer's, so Locus's memory statistics do not count it.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <dlpack/dlpack.h>

#include "locus/tensor.h"

namespace locus {

/// Exports `tensor` as a DLPack 1.x struct sharing its memory (no copy). cpu tensors (pinned
/// too) become kDLCPU, cuda:N tensors kDLCUDA with device_id N; shape and strides are in
/// elements as in Locus, `data` points at the first element and `byte_offset` is 0 (what
/// PyTorch and NumPy produce, and what consumers that ignore `byte_offset` need); an empty
/// tensor has a null `data`. The read-only flag is set for memory that was itself imported
/// read-only. Waits first for a non-blocking copy still using the memory, and for cuda for the
/// device's current stream, so the memory is ready for a consumer on any stream.
/// Errors: ValueError for an undefined tensor, a tensor that requires grad (as PyTorch: call
/// detach() first) and sim tensors (no DLPack device: .cpu() copies them out).
DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor);

/// The same export in the legacy struct (DLManagedTensor, DLPack before 1.0, what NumPy 1.x and
/// `__dlpack__` without `max_version` take). It has no flags, so read-only memory is refused
/// with a ValueError (use to_dlpack_versioned, or export a clone()).
DLManagedTensor* to_dlpack(const Tensor& tensor);

/// Imports a DLPack 1.x tensor without copying. kDLCPU and kDLCUDAHost become cpu tensors
/// (page-locked memory of another library is not Locus's pinned memory, so copies from it are
/// synchronous), kDLCUDA device N becomes cuda:N. Every Locus dtype arrives as itself; the
/// read-only flag makes every write into the tensor a ValueError (Note [Read-only memory]).
/// For cuda, the producer's writes must be complete or ordered before the device's current
/// stream, and before the deleter runs Locus waits for the device (Note [DLPack lifetimes]).
/// Errors (the struct is then left to the caller): ValueError for a null struct, a major
/// version other than 1, a device Locus lacks, a misaligned data pointer; DTypeError for a
/// dtype Locus lacks (complex, uint16, float8, lanes != 1, ...); ShapeError for a negative size
/// or a negative stride; BackendUnavailableError / IndexError for a CUDA device this process
/// cannot use.
Tensor from_dlpack(DLManagedTensorVersioned* managed);

/// The same import from the legacy struct (no flags: the memory is writable).
Tensor from_dlpack(DLManagedTensor* managed);

}  // namespace locus

LOCUS_API_END
