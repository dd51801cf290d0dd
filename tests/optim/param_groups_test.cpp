// Parameter groups: LibTorch's spellings, per-group options read at every step, the fused step
// once per group, membership changes, and a saved optimizer that continues bit for bit.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace locus {
namespace {

using optim::OptimizerParamGroup;

std::vector<Tensor> fresh_params(uint64_t seed, DType dtype = kFloat32) {
  manual_seed(seed);
  return {randn({3, 4}, dtype).requires_grad_(), randn({5}, dtype).requires_grad_(),
          randn({2, 2}, dtype).requires_grad_()};
}

std::vector<Tensor> clones(const std::vector<Tensor>& ps) {
  std::vector<Tensor> out;
  for (const Tensor& p : ps) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

// The gradient of parameter k at step s: fixed, different per step.
void set_grads(const std::vector<Tensor>& ps, int s) {
  for (size_t k = 0; k < ps.size(); ++k) {
    manual_seed(1000 + 10 * static_cast<uint64_t>(s) + k);
    ps[k].set_grad(randn(ps[k].shape(), ps[k].dtype()));
  }
}

using Make = std::function<std::unique_ptr<optim::Optimizer>(std::vector<OptimizerParamGroup>)>;

// Two groups: the first two parameters with the defaults, the last with its own options.
struct Kind {
  std::string name;
  Make make;
  std::function<std::unique_ptr<optim::OptimizerOptions>()> second;
};

std::vector<Kind> kinds() {
  using namespace optim;
  return {
      {"sgd", [](auto g) { return std::make_unique<SGD>(g, SGDOptions(0.1).momentum(0.9)); },
       [] { return SGDOptions(0.05).momentum(0.5).nesterov(true).clone(); }},
      {"adam_amsgrad", [](auto g) { return std::make_unique<Adam>(g, AdamOptions(0.01).amsgrad(true)); },
       [] { return AdamOptions(0.02).weight_decay(0.1).clone(); }},
      {"adamw", [](auto g) { return std::make_unique<AdamW>(g, AdamOptions(0.01)); },
       [] { return AdamOptions(0.03).weight_decay(0.5).amsgrad(true).clone(); }},
      {"rmsprop", [](auto g) { return std::make_unique<RMSprop>(g, RMSpropOptions(0.01).centered(true)); },
       [] { return RMSpropOptions(0.02).momentum(0.9).clone(); }},
      {"adagrad", [](auto g) { return std::make_unique<Adagrad>(g, AdagradOptions(0.1).lr_decay(0.01)); },
       [] { return AdagradOptions(0.05).initial_accumulator_value(0.1).clone(); }},
      {"adamax", [](auto g) { return std::make_unique<Adamax>(g, AdamaxOptions(0.01)); },
       [] { return AdamaxOptions(0.02).betas(0.5, 0.9).clone(); }},
      {"nadam", [](auto g) { return std::make_unique<NAdam>(g, NAdamOptions(0.01)); },
       [] { return NAdamOptions(0.02).momentum_decay(0.01).clone(); }},
      {"radam", [](auto g) { return std::make_unique<RAdam>(g, RAdamOptions(0.01)); },
       [] { return RAdamOptions(0.02).betas(0.8, 0.5).clone(); }},
  };
}

std::vector<OptimizerParamGroup> two_groups(const Kind& k, const std::vector<Tensor>& ps) {
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{ps[0], ps[1]});
  groups.emplace_back(std::vector<Tensor>{ps[2]}, k.second());
  return groups;
}

class GroupedOptimizer : public ::testing::TestWithParam<Kind> {};

TEST_P(GroupedOptimizer, ResumedFromStateDictContinuesBitwise) {
  const Kind& k = GetParam();
  const std::vector<Tensor> whole = fresh_params(7), first = clones(whole);
  auto uninterrupted = k.make(two_groups(k, whole));
  auto before = k.make(two_groups(k, first));
  for (int s = 0; s < 3; ++s) {
    set_grads(whole, s), uninterrupted->step();
    set_grads(first, s), before->step();
  }
  // Change an option between steps: both runs see it, and the saved state carries it.
  uninterrupted->param_groups()[1].options().set_lr(0.007);
  before->param_groups()[1].options().set_lr(0.007);
  const auto saved = before->state_dict();
  // A fresh optimizer built with the defaults only for both groups: load_state_dict restores
  // the second group's own options too.
  const std::vector<Tensor> second = clones(first);
  std::vector<OptimizerParamGroup> plain;
  plain.emplace_back(std::vector<Tensor>{second[0], second[1]});
  plain.emplace_back(std::vector<Tensor>{second[2]});
  auto after = k.make(std::move(plain));
  after->load_state_dict(saved);
  EXPECT_EQ(after->param_groups()[1].options().values(), before->param_groups()[1].options().values());
  for (int s = 3; s < 6; ++s) {
    set_grads(whole, s), uninterrupted->step();
    set_grads(second, s), after->step();
  }
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_TRUE(equal(whole[i], second[i])) << k.name << " parameter " << i;
}

TEST_P(GroupedOptimizer, TwoGroupsStepAsTwoOptimizers) {
  // One optimizer with two groups updates each group exactly as an optimizer of its own would
  // (the fused CPU step runs once per group with that group's options).
  const Kind& k = GetParam();
  const std::vector<Tensor> grouped = fresh_params(11), alone = clones(grouped);
  auto both = k.make(two_groups(k, grouped));
  auto first = k.make({OptimizerParamGroup({alone[0], alone[1]})});
  std::vector<OptimizerParamGroup> own;
  own.emplace_back(std::vector<Tensor>{alone[2]}, k.second());
  auto second = k.make(std::move(own));
  for (int s = 0; s < 4; ++s) {
    set_grads(grouped, s), both->step();
    set_grads(alone, s), first->step(), second->step();
  }
  for (size_t i = 0; i < grouped.size(); ++i) EXPECT_TRUE(equal(grouped[i], alone[i])) << k.name << " parameter " << i;
}

INSTANTIATE_TEST_SUITE_P(Optimizers, GroupedOptimizer, ::testing::ValuesIn(kinds()),
                         [](const auto& info) { return info.param.name; });

TEST(ParamGroups, LibTorchSpellings) {
  const std::vector<Tensor> ps = fresh_params(3);
  optim::Adam adam({ps[0]}, optim::AdamOptions(1e-3));
  ASSERT_EQ(adam.param_groups().size(), 1u);
  auto& options = static_cast<optim::AdamOptions&>(adam.param_groups()[0].options());
  EXPECT_EQ(options.beta1(), 0.9);
  adam.param_groups()[0].options().set_lr(0.5);
  EXPECT_EQ(options.lr(), 0.5);
  EXPECT_EQ(adam.param_groups()[0].options().get_lr(), 0.5);
  adam.add_param_group(OptimizerParamGroup({ps[1]}, optim::AdamOptions(0.25).betas(0.5, 0.6)));
  adam.add_param_group(OptimizerParamGroup({ps[2]}));  // takes the defaults
  ASSERT_EQ(adam.param_groups().size(), 3u);
  EXPECT_EQ(adam.param_groups()[1].options().get_lr(), 0.25);
  EXPECT_EQ(adam.param_groups()[2].options().get_lr(), 1e-3);
  EXPECT_EQ(adam.parameters().size(), 3u);
  EXPECT_THROW(adam.add_param_group(OptimizerParamGroup({ps[0]})), ValueError);
  EXPECT_THROW(optim::SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup({ps[0]}), OptimizerParamGroup({ps[0]})}),
               ValueError);
  EXPECT_THROW(adam.param_groups()[0].options().set_values({{"momentum", 0.9}}), ValueError);
}

TEST(ParamGroups, ChangedOptionsTakeEffectAtTheNextStep) {
  Tensor p = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  optim::SGD sgd({p}, optim::SGDOptions(0.1));
  p.set_grad(tensor({1.0, 1.0}, kFloat64));
  sgd.step();
  static_cast<optim::SGDOptions&>(sgd.param_groups()[0].options()).lr(0.5).weight_decay(1.0);
  sgd.step();  // d = g + p = (1.9, 2.9); p -= 0.5 d
  EXPECT_DOUBLE_EQ(p[0].item<double>(), 0.9 - 0.5 * 1.9);
  EXPECT_DOUBLE_EQ(p[1].item<double>(), 1.9 - 0.5 * 2.9);
}

TEST(ParamGroups, ReplacedParametersKeepOnlyTheirOwnState) {
  const std::vector<Tensor> ps = fresh_params(5);
  optim::Adam adam({ps[0], ps[1]}, optim::AdamOptions(0.01));
  set_grads(ps, 0);
  adam.step();
  // LibTorch lets params() be changed in place: the state follows its parameter.
  adam.param_groups()[0].params() = {ps[1], ps[2]};
  const auto state = adam.state_dict();
  EXPECT_TRUE(state.count("0.exp_avg"));   // ps[1]'s, now first
  EXPECT_FALSE(state.count("1.exp_avg"));  // ps[2] has not stepped
  EXPECT_EQ(state.at("0.step").item<int64_t>(), 1);
  set_grads(ps, 1);
  adam.step();
  EXPECT_EQ(adam.state_dict().at("1.step").item<int64_t>(), 1);
}

TEST(ParamGroups, LoadStateDictChecksTheGroups) {
  const std::vector<Tensor> ps = fresh_params(9);
  optim::SGD two(std::vector<OptimizerParamGroup>{OptimizerParamGroup({ps[0]}), OptimizerParamGroup({ps[1], ps[2]})},
                 optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD one(clones(ps), optim::SGDOptions(0.1).momentum(0.9));
  EXPECT_THROW(one.load_state_dict(two.state_dict()), ValueError);
  optim::SGD other(std::vector<OptimizerParamGroup>{OptimizerParamGroup({ps[0], ps[1]}), OptimizerParamGroup({ps[2]})},
                   optim::SGDOptions(0.1));
  EXPECT_THROW(other.load_state_dict(two.state_dict()), ValueError);
  // A dictionary saved before groups existed ("<i>.<name>" and "step" only) still loads.
  set_grads(ps, 0);
  optim::Adam adam({ps[0]}, optim::AdamOptions(0.01));
  adam.step();
  std::map<std::string, Tensor> old;
  for (const auto& [key, t] : adam.state_dict())
    if (key == "step" || key == "0.exp_avg" || key == "0.exp_avg_sq") old[key] = t;
  optim::Adam loaded({ps[0].detach().clone().requires_grad_()}, optim::AdamOptions(0.01));
  loaded.load_state_dict(old);
  EXPECT_EQ(loaded.state_dict().at("0.step").item<int64_t>(), 1);
}

// PyTorch's wording, numbers as Python's repr writes them.
TEST(ParamGroups, ArgumentErrorsReadAsPyTorchs) {
  const std::vector<Tensor> ps = fresh_params(13);
  const auto message = [](const std::function<void()>& make) -> std::string {
    try {
      make();
    } catch (const ValueError& e) {
      return e.what();
    }
    return "no ValueError";
  };
  EXPECT_EQ(message([&] { optim::SGD(ps, optim::SGDOptions(-1e-5)); }), "Invalid learning rate: -1e-05");
  EXPECT_EQ(message([&] { optim::Adam(ps, optim::AdamOptions().betas(1.0, 0.999)); }),
            "Invalid beta parameter at index 0: 1.0");
  EXPECT_EQ(message([&] { optim::RMSprop(ps, optim::RMSpropOptions().eps(-0.0001)); }), "Invalid epsilon value: -0.0001");
  EXPECT_EQ(message([&] { optim::Adagrad(ps, optim::AdagradOptions().initial_accumulator_value(-1e16)); }),
            "Invalid initial_accumulator_value value: -1e+16");
  EXPECT_EQ(message([&] { optim::NAdam(ps, optim::NAdamOptions().momentum_decay(-2.5e-8)); }),
            "Invalid momentum_decay value: -2.5e-08");
  EXPECT_EQ(message([&] { optim::RAdam(ps, optim::RAdamOptions().weight_decay(-123.25)); }),
            "Invalid weight_decay value: -123.25");
}

TEST(ParamGroups, NewOptimizersKeepMasterWeights) {
  Tensor p = tensor({1.0f, -2.0f, 3.0f}).to(kBFloat16).requires_grad_();
  optim::RMSprop rms({p}, optim::RMSpropOptions(1e-4).master_weights(true));
  for (int s = 0; s < 3; ++s) {
    p.set_grad(tensor({1.0f, 1.0f, -1.0f}).to(kBFloat16));
    rms.step();
  }
  const auto state = rms.state_dict();
  ASSERT_TRUE(state.count("0.master_weight"));
  EXPECT_EQ(state.at("0.master_weight").dtype(), kFloat32);
  EXPECT_EQ(state.at("0.square_avg").dtype(), kFloat32);
  EXPECT_TRUE(equal(p, state.at("0.master_weight").to(kBFloat16)));
  // The small updates are kept in the master copy, not rounded away.
  EXPECT_FALSE(equal(state.at("0.master_weight"), tensor({1.0f, -2.0f, 3.0f})));
}

}  // namespace
}  // namespace locus
