#pragma once
/// \file precision.h
/// How much precision float32 matrix products may trade for speed (torch's
/// set_float32_matmul_precision and torch.backends.cuda.matmul.allow_tf32).

#include <string>
#include <string_view>

namespace locus {

/// "highest" (the default: float32 products use full float32 arithmetic), "high" or "medium"
/// (CUDA may use TF32 tensor cores: 10-bit mantissa inputs, float32 accumulation). Other values
/// throw ValueError. Process-wide; affects products launched afterwards. CPU products are
/// always full precision.
void set_float32_matmul_precision(std::string_view precision);
/// The current setting: "highest" or "high" (TF32 allowed).
std::string get_float32_matmul_precision();

namespace cuda {
/// Allows TF32 for float32 matrix products on CUDA (same switch as
/// set_float32_matmul_precision("high")). Thread-safe.
void set_allow_tf32(bool allow) noexcept;
/// Whether TF32 is allowed. Thread-safe.
bool allow_tf32() noexcept;
}  // namespace cuda

}  // namespace locus
