// The float32 matmul precision switch, read by the CUDA backend on every product, and the
// calling thread's denormal flushing (Note [Denormals]).

#include "locus/precision.h"

#include <atomic>

#include "locus/errors.h"
#include "src/core/float_mode.h"

namespace locus {
namespace {
std::atomic<bool> g_allow_tf32{false};
}

void set_float32_matmul_precision(std::string_view precision) {
  if (precision == "highest") g_allow_tf32 = false;
  else if (precision == "high" || precision == "medium") g_allow_tf32 = true;
  else
    throw ValueError("set_float32_matmul_precision: '" + std::string(precision) +
                     "' is not one of \"highest\", \"high\", \"medium\"");
}

std::string get_float32_matmul_precision() { return g_allow_tf32 ? "high" : "highest"; }

bool set_flush_denormal(bool on) noexcept {
  if (detail::kFlushAll == 0) return false;
  detail::set_flush_bits(on ? detail::kFlushAll : 0u);
  return true;
}

namespace cuda {
void set_allow_tf32(bool allow) noexcept { g_allow_tf32 = allow; }
bool allow_tf32() noexcept { return g_allow_tf32; }
}  // namespace cuda

}  // namespace locus
