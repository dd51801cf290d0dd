// The tutorials' loop with a convolutional network: the model on the device once, each batch
// moved with non_blocking, train() for the updates and eval() with no_grad for the accuracy.
//   class Net(nn.Module):
//       def __init__(self):
//           self.conv1 = nn.Conv2d(1, 8, 3, padding=1); self.bn1 = nn.BatchNorm2d(8)
//           self.conv2 = nn.Conv2d(8, 16, 3, padding=1); self.bn2 = nn.BatchNorm2d(16)
//           self.fc = nn.Linear(16 * 4 * 4, 4); self.drop = nn.Dropout(0.2)
//       def forward(self, x):
//           x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
//           x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
//           return self.fc(self.drop(torch.flatten(x, 1)))
// The data: 16x16 images of noise with one bright 4x4 square; the label is the quadrant it is in.
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

using namespace locus;
namespace F = nn::functional;

class NetImpl : public nn::Module {
 public:
  NetImpl() {
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)));
    bn1 = register_module("bn1", nn::BatchNorm2d(8));
    conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1)));
    bn2 = register_module("bn2", nn::BatchNorm2d(16));
    fc = register_module("fc", nn::Linear(16 * 4 * 4, 4));
    drop = register_module("drop", nn::Dropout(0.2));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = F::max_pool2d(relu(bn1(conv1(x))), F::MaxPool2dFuncOptions(2));
    h = F::max_pool2d(relu(bn2(conv2(h))), F::MaxPool2dFuncOptions(2));
    return fc(drop(h.flatten(1)));
  }

 private:
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  nn::Linear fc{nullptr};
  nn::Dropout drop{nullptr};
};
LOCUS_MODULE(Net);

// `count` images [count, 1, 16, 16] and their quadrant labels.
data::Example<> squares(int64_t count) {
  const Tensor y = randint(0, 4, {count});
  Tensor x = mul(randn({count, 1, 16, 16}), 0.3);
  const std::vector<int64_t> labels = y.to_vector<int64_t>();
  const Tensor r = randint(0, 5, {count, 2});  // the square's offset inside its quadrant
  const std::vector<int64_t> offsets = r.to_vector<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t top = (labels[static_cast<size_t>(i)] / 2) * 8 + offsets[static_cast<size_t>(2 * i)];
    const int64_t left = (labels[static_cast<size_t>(i)] % 2) * 8 + offsets[static_cast<size_t>(2 * i + 1)];
    x.select(0, i).narrow(1, top, 4).narrow(2, left, 4).add_(2.0);
  }
  return {x, y};
}

void example() {
  const Device device = best_device();
  manual_seed(0);
  auto model = Net();
  model->to(device);  // model = Net().to(device)
  std::cout << model << "\n";
  const data::Example<> train = squares(1024), test = squares(256);
  data::DataLoader loader(std::make_shared<data::TensorDataset>(train.data, train.target),
                          data::DataLoaderOptions(64).shuffle(true).pin_memory(device.is_cuda()));
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(1e-2));
  for (int epoch = 1; epoch <= 3; ++epoch) {
    model->train();  // batch statistics, dropout on
    Tensor loss;
    for (const data::Example<>& batch : loader) {
      const Tensor xb = batch.data.to(device, /*non_blocking=*/true), yb = batch.target.to(device, /*non_blocking=*/true);
      loss = nn::functional::cross_entropy(model(xb), yb);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
    }
    model->eval();  // running statistics, dropout off
    NoGradGuard no_grad;
    const Tensor predicted = argmax(model(test.data.to(device)), 1);
    const double accuracy = eq(predicted, test.target.to(device)).to(kFloat32).mean().item<float>();
    std::cout << "epoch " << epoch << ": loss " << loss.item<float>() << ", test accuracy " << 100 * accuracy << "%\n";
  }
}
