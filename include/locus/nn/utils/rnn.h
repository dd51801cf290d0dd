#pragma once
/// \file utils/rnn.h
/// Sequences of different lengths for the recurrent layers, as LibTorch's
/// torch/nn/utils/rnn.h: nn::utils::rnn::PackedSequence, pack_padded_sequence,
/// pad_packed_sequence, pack_sequence, pad_sequence.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "locus/tensor.h"

namespace locus::nn::utils::rnn {

/// The inverse of a permutation of 0..n-1 (undefined for an undefined one): result[p[i]] = i.
Tensor invert_permutation(const Tensor& permutation);

/// A batch of sequences of different lengths, packed time step by time step: the rows of every
/// sequence still running at step 0, then at step 1, ... `data` is [sum of lengths, *];
/// `batch_sizes` (int64, on the CPU) says how many sequences run at each step (never increasing);
/// `sorted_indices` is the order, longest first, in which the sequences were packed (undefined
/// when they came sorted) and `unsorted_indices` its inverse. The sequences "abc" and "x" pack
/// as data "axbc" with batch_sizes [2, 1, 1]. Made by pack_padded_sequence and pack_sequence
/// (as in LibTorch, building one by hand is for the library's own use).
class PackedSequence {
 public:
  /// The packed rows and the steps' batch sizes; unsorted_indices defaults to the inverse of
  /// sorted_indices. ValueError when batch_sizes is not on the CPU.
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {}, Tensor unsorted_indices = {});
  /// [sum of lengths, *]: the rows of every running sequence, step after step.
  const Tensor& data() const { return data_; }
  /// int64 [longest length] on the CPU: how many sequences run at each step.
  const Tensor& batch_sizes() const { return batch_sizes_; }
  /// The order in which the sequences were packed (undefined: as given).
  const Tensor& sorted_indices() const { return sorted_indices_; }
  /// The inverse of sorted_indices (undefined: as given).
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  /// The same sequences with data (and the indices) on `device`; this one when already there.
  PackedSequence to(Device device) const;
  /// The same sequences with data converted to `dtype` (the indices stay int64).
  PackedSequence to(DType dtype) const;
  /// to(Device("cuda")).
  PackedSequence cuda() const;
  /// to(Device("cpu")).
  PackedSequence cpu() const;
  /// Whether data is on a CUDA device.
  bool is_cuda() const { return data_.is_cuda(); }
  /// Whether data is in pinned host memory.
  bool is_pinned() const { return data_.is_pinned(); }

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

/// Packs a padded batch `input` [T, B, *] ([B, T, *] with batch_first) whose sequence b has
/// lengths[b] steps (a CPU int64 tensor, or any integer tensor). With enforce_sorted the lengths
/// must not increase (ValueError otherwise, as PyTorch's RuntimeError "`lengths` array must be
/// sorted in decreasing order when `enforce_sorted` is True"); without it the sequences are
/// packed longest first and the PackedSequence remembers the order. ValueError for a length of
/// 0 or beyond T, or lengths that do not match the batch.
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false, bool enforce_sorted = true);

/// The inverse of pack_padded_sequence: {padded [T, B, *] ([B, T, *] with batch_first) with
/// padding_value after each sequence's end, the lengths (int64 on the CPU)}, in the order the
/// sequences were given. T is the longest length, or total_length (ValueError when shorter).
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

/// Stacks sequences [L_i, *] into [T, B, *] ([B, T, *] with batch_first), T the longest L_i,
/// padded with padding_value. ValueError for an empty list or trailing dims that differ.
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false, double padding_value = 0.0);

/// Packs sequences [L_i, *]: pack_padded_sequence(pad_sequence(sequences), their lengths).
PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);

}  // namespace locus::nn::utils::rnn

LOCUS_API_END
