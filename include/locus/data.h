#pragma once
/// \file data.h
/// Everything of the data pipeline: LibTorch's (torch::data: datasets, transforms, samplers,
/// make_data_loader, under include/locus/data/), the type-erased Dataset and DataLoader with
/// PyTorch's options, and the IDX (MNIST) file reader. Note [Two data loaders] in
/// docs/design.md says why there are two loaders.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "locus/data/dataloader/stateless.h"
#include "locus/data/dataloader_options.h"
#include "locus/data/datasets/base.h"
#include "locus/data/datasets/map.h"
#include "locus/data/datasets/mnist.h"
#include "locus/data/datasets/tensor.h"
#include "locus/data/example.h"
#include "locus/data/make_data_loader.h"
#include "locus/data/samplers/base.h"
#include "locus/data/samplers/distributed.h"
#include "locus/data/samplers/random.h"
#include "locus/data/samplers/sequential.h"
#include "locus/data/transforms/base.h"
#include "locus/data/transforms/collate.h"
#include "locus/data/transforms/lambda.h"
#include "locus/data/transforms/stack.h"
#include "locus/data/transforms/tensor.h"
#include "locus/data_sampler.h"
#include "locus/tensor.h"

namespace locus::data {

/// The type-erased DataLoader's dataset: indexed examples whose batches are stacked Examples
/// (PyTorch's map-style Dataset). Implementations must allow get() from several threads at
/// once. LibTorch's pipeline has its own base, datasets::Dataset<Self>.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  /// Example `index` (0 <= index < size(); IndexError otherwise).
  virtual Example<> get(int64_t index) const = 0;
  /// The examples at `indices`, stacked along a new first dim. The default stacks get(i).
  virtual Example<> get_batch(const std::vector<int64_t>& indices) const;
};

/// Examples are rows of two tensors with the same first dim: PyTorch's TensorDataset(data,
/// targets), for the type-erased DataLoader. LibTorch's datasets::TensorDataset is the rows of
/// one tensor, without targets.
class TensorDataset : public Dataset {
 public:
  /// ShapeError when the first dims differ.
  TensorDataset(Tensor data, Tensor targets);
  int64_t size() const override { return data_.size(0); }
  Example<> get(int64_t index) const override;
  /// One index_select per tensor: no per-example work.
  Example<> get_batch(const std::vector<int64_t>& indices) const override;
  const Tensor& data() const noexcept { return data_; }
  const Tensor& targets() const noexcept { return targets_; }

 private:
  Tensor data_, targets_;
};

/// Reads an IDX file (the MNIST format), gzip-compressed or raw, into a CPU tensor of its
/// dtype (uint8, int8, int32, float32, float64; int16 becomes int32) and shape. IOError naming
/// the file and the problem for a missing, unreadable, malformed or truncated file.
Tensor read_idx(const std::string& path);

/// Fashion-MNIST (or MNIST) from `dir` (train-images-idx3-ubyte[.gz] and friends): images as
/// float32 [N, 784] scaled to [0, 1], labels as int64 [N]. IOError when files are missing.
std::shared_ptr<TensorDataset> load_mnist(const std::string& dir, bool train);

/// Where Debian's dataset-fashion-mnist package installs the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Iterates a dataset in batches: `for (const Example<>& batch : loader) ...`. Each loop over it
/// is one epoch. One iteration at a time per loader.
class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  /// A loader of batches of `batch_size` with the other options' defaults: `DataLoader(ds, 32)`.
  DataLoader(std::shared_ptr<const Dataset> dataset, int64_t batch_size)
      : DataLoader(std::move(dataset), DataLoaderOptions(batch_size)) {}
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// Batches per epoch.
  int64_t size() const noexcept;
  const DataLoaderOptions& options() const noexcept { return options_; }

  class Iterator {
   public:
    const Example<>& operator*() const { return loader_->current(); }
    const Example<>* operator->() const { return &loader_->current(); }
    Iterator& operator++() {
      loader_->advance();
      return *this;
    }
    bool operator!=(const Iterator& o) const { return done() != o.done(); }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader) : loader_(loader) {}
    bool done() const noexcept { return !loader_ || loader_->exhausted(); }
    DataLoader* loader_;
  };
  /// Starts an epoch.
  Iterator begin();
  Iterator end() { return Iterator(nullptr); }

 private:
  struct Epoch;
  const Example<>& current() const;
  void advance();
  bool exhausted() const noexcept;
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  uint64_t epoch_ = 0;
  std::unique_ptr<Epoch> run_;
};

}  // namespace locus::data

LOCUS_API_END
