// The class losses' layout: rows of classes, and back.

#include "src/ops/class_layout.h"

namespace locus::ops {

Shape class_target_shape(const Tensor& input) {
  Shape want;
  if (input.dim() == 1) return want;
  want.push_back(input.size(0));
  for (int64_t d = 2; d < input.dim(); ++d) want.push_back(input.size(d));
  return want;
}

Tensor class_rows(const Tensor& input) {
  if (input.dim() <= 2) return input.dim() == 1 ? input.unsqueeze(0) : input;
  Shape order{0};
  for (int64_t d = 2; d < input.dim(); ++d) order.push_back(d);
  order.push_back(1);
  return input.permute(order).reshape({-1, input.size(1)});
}

Tensor from_class_rows(const Tensor& rows, const Shape& input_shape) {
  if (input_shape.size() <= 2) return rows.reshape(input_shape);
  Shape channels_last{input_shape[0]};
  for (size_t d = 2; d < input_shape.size(); ++d) channels_last.push_back(input_shape[d]);
  channels_last.push_back(input_shape[1]);
  Shape order{0, static_cast<int64_t>(input_shape.size()) - 1};
  for (int64_t d = 1; d + 1 < static_cast<int64_t>(input_shape.size()); ++d) order.push_back(d);
  return rows.reshape(channels_last).permute(order).contiguous();
}

}  // namespace locus::ops
