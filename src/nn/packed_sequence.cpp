// nn::utils::rnn: PackedSequence, pack_padded_sequence, pad_packed_sequence, pad_sequence and
// pack_sequence as LibTorch's torch/nn/utils/rnn.h, built from differentiable ops (narrow, cat,
// stack, index_select), so gradients flow from the packed rows back to the padded batch and
// the other way.

#include "locus/nn/utils/rnn.h"

#include <algorithm>
#include <string>
#include <vector>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/shape_ops.h"
#include "src/nn/python_repr.h"

namespace locus::nn::utils::rnn {
namespace {

std::vector<int64_t> host_int64(const Tensor& t) {
  return t.detach().to(Device("cpu")).to(kInt64).contiguous().to_vector<int64_t>();
}

Tensor host_tensor(const std::vector<int64_t>& v) {
  return tensor(v, TensorOptions().dtype(kInt64)).reshape({static_cast<int64_t>(v.size())});
}

// A [n, trailing...] block of `value` in data's dtype and on its device.
Tensor padding_rows(int64_t n, const Shape& trailing, double value, const Tensor& like) {
  Shape shape = trailing;
  shape.insert(0, n);
  return full(shape, value, TensorOptions().dtype(like.dtype()).device(like.device()));
}

Shape trailing_dims(const Tensor& t, size_t from) {
  Shape s;
  for (size_t d = from; d < static_cast<size_t>(t.dim()); ++d) s.push_back(t.size(static_cast<int64_t>(d)));
  return s;
}

}  // namespace

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return Tensor();
  const Tensor positions =
      arange(permutation.numel(), TensorOptions().dtype(permutation.dtype()).device(permutation.device()));
  return scatter(zeros_like(permutation), 0, permutation, positions);
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)), batch_sizes_(std::move(batch_sizes)), sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  if (!unsorted_indices_.defined()) unsorted_indices_ = invert_permutation(sorted_indices_);
  if (!batch_sizes_.defined() || !batch_sizes_.is_cpu())
    throw ValueError(
        "PackedSequence: batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
        "manually; make them with pack_padded_sequence or pack_sequence");
}

PackedSequence PackedSequence::to(Device device) const {
  const Tensor data = data_.to(device);
  if (data.is_same(data_)) return *this;
  const auto move = [&](const Tensor& t) { return t.defined() ? t.to(data.device()) : t; };
  return PackedSequence(data, batch_sizes_, move(sorted_indices_), move(unsorted_indices_));
}

PackedSequence PackedSequence::to(DType dtype) const {
  const Tensor data = data_.to(dtype);
  if (data.is_same(data_)) return *this;
  return PackedSequence(data, batch_sizes_, sorted_indices_, unsorted_indices_);
}

PackedSequence PackedSequence::cuda() const { return to(Device("cuda")); }

PackedSequence PackedSequence::cpu() const { return to(Device("cpu")); }

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first, bool enforce_sorted) {
  if (!input.defined() || input.dim() < 2)
    throw ShapeError("pack_padded_sequence: input must have at least 2 dims ([T, B, *] or [B, T, *] with batch_first), got " +
                     std::string(input.defined() ? std::to_string(input.dim()) + "-D" : "an undefined tensor"));
  if (!lengths.defined() || lengths.dim() != 1 || is_floating_point(lengths.dtype()) || lengths.dtype() == kBool)
    throw ValueError("pack_padded_sequence: lengths must be a 1-D integer tensor");
  const int64_t batch_dim = batch_first ? 0 : 1;
  const int64_t steps = input.size(batch_first ? 1 : 0), batch = input.size(batch_dim);
  std::vector<int64_t> len = host_int64(lengths);
  if (static_cast<int64_t>(len.size()) != batch)
    throw ValueError("pack_padded_sequence: Expected `len(lengths)` to be equal to batch_size, but got " +
                     std::to_string(len.size()) + " (batch_size=" + std::to_string(batch) + ")");
  Tensor sorted_indices;
  if (!enforce_sorted) {
    // Longest first; Locus's sort is stable, so equal lengths keep their order.
    auto [sorted, order] = sort(host_tensor(len), 0, /*descending=*/true);
    len = sorted.to_vector<int64_t>();
    sorted_indices = order.to(input.device());
    input = index_select(input, batch_dim, sorted_indices);
  }
  for (size_t b = 0; b < len.size(); ++b) {
    if (len[b] <= 0)
      throw ValueError(
          "pack_padded_sequence: Length of all samples has to be greater than 0, but found an element in 'lengths' "
          "that is <= 0");
    if (b > 0 && len[b] > len[b - 1])
      throw ValueError(
          "pack_padded_sequence: `lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
          "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
          "if you do not need ONNX exportability.");
    if (len[b] > steps)
      throw ValueError("pack_padded_sequence: lengths[" + std::to_string(b) + "] is " + std::to_string(len[b]) +
                       ", more than the input's " + std::to_string(steps) + " time steps");
  }
  // Step t holds the rows of the sequences longer than t: the first batch_sizes[t] of them.
  const Tensor time_major = batch_first ? input.transpose(0, 1) : input;
  const int64_t longest = len.empty() ? 0 : len.front();
  std::vector<int64_t> batch_sizes(static_cast<size_t>(longest));
  std::vector<Tensor> rows;
  for (int64_t t = 0; t < longest; ++t) {
    batch_sizes[t] = std::count_if(len.begin(), len.end(), [&](int64_t l) { return l > t; });
    rows.push_back(time_major.select(0, t).narrow(0, 0, batch_sizes[t]));
  }
  Tensor data = rows.empty() ? time_major.narrow(0, 0, 0).flatten(0, 1) : cat(rows, 0);
  return PackedSequence(data, host_tensor(batch_sizes), sorted_indices, {});
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  const std::vector<int64_t> batch_sizes = host_int64(sequence.batch_sizes());
  const Tensor& data = sequence.data();
  int64_t steps = static_cast<int64_t>(batch_sizes.size());
  if (total_length) {
    if (*total_length < steps)
      throw ValueError("pad_packed_sequence: Expected total_length to be at least the length of the longest sequence in "
                       "input, but got total_length=" + std::to_string(*total_length) + " and max sequence length being " +
                       std::to_string(steps));
    steps = *total_length;
  }
  const int64_t batch = batch_sizes.empty() ? 0 : batch_sizes.front();
  const Shape trailing = trailing_dims(data, 1);
  std::vector<Tensor> padded_steps;
  int64_t offset = 0;
  for (int64_t t = 0; t < steps; ++t) {
    const int64_t running = t < static_cast<int64_t>(batch_sizes.size()) ? batch_sizes[t] : 0;
    Tensor step = data.narrow(0, offset, running);
    offset += running;
    if (running < batch) step = cat({step, padding_rows(batch - running, trailing, padding_value, data)}, 0);
    padded_steps.push_back(step);
  }
  Shape step_shape = trailing;
  step_shape.insert(0, batch);
  Tensor padded = padded_steps.empty() ? padding_rows(0, step_shape, padding_value, data) : stack(padded_steps, 0);
  std::vector<int64_t> lengths(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b)
    lengths[b] = std::count_if(batch_sizes.begin(), batch_sizes.end(), [&](int64_t n) { return n > b; });
  Tensor length_tensor = host_tensor(lengths);
  if (batch_first) padded = padded.transpose(0, 1);
  if (sequence.unsorted_indices().defined()) {
    padded = index_select(padded, batch_first ? 0 : 1, sequence.unsorted_indices());
    length_tensor = index_select(length_tensor, 0, sequence.unsorted_indices().to(Device("cpu")));
  }
  return {padded, length_tensor};
}

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
  if (sequences.empty()) throw ValueError("pad_sequence: received an empty list of sequences");
  int64_t longest = 0;
  for (size_t k = 0; k < sequences.size(); ++k) {
    const Tensor& s = sequences[k];
    if (!s.defined() || s.dim() < 1)
      throw ShapeError("pad_sequence: sequence " + std::to_string(k) + " must have at least one dim (its length)");
    if (trailing_dims(s, 1) != trailing_dims(sequences[0], 1))
      throw ShapeError("pad_sequence: every sequence must have the same trailing dims, but sequence 0 is " +
                       nn::detail::shape_text(sequences[0].shape()) + " and sequence " + std::to_string(k) + " is " +
                       nn::detail::shape_text(s.shape()));
    longest = std::max(longest, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences)
    padded.push_back(s.size(0) == longest ? s : cat({s, padding_rows(longest - s.size(0), trailing_dims(s, 1), padding_value, s)}, 0));
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted) {
  const Tensor padded = pad_sequence(sequences);
  std::vector<int64_t> lengths;
  for (const Tensor& s : sequences) lengths.push_back(s.size(0));
  return pack_padded_sequence(padded, host_tensor(lengths), false, enforce_sorted);
}

}  // namespace locus::nn::utils::rnn
