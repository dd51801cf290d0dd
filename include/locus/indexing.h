#pragma once
/// \file indexing.h
/// LibTorch's tensor indexing (`at::indexing`): the entries of `x.index({...})` and
/// `x.index_put_({...}, v)`. `using namespace locus::indexing;` brings `Slice`, `None` and
/// `Ellipsis` into scope, so `x.index({"...", Slice(1, None, 2)})` reads like `x[..., 1::2]`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <string_view>

#include "locus/tensor.h"

namespace locus::indexing {

/// PyTorch's `...`: as many full slices as the dims the other entries leave unindexed.
struct EllipsisIndexType {};
/// The `...` entry (a `"..."` string literal means the same).
inline constexpr EllipsisIndexType Ellipsis{};
/// The `None` entry: a new dim of size 1 at that position (`x[:, None]`).
inline constexpr std::nullopt_t None = std::nullopt;

/// One entry of an index list, as LibTorch's `at::indexing::TensorIndex`: an integer (selects
/// and drops the dim), a Slice, `None`, `Ellipsis` or `"..."`, a bool (a new dim of size 1 or
/// 0), or a tensor (int64/int32 indices, or a bool mask over as many dims as it has).
class TensorIndex {
 public:
  /// What the entry is.
  enum class Kind { Integer, Slice, NewAxis, EllipsisEntry, Boolean, Tensor };
  /// `None`: a new axis.
  TensorIndex(std::nullopt_t) : kind_(Kind::NewAxis) {}
  /// `Ellipsis`.
  TensorIndex(EllipsisIndexType) : kind_(Kind::EllipsisEntry) {}
  /// `"..."`, the only string LibTorch accepts (ValueError for any other).
  TensorIndex(const char* text);
  /// An integer: selects one position (negative counts from the end) and drops the dim.
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}
  /// An integer given as an `int` literal.
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}
  /// `True` adds a dim of size 1, `False` one of size 0 (PyTorch's `x[True]`).
  TensorIndex(bool b) : kind_(Kind::Boolean), boolean_(b) {}
  /// A Python slice.
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}
  /// Advanced indexing by a tensor of indices or a bool mask (a gather, not a view).
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}

  /// The kind of entry.
  Kind kind() const noexcept { return kind_; }
  /// The integer (Kind::Integer).
  int64_t integer() const noexcept { return integer_; }
  /// The bool (Kind::Boolean).
  bool boolean() const noexcept { return boolean_; }
  /// The slice (Kind::Slice).
  const Slice& slice() const noexcept { return slice_; }
  /// The tensor (Kind::Tensor).
  const Tensor& tensor() const noexcept { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace locus::indexing

LOCUS_API_END
