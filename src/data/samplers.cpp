// The LibTorch-style samplers of include/locus/data/samplers/.

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "locus/data/samplers/distributed.h"
#include "locus/data/samplers/random.h"
#include "locus/data/samplers/sequential.h"
#include "locus/errors.h"
#include "locus/random.h"

namespace locus::data::samplers {

namespace {

// The next min(batch_size, remaining) of the `count` indices that `at(i)` gives, from `*next`.
template <typename At>
std::optional<std::vector<size_t>> take(size_t* next, size_t count, size_t batch_size, At at) {
  if (*next >= count) return std::nullopt;
  const size_t n = std::min(batch_size, count - *next);
  std::vector<size_t> batch(n);
  for (size_t i = 0; i < n; ++i) batch[i] = at(*next + i);
  *next += n;
  return batch;
}

void check_replicas(const char* who, size_t num_replicas, size_t rank) {
  if (num_replicas == 0) throw ValueError(std::string(who) + ": num_replicas must be at least 1");
  if (rank >= num_replicas)
    throw ValueError(std::string(who) + ": rank " + std::to_string(rank) + " is not in [0, " + std::to_string(num_replicas) +
                     ")");
}

}  // namespace

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  return take(&index_, size_, batch_size, [](size_t i) { return i; });
}

RandomSampler::RandomSampler(int64_t size, DType index_dtype) : indices_(randperm(size, index_dtype)) {}

void RandomSampler::reset(std::optional<size_t> new_size) {
  const int64_t n = new_size ? static_cast<int64_t>(*new_size) : indices_.numel();
  indices_ = randperm(n, indices_.dtype());
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  const int64_t count = indices_.numel();
  if (index_ >= count) return std::nullopt;
  const int64_t n = std::min(static_cast<int64_t>(batch_size), count - index_);
  // One conversion per batch, not per index: the permutation may be int32.
  const Tensor slice = indices_.slice(0, index_, index_ + n).to(kInt64).contiguous();
  const int64_t* p = slice.data_ptr<int64_t>();
  index_ += n;
  return std::vector<size_t>(p, p + n);
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank, bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  check_replicas("DistributedRandomSampler", num_replicas, rank);
  reset();
}

// Note [Distributed permutation]
// Every replica draws the same permutation of all `size` indices from a generator seeded with
// the epoch alone (not Locus's global one, which the replicas' other draws would put out of
// step), so the shards are disjoint and, with padding, cover the dataset. Padding repeats the
// permutation's start, as PyTorch's DistributedSampler does; without it the permutation's
// tail, a different one each epoch, is left out.
void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  std::vector<size_t> perm(size_);
  std::iota(perm.begin(), perm.end(), size_t{0});
  std::mt19937_64 rng(epoch_);
  std::shuffle(perm.begin(), perm.end(), rng);
  const size_t k = local_sample_count();
  shard_.clear();
  if (size_ > 0)
    for (size_t i = rank_ * k; i < (rank_ + 1) * k; ++i) shard_.push_back(perm[i % size_]);
  next_ = 0;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  return take(&next_, shard_.size(), batch_size, [&](size_t i) { return shard_[i]; });
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank, bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  check_replicas("DistributedSequentialSampler", num_replicas, rank);
  reset();
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  begin_ = rank_ * local_sample_count();
  end_ = size_ == 0 ? begin_ : begin_ + local_sample_count();
  next_ = begin_;
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  return take(&next_, end_, batch_size, [&](size_t i) { return i % size_; });
}

}  // namespace locus::data::samplers
