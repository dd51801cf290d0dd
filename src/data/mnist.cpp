// datasets::MNIST: the IDX files of a directory, read with read_idx.

#include "locus/data/datasets/mnist.h"

#include <filesystem>
#include <sstream>

#include "locus/data.h"
#include "locus/elementwise.h"
#include "locus/errors.h"

namespace locus::data::datasets {

namespace {

// The path of `stem` in `root`, compressed or not.
std::string find_file(const std::string& root, const std::string& stem) {
  const std::string raw = root + "/" + stem, gz = raw + ".gz";
  if (std::filesystem::exists(gz)) return gz;
  if (std::filesystem::exists(raw)) return raw;
  throw IOError("MNIST file not found: neither '" + gz + "' nor '" + raw +
                "' exists (install Debian's dataset-fashion-mnist, or pass the directory that holds them)");
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  const std::string prefix = train_ ? "train" : "t10k";
  const Tensor images = read_idx(find_file(root, prefix + "-images-idx3-ubyte"));
  const Tensor labels = read_idx(find_file(root, prefix + "-labels-idx1-ubyte"));
  if (images.dim() != 3 || labels.dim() != 1 || images.size(0) != labels.size(0)) {
    std::ostringstream os;
    os << "MNIST files in '" << root << "' disagree: images " << images.shape() << ", labels " << labels.shape();
    throw IOError(os.str());
  }
  images_ = div(images.to(kFloat32), 255.0).unsqueeze(1);
  targets_ = labels.to(kInt64);
}

Example<> MNIST::get(size_t index) {
  const int64_t i = static_cast<int64_t>(index);
  return {images_[i], targets_[i]};
}

std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

bool MNIST::is_train() const noexcept { return train_; }

const Tensor& MNIST::images() const { return images_; }

const Tensor& MNIST::targets() const { return targets_; }

}  // namespace locus::data::datasets
