#pragma once
/// \file transforms/tensor.h
/// Transforms of an example's data tensor: TensorTransform, TensorLambda, Normalize.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <functional>
#include <utility>
#include <vector>

#include "locus/data/example.h"
#include "locus/data/transforms/base.h"
#include "locus/elementwise.h"
#include "locus/factories.h"

namespace locus::data::transforms {

/// A Transform of Example<Tensor, Target> that rewrites the data through operator() and keeps
/// the target.
template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  /// The example type, in and out.
  using E = Example<Tensor, Target>;

  /// The new data for `input`.
  virtual Tensor operator()(Tensor input) = 0;

  /// `input` with its data passed through operator().
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

/// A TensorTransform given by a function of the data tensor.
template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  /// The function's type.
  using FunctionType = std::function<Tensor(Tensor)>;

  /// The transform that replaces an example's data by function(data).
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}

  /// function(input).
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

/// (data - mean) / stddev, per channel: the statistics are float32 tensors of shape [C, 1, 1],
/// so they broadcast over [C, H, W] images (one value broadcasts over any).
template <typename Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  /// One mean and standard deviation for every channel: `Normalize<>(0.1307, 0.3081)`.
  Normalize(double mean, double stddev) : Normalize(std::vector<double>{mean}, std::vector<double>{stddev}) {}

  /// One mean and standard deviation per channel: `Normalize<>({0.5, 0.5, 0.5}, {0.2, 0.2, 0.2})`.
  Normalize(const std::vector<double>& mean, const std::vector<double>& stddev)
      : mean(tensor(mean, kFloat32).view({-1, 1, 1})), stddev(tensor(stddev, kFloat32).view({-1, 1, 1})) {}

  /// The normalized data.
  Tensor operator()(Tensor input) override { return div(sub(input, mean), stddev); }

  /// The subtrahend, [C, 1, 1].
  Tensor mean;
  /// The divisor, [C, 1, 1].
  Tensor stddev;
};

}  // namespace locus::data::transforms

LOCUS_API_END
