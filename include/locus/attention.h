#pragma once
/// \file attention.h
/// Scaled dot-product attention, as PyTorch 2.x's F.scaled_dot_product_attention and LibTorch's
/// torch::scaled_dot_product_attention.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <vector>

#include "locus/tensor.h"

namespace locus {

/// softmax(query key^T * scale + bias) value over query [..., L, E], key [..., S, E] and value
/// [..., S, Ev] (leading dims broadcast), as PyTorch 2.x defines it: scale defaults to
/// 1 / sqrt(E); a bool attn_mask (broadcasting to [..., L, S]) marks with true the keys that take
/// part, a floating one is added to the scores; is_causal masks the keys after each query (the
/// upper triangle of [L, S], aligned at the top left, as PyTorch's); dropout_p > 0 drops attention
/// weights (always, as F.scaled_dot_product_attention does: pass 0 in evaluation). A query whose
/// keys are all masked gets NaN, as PyTorch's math path. ValueError for attn_mask with
/// is_causal or dropout_p outside [0, 1]; ShapeError for operands of fewer than 2 dims, E or S
/// that differ between the operands, or a mask that does not broadcast. Differentiable in query,
/// key, value and a floating attn_mask. Runs the fused kernel where the device has one (on the
/// CPU a tiled online softmax whose memory is linear in L and S) and the composition (products,
/// softmax, products) elsewhere; nn::attention::sdpa_kernel restricts the choice and
/// last_sdpa_backend() says which ran (Note [Attention paths] in src/ops/attention_ops.cpp).
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

namespace nn::attention {

/// The implementations of scaled_dot_product_attention, as PyTorch's
/// torch.nn.attention.SDPBackend. MATH is the composition (every device, dtype and option);
/// FLASH_ATTENTION the fused kernel (CPU and sim: floating dtypes, masks without gradients);
/// EFFICIENT_ATTENTION and CUDNN_ATTENTION name PyTorch's CUDA kernels, which Locus does not
/// have yet: selecting only them makes every call fail.
enum class SDPBackend : int8_t { MATH = 0, FLASH_ATTENTION = 1, EFFICIENT_ATTENTION = 2, CUDNN_ATTENTION = 3 };

/// RAII, as PyTorch's `with sdpa_kernel(...)`: while alive, scaled_dot_product_attention on this
/// thread runs only the listed backends (the first that applies: FLASH_ATTENTION, then MATH).
/// A call none of them can run is a NotImplementedError naming why each could not. Nestable;
/// the previous choice comes back at destruction.
class sdpa_kernel {
 public:
  /// Only `backend`.
  sdpa_kernel(SDPBackend backend) : sdpa_kernel(std::vector<SDPBackend>{backend}) {}  // NOLINT: as PyTorch's call
  /// Only `backends`; ValueError when empty.
  explicit sdpa_kernel(const std::vector<SDPBackend>& backends);
  ~sdpa_kernel();
  sdpa_kernel(const sdpa_kernel&) = delete;
  sdpa_kernel& operator=(const sdpa_kernel&) = delete;

 private:
  uint8_t previous_;
};

/// The backend of this thread's last scaled_dot_product_attention (MATH before any).
SDPBackend last_sdpa_backend() noexcept;
/// How many scaled_dot_product_attention calls `backend` has run in this process.
int64_t sdpa_backend_calls(SDPBackend backend) noexcept;
/// PyTorch's name of `backend`: "MATH", "FLASH_ATTENTION", ...
const char* sdpa_backend_name(SDPBackend backend) noexcept;

}  // namespace nn::attention

namespace nn::functional {
/// F.scaled_dot_product_attention's spelling of locus::scaled_dot_product_attention.
using locus::scaled_dot_product_attention;
}  // namespace nn::functional

}  // namespace locus

LOCUS_API_END
