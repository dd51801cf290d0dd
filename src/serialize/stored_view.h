#pragma once
// A tensor stored as a strided view of a storage's raw bytes, as PyTorch's archives keep them
// (torch.save's data/<key>, torch.export.save's data/weights/<name>): the view's bounds checked
// against the storage before anything is read, and its elements gathered contiguous
// (stored_view.cpp).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace locus::serialize {

/// A view of `storage_numel` elements: element (i0, i1, ...) at offset + sum(i_d stride_d).
struct StoredView {
  std::vector<int64_t> shape, stride;
  int64_t offset = 0;
  uint64_t storage_numel = 0;
};

/// The view's element count after checking that it lies inside the storage, that no size or
/// stride overflows, and that it does not repeat elements (a stride-0 expand, which could
/// inflate a small file into a huge allocation). On failure calls `fail` with the problem,
/// naming `tensor` and `storage`; `fail` must throw.
int64_t check_stored_view(const StoredView& view, const std::string& tensor, const std::string& storage,
                          const std::function<void(const std::string&)>& fail);

/// Copies the (checked, non-empty) view of `storage` into `dst`, contiguous, `item` bytes an element.
void gather_stored_view(const StoredView& view, const unsigned char* storage, size_t item, unsigned char* dst);

}  // namespace locus::serialize
