// Fine-tuning a model exported from PyTorch: scripts/reference/fashion_classifier.py trained a
// small Fashion-MNIST CNN for 300 steps in PyTorch and saved it with
//   torch.export.save(torch.export.export(model.train(), (x,), dynamic_shapes=...), "fashion_classifier.pt2")
// Here Locus loads the program, fine-tunes it on Fashion-MNIST with its own autograd and
// optimizer, and saves the weights under PyTorch's state_dict names, which
//   scripts/reference/fashion_classifier.py check finetuned_fashion_classifier.cpu.safetensors
// loads back into the original Python model (docs/interop.md, "Models exported from PyTorch").
//   m = torch.export.load("fashion_classifier.pt2").module()        # Python, for inference
#include <cstdlib>
#include <iostream>
#include <string>

#include "examples/example_main.h"
#include "locus/locus.h"

using namespace locus;

// Accuracy of `model` on the first `count` test images, in eval mode (running statistics).
double accuracy(nn::ExportedModule& model, const data::TensorDataset& test, int64_t count, Device device) {
  model->eval();
  NoGradGuard no_grad;
  const Tensor x = test.data().narrow(0, 0, count).view({count, 1, 28, 28}).to(device);
  const Tensor predicted = argmax(model->forward(x), 1);
  return eq(predicted, test.targets().narrow(0, 0, count).to(device)).to(kFloat32).mean().item<double>();
}

void example() {
  const Device device = best_device();
  const char* override_path = std::getenv("LOCUS_EXPORTED_MODEL");
  const std::string path = override_path ? override_path : std::string(LOCUS_EXAMPLE_DATA_DIR) + "/fashion_classifier.pt2";
  nn::ExportedModule model = load_exported(path, device);  // torch.export.load(path).module()
  std::cout << model << "\n";
  const auto train = data::load_mnist(data::kFashionMnistDir, /*train=*/true);
  const auto test = data::load_mnist(data::kFashionMnistDir, /*train=*/false);
  const double before = accuracy(model, *test, 1000, device);
  manual_seed(0);
  // The fine-tuning set: 4,096 training images PyTorch's 300 steps mostly did not see.
  const Tensor images = train->data().narrow(0, 40000, 4096).view({-1, 1, 28, 28});
  data::DataLoader loader(std::make_shared<data::TensorDataset>(images, train->targets().narrow(0, 40000, 4096)),
                          data::DataLoaderOptions(64).shuffle(true));
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(0.02).momentum(0.9));
  model->train();  // batch statistics and dropout, as the export recorded
  for (const data::Example<>& batch : loader) {
    const Tensor loss = nn::functional::cross_entropy(model->forward(batch.data.to(device)), batch.target.to(device));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  const double after = accuracy(model, *test, 1000, device);
  std::cout << "test accuracy on 1,000 images: " << 100 * before << "% as exported, " << 100 * after
            << "% after one epoch of fine-tuning in Locus\n";
  const std::string out = "finetuned_fashion_classifier." + std::string(device_type_name(device.type())) + ".safetensors";
  save(model->state_dict(), out);  // PyTorch's names: conv1.weight, bn1.running_mean, fc.bias, ...
  std::cout << "saved " << out << " (" << model->state_dict().size() << " tensors)\n";
}
