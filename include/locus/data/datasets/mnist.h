#pragma once
/// \file datasets/mnist.h
/// datasets::MNIST: the MNIST (or Fashion-MNIST) training or test set as a Dataset.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>
#include <string>

#include "locus/data/datasets/base.h"
#include "locus/data/example.h"
#include "locus/tensor.h"

namespace locus::data::datasets {

/// The MNIST files of a directory: train-images-idx3-ubyte, train-labels-idx1-ubyte,
/// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each raw or gzip-compressed (.gz), as
/// Debian's dataset-fashion-mnist installs them in kFashionMnistDir. Example i is image i,
/// float32 [1, 28, 28] in [0, 1], and its label, an int64 scalar.
class MNIST : public Dataset<MNIST> {
 public:
  /// Which of the two sets.
  enum class Mode {
    kTrain,  ///< the training set, 60000 examples
    kTest,   ///< the test set, 10000 examples
  };

  /// Reads the set `mode` from directory `root`. IOError naming the file that is missing or
  /// unreadable, or when the image and label files disagree.
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  /// Image `index` and its label; IndexError out of range.
  Example<> get(size_t index) override;

  /// The number of examples.
  std::optional<size_t> size() const override;

  /// Whether this is the training set.
  bool is_train() const noexcept;

  /// All images, float32 [N, 1, 28, 28] in [0, 1].
  const Tensor& images() const;

  /// All labels, int64 [N].
  const Tensor& targets() const;

 private:
  Tensor images_, targets_;
  bool train_;
};

}  // namespace locus::data::datasets

LOCUS_API_END
