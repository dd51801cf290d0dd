#pragma once
/// \file precision.h
/// How much precision float32 matrix products and convolutions may trade for speed (torch's
/// set_float32_matmul_precision, torch.backends.cuda.matmul.allow_tf32 and
/// torch.backends.cudnn.allow_tf32, one switch here), and how the CPU
/// treats denormal floats (torch.set_flush_denormal).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <string>
#include <string_view>

namespace locus {

/// "highest" (the default: float32 products use full float32 arithmetic), "high" or "medium"
/// (CUDA may use TF32 tensor cores: 10-bit mantissa inputs, float32 accumulation). Other values
/// throw ValueError. Process-wide; affects products and cuDNN convolutions launched afterwards
/// (PyTorch allows TF32 in cuDNN convolutions by default; Locus does not). CPU products are
/// always full precision.
void set_float32_matmul_precision(std::string_view precision);
/// The current setting: "highest" or "high" (TF32 allowed).
std::string get_float32_matmul_precision();

/// Flushes denormal floats to zero on the calling thread's CPU arithmetic (and on the worker
/// threads of the kernels it launches) when `on`, or restores IEEE behaviour, as
/// torch.set_flush_denormal. Returns false, changing nothing, where the CPU has no such mode
/// (x86-64 and AArch64 have it). Optimizers flush during their update regardless and restore
/// the thread's setting afterwards (docs/training.md, "Denormals").
bool set_flush_denormal(bool on) noexcept;

namespace cuda {
/// Allows TF32 for float32 matrix products and convolutions on CUDA (same switch as
/// set_float32_matmul_precision("high")). Thread-safe.
void set_allow_tf32(bool allow) noexcept;
/// Whether TF32 is allowed. Thread-safe.
bool allow_tf32() noexcept;
}  // namespace cuda

}  // namespace locus

LOCUS_API_END
