// Tensors built from the golden files, and results compared with them.

#pragma once

#include <string>

#include "tests/golden/golden_file.h"

namespace locus::golden {

/// How the layout runs lay out an input that the file gives no view (README.md, "Layouts"): the
/// values stay, the memory order, steps and offset change. The file's own view otherwise.
enum class Layout {
  AsRecorded,  ///< contiguous, or the file's view
  Transposed,  ///< every dim in reverse memory order (a 2-d input is its transpose's .t())
  Stepped,     ///< every other element of a last dim twice as long
  Offset,      ///< contiguous from a storage offset of 3 elements
  Expanded,    ///< stride 0 along dim 0, where all its rows are equal
  ChannelsLast,  ///< a 4-d input stored NHWC, a 5-d one NDHWC (MemoryFormat::ChannelsLast/3d)
};

/// True when an input `d` takes `layout`: it has no view of its own and its shape allows it
/// (Transposed: 2 dims or more; Stepped: 1 or more; Expanded: dim 0 of 2 or more equal rows;
/// ChannelsLast: 4 or 5 dims).
bool can_lay_out(const TensorData& d, Layout layout);

/// The layouts' names as the test's messages print them ("transposed", ...).
const char* layout_name(Layout layout);

/// d on `dev`, as the strided view d.view names (README.md): the op sees those strides. With a
/// `layout` other than AsRecorded an input without a view is laid out that way where its shape
/// allows (can_lay_out).
Tensor device_tensor(const TensorData& d, Device dev, Layout layout = Layout::AsRecorded);

/// A double as the failure messages print it (round-trip precision).
std::string fmt(double v);

/// d in a few words: dtype, shape and the first values.
std::string describe(const TensorData& d);

/// How far a result's rounding may stray from PyTorch's, by how the op computes it.
enum class Rounding {
  Exact,        ///< one rounding per element (elementwise ops, factories, copies)
  Accumulates,  ///< sums in an order of the library's choosing (reductions, products, gradients)
  Chains,       ///< layers made of several such sums, whose intermediates are far larger than
                ///< the output (attention, transformer layers): rounding there is absolute
};

/// Empty when `got` matches `expected` within the dtype's tolerance for `rounding` (-0.0
/// against 0.0 counts when `signed_zeros`), else the first difference.
std::string compare(const TensorData& expected, const Tensor& got, Rounding rounding, bool signed_zeros);

}  // namespace locus::golden
