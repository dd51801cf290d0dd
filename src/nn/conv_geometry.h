#pragma once
// What the convolutions and the pooling layers share: the window count of a dim, the checks of
// window arguments, and Python's spelling of a size tuple in messages and reprs.

#include <cstdint>
#include <string>
#include <vector>

#include "src/ops/im2col.h"

namespace locus::nn::functional {

/// floor((size + 2 pad - dilation (kernel - 1) - 1) / stride) + 1 (ceil with `ceil_mode`, less a
/// last window that would start in the right padding, as PyTorch's pooling_output_shape); may be
/// 0 or negative when no window fits.
int64_t window_count(int64_t size, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode = false);

/// The geometry of windows of kernel_h x kernel_w over an h x w image (window_count per dim).
ops::WindowGeometry window_geometry(int64_t h, int64_t w, int64_t kernel_h, int64_t kernel_w,
                                    const std::vector<int64_t>& padding, const std::vector<int64_t>& stride,
                                    const std::vector<int64_t>& dilation, bool ceil_mode = false);

/// ValueError (with `prefix`) for a non-positive kernel size, stride or dilation or a negative padding.
void check_window_args(const std::string& prefix, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation);

/// Python's tuple: "(2, 3)", "(3,)".
std::string tuple_repr(const std::vector<int64_t>& v);

/// One number when every element is equal, else the tuple: what PyTorch prints for a size given
/// as a single int ("2", or "(2, 3)").
std::string int_or_tuple_repr(const std::vector<int64_t>& v);

}  // namespace locus::nn::functional
