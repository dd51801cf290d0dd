#pragma once
/// \file host_values.h
/// A tensor's values on the host with their shape: what Python's tensor.tolist() gives, as a
/// flat row-major vector plus the shape to index it.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "locus/errors.h"
#include "locus/shape.h"

namespace locus {

/// Values in row-major order and the shape they fill (Tensor::tolist<T>()).
template <class T>
struct HostValues {
  Shape shape;
  std::vector<T> values;

  /// The element at `index` (one entry per dim; negative counts from the end), as
  /// `t.tolist()[i][j]`. IndexError for a wrong count or an index out of range.
  T at(std::initializer_list<int64_t> index) const {
    if (index.size() != shape.size())
      throw IndexError("HostValues::at: " + std::to_string(index.size()) + " indices for " +
                       std::to_string(shape.size()) + " dims");
    int64_t flat = 0, d = 0;
    for (int64_t i : index) {
      const int64_t n = shape[static_cast<size_t>(d)];
      if (i < -n || i >= n)
        throw IndexError("HostValues::at: index " + std::to_string(i) + " is out of range for dim " +
                         std::to_string(d) + " of size " + std::to_string(n));
      flat = flat * n + (i < 0 ? i + n : i);
      ++d;
    }
    return values[static_cast<size_t>(flat)];
  }
};

}  // namespace locus

LOCUS_API_END
