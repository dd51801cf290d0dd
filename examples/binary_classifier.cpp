// A PyTorch training script ported line by line: a ModuleList of layers initialised with
// nn::init, BCEWithLogitsLoss with a pos_weight, AdamW with two parameter groups (no weight decay
// on biases) and a cosine learning-rate schedule. It learns whether a point lies inside a circle.
//   layers = nn.ModuleList([nn.Linear(2, 32), nn.Linear(32, 32), nn.Linear(32, 1)])
//   for l in layers: nn.init.kaiming_uniform_(l.weight, nonlinearity='relu'); nn.init.zeros_(l.bias)
//   opt = optim.AdamW([{'params': weights, 'weight_decay': 0.01}, {'params': biases, 'weight_decay': 0}], lr=0.01)
//   sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
//   loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

using namespace locus;
namespace F = locus::nn::functional;

class CircleNetImpl : public nn::Module {
 public:
  CircleNetImpl() {
    layers = register_module("layers", nn::ModuleList{nn::Linear(2, 32), nn::Linear(32, 32), nn::Linear(32, 1)});
    for (size_t i = 0; i < layers->size(); ++i) {
      auto& fc = layers->at<nn::LinearImpl>(i);
      nn::init::kaiming_uniform_(fc.weight, 0, nn::init::kFanIn, nn::init::kReLU);
      nn::init::zeros_(fc.bias);
    }
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = x;
    for (size_t i = 0; i + 1 < layers->size(); ++i) h = F::relu((*layers)[i]->forward(h));
    return (*layers)[layers->size() - 1]->forward(h).squeeze(-1);  // logits
  }
  nn::ModuleList layers{nullptr};
};
LOCUS_MODULE(CircleNet);

void example() {
  const Device device = best_device();
  std::cout << "device: " << device << "\n";
  manual_seed(3);
  auto model = CircleNet().to(device);
  const Tensor x = (rand({1024, 2}) * 2 - 1).to(device);
  const Tensor y = lt(x.square().sum(1), 0.5).to(kFloat32);  // inside the circle: 1

  std::vector<Tensor> weights, biases;
  for (const auto& [name, p] : model->named_parameters()) (name.ends_with("bias") ? biases : weights).push_back(p);
  optim::AdamW optimizer({optim::OptimizerParamGroup(weights, optim::AdamOptions(0.01).weight_decay(0.01)),
                          optim::OptimizerParamGroup(biases, optim::AdamOptions(0.01).weight_decay(0))},
                         optim::AdamOptions(0.01));
  const int epochs = 20;
  optim::lr_scheduler::CosineAnnealingLR scheduler(optimizer, epochs);
  nn::BCEWithLogitsLoss loss_fn(nn::BCEWithLogitsLossOptions().pos_weight(tensor({2.0F}).to(device)));

  for (int epoch = 0; epoch < epochs; ++epoch) {
    const Tensor order = randperm(1024).to(device);
    double total = 0;
    for (int64_t b = 0; b < 1024; b += 128) {
      const Tensor idx = order.narrow(0, b, 128);
      const Tensor loss = loss_fn(model(index_select(x, 0, idx)), index_select(y, 0, idx));
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      total += loss.item<double>();
    }
    const double lr = scheduler.get_last_lr()[0];
    scheduler.step();
    if (epoch % 5 == 4 || epoch == epochs - 1) {
      NoGradGuard no_grad;
      const double accuracy = eq(gt(model(x), 0).to(kFloat32), y).to(kFloat32).mean().item<double>();
      std::cout << "epoch " << epoch + 1 << ": lr " << lr << ", loss " << total / 8 << ", accuracy " << accuracy << "\n";
    }
  }
}
