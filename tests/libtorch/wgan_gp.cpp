// A LibTorch WGAN-GP: a generator with in-place ReLUs and a critic trained with a gradient
// penalty (torch::autograd::grad with create_graph), a custom autograd Function that scales the
// gradient flowing into the generator, and a hook that counts the critic's input gradients. The
// penalty's gradient for one critic weight is checked against central finite differences in
// float64 before training; the program fails when they disagree or a loss is not finite.
// Usage: wgan_gp <data dir> [batches]
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <iostream>

using namespace torch;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Identity forward; the backward multiplies the gradient by a factor (saved as an IValue).
struct ScaleGradient : torch::autograd::Function<ScaleGradient> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, double factor) {
    ctx->saved_data["factor"] = factor;
    return x.clone();
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    return {grads[0] * ctx->saved_data["factor"].toDouble(), torch::Tensor()};
  }
};

nn::Sequential make_critic() {
  return nn::Sequential(nn::Linear(784, 64), nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)),
                        nn::Linear(64, 1));
}

// The gradient penalty at points between real and fake images.
torch::Tensor penalty(nn::Sequential& critic, const torch::Tensor& real, const torch::Tensor& fake) {
  auto alpha = torch::rand({real.size(0), 1}, real.options());
  auto mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(true);
  auto scores = critic->forward(mixed);
  auto grads = torch::autograd::grad({scores}, {mixed}, {torch::ones_like(scores)}, /*retain_graph=*/true,
                                     /*create_graph=*/true)[0];
  return (grads.norm(2, 1) - 1).pow(2).mean();
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: wgan_gp <data dir> [batches]\n";
    return 2;
  }
  const int64_t batches = argc > 2 ? std::atoll(argv[2]) : 20;
  torch::manual_seed(3);

  // 1. The penalty's gradient against finite differences, in float64.
  {
    auto critic = make_critic();
    critic->to(torch::kFloat64);
    auto real = torch::rand({4, 784}, torch::kFloat64), fake = torch::rand({4, 784}, torch::kFloat64);
    auto weight = critic->named_parameters()["0.weight"];
    torch::manual_seed(11);
    penalty(critic, real, fake).backward();
    const double analytic = weight.grad()[5][7].item<double>();
    const double h = 1e-6;
    auto at = [&](double delta) {
      torch::NoGradGuard no_grad;
      weight[5][7] += delta;
      return weight;
    };
    at(h);
    torch::manual_seed(11);
    const double up = penalty(critic, real, fake).item<double>();
    at(-2 * h);
    torch::manual_seed(11);
    const double down = penalty(critic, real, fake).item<double>();
    at(h);
    const double numeric = (up - down) / (2 * h);
    if (!(std::abs(analytic - numeric) <= 1e-5 * std::max(1.0, std::abs(numeric)))) {
      std::cerr << "penalty gradient " << analytic << " differs from the finite difference " << numeric << "\n";
      return 1;
    }
  }

  // 2. Training.
  auto data = data::datasets::MNIST(argv[1]).map(data::transforms::Stack<>());
  auto loader = data::make_data_loader(std::move(data), data::DataLoaderOptions().batch_size(32));
  nn::Sequential generator(nn::Linear(16, 64), nn::ReLU(nn::ReLUOptions().inplace(true)), nn::Linear(64, 784),
                           nn::Tanh());
  auto critic = make_critic();
  optim::Adam g_opt(generator->parameters(), optim::AdamOptions(1e-4).betas({0.5, 0.9}));
  optim::Adam c_opt(critic->parameters(), optim::AdamOptions(1e-4).betas({0.5, 0.9}));
  int64_t step = 0, hooked = 0;
  double critic_loss = 0, gp_value = 0;
  for (auto& batch : *loader) {
    if (step == batches) break;
    auto real = batch.data.view({batch.data.size(0), -1}) * 2 - 1;
    auto noise = torch::randn({real.size(0), 16});
    // Critic: fake scores up, real scores down, plus the penalty.
    auto fake = generator->forward(noise).detach();
    auto gp = penalty(critic, real, fake);
    auto c_loss = critic->forward(fake).mean() - critic->forward(real).mean() + 10 * gp;
    c_opt.zero_grad();
    c_loss.backward();
    c_opt.step();
    // Generator, through the gradient-scaling Function and a counting hook.
    auto generated = ScaleGradient::apply(generator->forward(noise), 0.5);
    generated.register_hook([&hooked](torch::Tensor g) { hooked += g.size(0); });
    auto g_loss = -critic->forward(generated).mean();
    g_opt.zero_grad();
    g_loss.backward();
    g_opt.step();
    critic_loss = c_loss.item<double>();
    gp_value = gp.item<double>();
    if (!std::isfinite(critic_loss) || !std::isfinite(g_loss.item<double>())) {
      std::cerr << "a loss is not finite at step " << step << "\n";
      return 1;
    }
    ++step;
  }
  if (hooked != step * 32) {
    std::cerr << "the hook saw " << hooked << " rows, expected " << step * 32 << "\n";
    return 1;
  }
  std::cout << "wgan_gp: " << step << " steps, critic loss " << critic_loss << ", penalty " << gp_value
            << "; the penalty's gradient matches finite differences\n";
  return 0;
}
