// Dataset and TensorDataset.

#include <sstream>

#include "locus/data.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"

namespace locus::data {

Example<> Dataset::get_batch(const std::vector<int64_t>& indices) const {
  std::vector<Tensor> data, targets;
  for (int64_t i : indices) {
    Example<> e = get(i);
    data.push_back(e.data);
    targets.push_back(e.target);
  }
  if (data.empty()) return {};
  return {stack(data, 0), stack(targets, 0)};
}

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  if (data_.dim() == 0 || targets_.dim() == 0 || data_.size(0) != targets_.size(0)) {
    std::ostringstream os;
    os << "TensorDataset: data " << data_.shape() << " and targets " << targets_.shape()
       << " must have the same first dimension";
    throw ShapeError(os.str());
  }
}

Example<> TensorDataset::get(int64_t index) const {
  if (index < 0 || index >= size())
    throw IndexError("TensorDataset: index " + std::to_string(index) + " is out of range for " + std::to_string(size()) +
                     " examples");
  return {data_.select(0, index), targets_.select(0, index)};
}

Example<> TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  const Tensor idx = tensor(indices).to(data_.device());
  return {index_select(data_, 0, idx), index_select(targets_, 0, idx)};
}

}  // namespace locus::data
