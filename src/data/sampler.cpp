// DistributedSampler: PyTorch's sharding (pad by repeating from the start, or drop the tail;
// rank r takes indices r, r + R, r + 2R, ...) over a permutation that depends only on
// (seed, epoch), so every rank computes the same one without talking to the others.

#include "locus/data_sampler.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "locus/errors.h"

namespace locus::data {

DistributedSampler::DistributedSampler(DistributedSamplerOptions options) : options_(options) {
  if (options_.num_replicas() < 1)
    throw ValueError("DistributedSampler: num_replicas must be at least 1, got " + std::to_string(options_.num_replicas()));
  if (options_.rank() < 0 || options_.rank() >= options_.num_replicas())
    throw ValueError("DistributedSampler: invalid rank " + std::to_string(options_.rank()) + ", rank should be in the interval [0, " +
                     std::to_string(options_.num_replicas() - 1) + "]");
}

int64_t DistributedSampler::size(int64_t n) const {
  const int64_t r = options_.num_replicas();
  if (options_.drop_last() && n % r != 0) return n / r;
  return (n + r - 1) / r;
}

std::vector<int64_t> DistributedSampler::indices(int64_t n) const {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (options_.shuffle()) {
    std::mt19937_64 rng(options_.seed() * 0x9E3779B97F4A7C15ull + epoch_);
    std::shuffle(order.begin(), order.end(), rng);
  }
  const int64_t r = options_.num_replicas(), total = size(n) * r;
  if (n > 0)
    for (int64_t i = n; i < total; ++i) order.push_back(order[static_cast<size_t>((i - n) % n)]);
  order.resize(static_cast<size_t>(total));
  std::vector<int64_t> mine;
  for (int64_t i = options_.rank(); i < total; i += r) mine.push_back(order[static_cast<size_t>(i)]);
  return mine;
}

}  // namespace locus::data
