// Seed 001: model on the device once at startup, each batch moved with non_blocking, the loss
// brought back with .item() only to print it.
//   model = MyModel().to(device)
//   for xb, yb in train_loader:
//       xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
//       logits = model(xb); loss = loss_fn(logits, yb); loss.backward(); optimizer.step()
//       print(loss.item())
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

using namespace locus;

// class MyModel(nn.Module): two layers with a ReLU between. The class holds the module; the
// handle MyModel (declared by LOCUS_MODULE) is what code passes around and calls.
class MyModelImpl : public nn::Module {
 public:
  MyModelImpl() {
    fc1 = register_module("fc1", nn::Linear(20, 32));  // self.fc1 = nn.Linear(20, 32)
    fc2 = register_module("fc2", nn::Linear(32, 3));
  }
  Tensor forward(const Tensor& x) override { return fc2(relu(fc1(x))); }

 private:
  nn::Linear fc1{nullptr}, fc2{nullptr};
};
LOCUS_MODULE(MyModel);

void example() {
  const Device device = best_device();
  std::cout << "device: " << device << "\n";
  manual_seed(1);
  auto model = MyModel().to(device);  // model = MyModel().to(device)
  std::cout << model << "\n";         // print(model)
  const Tensor x = randn({512, 20});
  const Tensor y = argmax(x.narrow(1, 0, 3), 1);  // a learnable rule: the largest of the first three
  // Pinned batches make the copies below asynchronous.
  data::DataLoader train_loader(std::make_shared<data::TensorDataset>(x, y),
                                data::DataLoaderOptions().batch_size(64).shuffle(true).pin_memory(device.is_cuda()));
  nn::CrossEntropyLoss loss_fn;                       // loss_fn = nn.CrossEntropyLoss()
  optim::Adam optimizer(model->parameters(), 0.01);  // optim.Adam(model.parameters(), lr=0.01)
  for (int epoch = 0; epoch < 3; ++epoch)
    for (const data::Example<>& batch : train_loader) {
      const Tensor xb = batch.data.to(device, /*non_blocking=*/true);
      const Tensor yb = batch.target.to(device, /*non_blocking=*/true);
      const Tensor logits = model(xb);
      const Tensor loss = loss_fn(logits, yb);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      std::cout << loss.item() << "\n";  // .item() brings the scalar back to the host
    }
}
