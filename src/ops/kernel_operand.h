#pragma once
// The one way an op path takes a memory address out of a tensor for a kernel, and the checks
// that a tensor about to be written has one element per address. See Note [Kernel operands].

#include <cstdint>
#include <string>

#include "locus/tensor.h"

// Note [Kernel operands]
// A kernel sees raw addresses, never tensors, so it cannot tell a transposed, stepped, expanded
// or offset view from the dense block it may assume. The rule: a kernel either receives and
// honours every operand's strides (and its first element, storage offset included), or the op
// path hands it contiguous memory; no kernel assumes a layout it was not given. Every address a
// front end in src/ops, src/nn, src/optim or src/amp passes on is bound through one of these
// functions, which say which of the two the kernel does:
//   - dense_operand / dense_result: the kernel reads or writes row-major memory with no gaps.
//     They raise an Error (a Locus defect, never the user's) on a tensor that is not contiguous,
//     so a forgotten .contiguous() fails loudly instead of reading the wrong elements.
//   - strided_operand: the kernel is handed the strides beside the address
//     (StridedIter, ReduceArgs, MatmulArgs, AttentionArgs' mask, ...).
// And an argument struct is bound from the tensors the kernel runs on, each time: a backward
// binds its operands from the tensors it saved, never by copying the forward's struct, whose
// addresses may point into temporaries the forward has already freed (issue 38: conv's weight
// gradient read a freed contiguous copy of a transposed input). cmake/CheckLayers.cmake fails
// the configure on any other data_ptr() in those folders.
// A written tensor must not alias itself (expand's stride 0) or part of an input: the result
// would depend on the order of the kernel's loads and stores. The elementwise ops and copy_
// refuse both, as PyTorch does (require_distinct_elements, require_no_partial_overlap).

namespace locus::ops {

/// Raises an Error when `t` (defined) is neither contiguous nor empty; `what` names the operand in
/// the message.
void require_dense(const Tensor& t, const char* what);

/// `t`'s first element for a kernel that reads dense row-major memory; null for an undefined
/// (optional) operand. Error when `t` is not contiguous and not empty.
template <class T = char>
const T* dense_operand(const Tensor& t, const char* what = "operand") {
  if (!t.defined()) return nullptr;
  require_dense(t, what);
  return static_cast<const T*>(t.data_ptr());
}

/// `t`'s first element for a kernel (or host loop) that writes dense row-major memory; null for
/// an undefined (optional) result. Error when `t` is not contiguous and not empty.
template <class T = char>
T* dense_result(const Tensor& t, const char* what = "result") {
  if (!t.defined()) return nullptr;
  require_dense(t, what);
  return static_cast<T*>(t.data_ptr());
}

/// Raises an Error when `t` (defined) is neither dense in `format`'s order nor empty.
void require_dense(const Tensor& t, MemoryFormat format, const char* what);

/// `t`'s first element for a kernel told it reads memory dense in `format`'s order (a channels-
/// last kernel: ConvArgs::channels_last). Error when `t` is not laid out so and not empty.
template <class T = char>
const T* dense_operand(const Tensor& t, MemoryFormat format, const char* what = "operand") {
  if (!t.defined()) return nullptr;
  require_dense(t, format, what);
  return static_cast<const T*>(t.data_ptr());
}

/// The written counterpart of dense_operand(t, format).
template <class T = char>
T* dense_result(const Tensor& t, MemoryFormat format, const char* what = "result") {
  if (!t.defined()) return nullptr;
  require_dense(t, format, what);
  return static_cast<T*>(t.data_ptr());
}

/// `t`'s first element (its storage offset applied) for a kernel that is also handed t's
/// strides; null for an undefined operand.
inline const char* strided_operand(const Tensor& t) {
  return t.defined() ? static_cast<const char*>(t.data_ptr()) : nullptr;
}

/// Where `t`'s first element lives, for identity and alignment tests only (never dereferenced).
inline std::uintptr_t operand_address(const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()); }

/// Raises a ValueError (PyTorch's message after `prefix`) when two elements of `t`, a tensor an op
/// is about to write, share memory: a dim of size > 1 with stride 0, as expand() makes. The
/// result would depend on the order the kernel writes in. As PyTorch, only that case is caught.
void require_distinct_elements(const Tensor& t, const std::string& prefix);

/// Raises a ValueError (PyTorch's message after `prefix`) when `input` and `out`, which an op is
/// about to read and write, share some memory but are not the same view: the result would depend
/// on the order the kernel reads and writes in (x.narrow(0, 1, n - 1).copy_(x.narrow(0, 0, n - 1))).
/// As PyTorch, only two dense ranges (contiguous or channels-last) are compared; the same view
/// read and written is fine.
void require_no_partial_overlap(const Tensor& out, const Tensor& input, const std::string& prefix);

}  // namespace locus::ops
