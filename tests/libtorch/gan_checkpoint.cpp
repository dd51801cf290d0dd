// A LibTorch GAN that checkpoints: a DCGAN-style generator (a TORCH_MODULE with transposed
// convolutions and batch norm) and a Sequential discriminator trained on MNIST-format images;
// model and optimizer saved with torch::save, loaded into fresh ones with torch::load, and the
// next training step of the restored pair must equal the original's exactly.
// Usage: gan_checkpoint <data dir> <checkpoint dir> [batches]
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <iostream>

using namespace torch;

const int64_t kNoiseSize = 32;

struct GeneratorImpl : nn::Module {
  explicit GeneratorImpl(int64_t noise_size)
      : conv1(nn::ConvTranspose2dOptions(noise_size, 64, 7).bias(false)),
        norm1(64),
        conv2(nn::ConvTranspose2dOptions(64, 32, 4).stride(2).padding(1).bias(false)),
        norm2(32),
        conv3(nn::ConvTranspose2dOptions(32, 1, 4).stride(2).padding(1).bias(false)) {
    register_module("conv1", conv1);
    register_module("norm1", norm1);
    register_module("conv2", conv2);
    register_module("norm2", norm2);
    register_module("conv3", conv3);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(norm1(conv1(x)));
    x = torch::relu(norm2(conv2(x)));
    return torch::tanh(conv3(x));
  }
  nn::ConvTranspose2d conv1;
  nn::BatchNorm2d norm1;
  nn::ConvTranspose2d conv2;
  nn::BatchNorm2d norm2;
  nn::ConvTranspose2d conv3;
};
TORCH_MODULE(Generator);

nn::Sequential make_discriminator() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 4).stride(2).padding(1).bias(false)),
                        nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 4).stride(2).padding(1).bias(false)),
                        nn::BatchNorm2d(64), nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                        nn::Conv2d(nn::Conv2dOptions(64, 1, 7).bias(false)), nn::Sigmoid());
}

struct Gan {
  Generator generator{kNoiseSize};
  nn::Sequential discriminator = make_discriminator();
  optim::Adam g_optimizer{generator->parameters(), optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.999))};
  optim::Adam d_optimizer{discriminator->parameters(), optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.999))};

  // One step of both players on `real`; the noise comes from the global generator.
  std::pair<float, float> step(const torch::Tensor& real) {
    const int64_t n = real.size(0);
    discriminator->zero_grad();
    torch::Tensor d_real = torch::binary_cross_entropy(discriminator->forward(real).reshape({n}), torch::ones(n));
    d_real.backward();
    torch::Tensor fake = generator->forward(torch::randn({n, kNoiseSize, 1, 1}));
    torch::Tensor d_fake =
        torch::binary_cross_entropy(discriminator->forward(fake.detach()).reshape({n}), torch::zeros(n));
    d_fake.backward();
    d_optimizer.step();
    generator->zero_grad();
    torch::Tensor g_loss = torch::binary_cross_entropy(discriminator->forward(fake).reshape({n}), torch::ones(n));
    g_loss.backward();
    g_optimizer.step();
    return {(d_real + d_fake).item<float>(), g_loss.item<float>()};
  }
};

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: gan_checkpoint <data dir> <checkpoint dir> [batches]\n";
    return 2;
  }
  const std::string root = argv[1], dir = argv[2];
  const int64_t batches = argc > 3 ? std::atoll(argv[3]) : 20;
  torch::manual_seed(1);
  auto dataset = torch::data::datasets::MNIST(root)
                     .map(torch::data::transforms::Normalize<>(0.5, 0.5))
                     .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(dataset), 32);

  Gan gan;
  torch::Tensor last;
  int64_t done = 0;
  for (const torch::data::Example<>& batch : *loader) {
    const auto [d_loss, g_loss] = gan.step(batch.data);
    if (++done % 10 == 0) std::printf("[%3ld] D_loss %.4f | G_loss %.4f\n", static_cast<long>(done), d_loss, g_loss);
    last = batch.data;
    if (done == batches) break;
  }
  torch::save(gan.generator, dir + "/generator.pt");
  torch::save(gan.g_optimizer, dir + "/generator-optimizer.pt");
  torch::save(gan.discriminator, dir + "/discriminator.pt");
  torch::save(gan.d_optimizer, dir + "/discriminator-optimizer.pt");
  torch::save(gan.generator->forward(torch::randn({4, kNoiseSize, 1, 1})), torch::str(dir, "/samples-", done, ".pt"));

  Gan restored;
  torch::load(restored.generator, dir + "/generator.pt");
  torch::load(restored.g_optimizer, dir + "/generator-optimizer.pt");
  torch::load(restored.discriminator, dir + "/discriminator.pt");
  torch::load(restored.d_optimizer, dir + "/discriminator-optimizer.pt");
  torch::Tensor samples;
  torch::load(samples, torch::str(dir, "/samples-", done, ".pt"));
  TORCH_CHECK(samples.sizes() == torch::IntArrayRef({4, 1, 28, 28}), "samples have shape ", samples.sizes());

  // The same step from the same state and the same noise: the same losses and parameters, to
  // float32 rounding. Not bit for bit: on a busy machine the thread budget may run the two steps
  // on different thread counts, and oneDNN's convolution weight gradients are summed in an order
  // that follows the thread count (Note [Thread budget]).
  torch::manual_seed(7);
  const auto original = gan.step(last);
  torch::manual_seed(7);
  const auto again = restored.step(last);
  const auto close = [](double x, double y) { return std::abs(x - y) <= 1e-4 * (1 + std::abs(y)); };
  TORCH_CHECK(close(original.first, again.first) && close(original.second, again.second), "losses after restoring differ: ",
              original.first, " vs ", again.first, ", ", original.second, " vs ", again.second);
  const auto a = gan.generator->named_parameters(), b = restored.generator->named_parameters();
  for (const auto& item : a)
    TORCH_CHECK(torch::allclose(item.value(), b[item.key()], 1e-4, 1e-6), "parameter ", item.key(), " differs after restoring");
  std::printf("restored from %s: the next step matches (D_loss %.4f, G_loss %.4f)\n", dir.c_str(), again.first,
              again.second);
  return 0;
}
