// Strided views of stored bytes (stored_view.h).

#include "src/serialize/stored_view.h"

#include <cstring>

namespace locus::serialize {

int64_t check_stored_view(const StoredView& v, const std::string& tensor, const std::string& storage,
                          const std::function<void(const std::string&)>& fail) {
  if (v.shape.size() != v.stride.size())
    fail("tensor '" + tensor + "' has " + std::to_string(v.shape.size()) + " sizes but " + std::to_string(v.stride.size()) +
         " strides");
  if (v.offset < 0) fail("tensor '" + tensor + "' has a negative storage offset");
  const auto offset = static_cast<uint64_t>(v.offset);
  uint64_t numel = 1, last = offset;
  bool overflow = false;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] < 0 || v.stride[d] < 0) fail("tensor '" + tensor + "' has a negative size or stride");
    const auto size = static_cast<uint64_t>(v.shape[d]);
    overflow |= __builtin_mul_overflow(numel, size, &numel);
    if (size > 0) {
      uint64_t step = 0;
      overflow |= __builtin_mul_overflow(size - 1, static_cast<uint64_t>(v.stride[d]), &step);
      overflow |= __builtin_add_overflow(last, step, &last);
    }
  }
  if (overflow) fail("tensor '" + tensor + "' has a size or stride that overflows");
  if (numel == 0) {
    if (offset > v.storage_numel)
      fail("tensor '" + tensor + "' starts at element " + std::to_string(offset) + " of storage '" + storage +
           "', which has only " + std::to_string(v.storage_numel) + " elements");
    return 0;
  }
  if (last >= v.storage_numel)
    fail("tensor '" + tensor + "' views elements " + std::to_string(offset) + " to " + std::to_string(last) +
         " of storage '" + storage + "', which has only " + std::to_string(v.storage_numel) + " elements");
  if (numel > v.storage_numel)
    fail("tensor '" + tensor + "' repeats elements of its storage (a stride-0 view, as expand() makes): " +
         std::to_string(numel) + " elements from a storage of " + std::to_string(v.storage_numel) + "; save a clone() of it");
  return static_cast<int64_t>(numel);
}

void gather_stored_view(const StoredView& v, const unsigned char* storage, size_t item, unsigned char* dst) {
  const size_t ndim = v.shape.size();
  const unsigned char* base = storage + static_cast<size_t>(v.offset) * item;
  // Contiguous already: one copy.
  bool contiguous = true;
  int64_t expected = 1;
  for (size_t d = ndim; d-- > 0;) {
    if (v.shape[d] != 1 && v.stride[d] != expected) contiguous = false;
    expected *= v.shape[d];
  }
  if (contiguous) {
    std::memcpy(dst, base, static_cast<size_t>(expected) * item);
    return;
  }
  // Otherwise an odometer over the outer dimensions, the innermost one copied element by element.
  const int64_t inner = v.shape[ndim - 1];
  const size_t inner_stride = static_cast<size_t>(v.stride[ndim - 1]) * item;
  std::vector<int64_t> index(ndim, 0);
  while (true) {
    size_t at = 0;
    for (size_t d = 0; d + 1 < ndim; ++d) at += static_cast<size_t>(index[d] * v.stride[d]);
    const unsigned char* src = base + at * item;
    for (int64_t i = 0; i < inner; ++i, src += inner_stride, dst += item) std::memcpy(dst, src, item);
    size_t d = ndim - 1;
    while (d > 0 && ++index[d - 1] == v.shape[d - 1]) index[--d] = 0;
    if (d == 0) return;
  }
}

}  // namespace locus::serialize
