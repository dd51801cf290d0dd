// The tutorials' next chapter: the training loop with mixed precision. The forward pass and the
// loss run under autocast (matmuls in float16 or bfloat16, the loss in float32); a GradScaler
// keeps float16 gradients from underflowing and skips steps whose gradients overflowed.
//   scaler = torch.amp.GradScaler(device.type, enabled=(dtype == torch.float16))
//   for xb, yb in train_loader:
//       xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
//       with torch.autocast(device_type=device.type, dtype=dtype):
//           logits = model(xb); loss = loss_fn(logits, yb)
//       optimizer.zero_grad()
//       scaler.scale(loss).backward()
//       scaler.unscale_(optimizer)
//       torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
//       scaler.step(optimizer); scaler.update()
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

using namespace locus;

void example() {
  const Device device = best_device();
  // torch.autocast's default for the device type: bfloat16 on the CPU, float16 on a GPU.
  const DType dtype = amp::default_autocast_dtype(device.type());
  std::cout << "device: " << device << ", autocast " << dtype_name(dtype) << "\n";
  manual_seed(1);
  nn::Sequential model(nn::Linear(20, 64), nn::ReLU(), nn::Linear(64, 3));
  model->to(device);  // parameters stay float32: autocast casts them per op, once per region
  const Tensor x = randn({512, 20});
  const Tensor y = argmax(x.narrow(1, 0, 3), 1);  // a learnable rule: the largest of the first three
  data::DataLoader train_loader(std::make_shared<data::TensorDataset>(x, y),
                                data::DataLoaderOptions().batch_size(64).shuffle(true).pin_memory(device.is_cuda()));
  nn::CrossEntropyLoss loss_fn;
  optim::AdamW optimizer(model->parameters(), 0.01);
  amp::GradScaler scaler(amp::GradScalerOptions().enabled(dtype == kFloat16));
  double first = 0, last = 0;
  DType logits_dtype = kFloat32, loss_dtype = kFloat32;
  for (int epoch = 0; epoch < 4; ++epoch)
    for (const data::Example<>& batch : train_loader) {
      const Tensor xb = batch.data.to(device, /*non_blocking=*/true);
      const Tensor yb = batch.target.to(device, /*non_blocking=*/true);
      Tensor logits, loss;
      {
        const amp::AutocastGuard autocast(device.type(), dtype);  // with torch.autocast(...):
        logits = model(xb);                                        // float16/bfloat16
        loss = loss_fn(logits, yb);                                // float32
      }
      optimizer.zero_grad();
      scaler.scale(loss).backward();
      scaler.unscale_(optimizer);  // the true gradients, so clipping sees them
      nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      scaler.step(optimizer);  // skipped if a gradient is inf or NaN
      scaler.update();
      (first == 0 ? first : last) = loss.item<double>();
      logits_dtype = logits.dtype(), loss_dtype = loss.dtype();
    }
  std::cout << "logits " << dtype_name(logits_dtype) << ", loss " << dtype_name(loss_dtype) << ", weights "
            << dtype_name(model->parameters()[0].dtype()) << ", gradients " << dtype_name(model->parameters()[0].grad().dtype())
            << "\nloss " << first << " -> " << last << ", scale " << scaler.get_scale() << "\n";
  if (!(last < first / 2)) throw ValueError("mixed-precision training did not learn: loss " + std::to_string(first) + " -> " + std::to_string(last));
}
