// The shared bases of the optimizers (OptimizerFor, CommonOptions, AdamFamilyOptions) and of
// the LR schedulers (LRScheduler::save): LibTorch's spellings still compile, a chain of setters
// keeps its optimizer's options type, and every option and scheduler field is saved under its
// PyTorch name with its PyTorch default.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/test_util.h"

namespace locus {
namespace {

// A setter inherited from a shared options base returns the optimizer's own options.
static_assert(std::is_same_v<decltype(optim::AdamaxOptions().betas(0.5, 0.9)), optim::AdamaxOptions&>);
static_assert(std::is_same_v<decltype(optim::RAdamOptions().lr(0.1)), optim::RAdamOptions&>);
static_assert(std::is_same_v<decltype(optim::NAdamOptions().eps(1e-6)), optim::NAdamOptions&>);
static_assert(std::is_same_v<decltype(optim::SGDOptions().weight_decay(0.1)), optim::SGDOptions&>);
static_assert(std::is_same_v<decltype(optim::AdamOptions().master_weights(true)), optim::AdamOptions&>);
static_assert(std::is_base_of_v<optim::Adam, optim::AdamW>);

std::vector<Tensor> params() { return {randn({3}).requires_grad_()}; }

TEST(OptimizerBases, OptionsAreSavedByPyTorchsNamesWithPyTorchsDefaults) {
  using Values = std::map<std::string, double>;
  const std::map<std::string, Values> expected = {
      {"sgd", {{"lr", 0.01}, {"momentum", 0}, {"dampening", 0}, {"weight_decay", 0}, {"nesterov", 0},
               {"master_weights", 0}}},
      {"adam", {{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0}, {"amsgrad", 0},
                {"master_weights", 0}}},
      {"adagrad", {{"lr", 0.01}, {"lr_decay", 0}, {"weight_decay", 0}, {"initial_accumulator_value", 0},
                   {"eps", 1e-10}, {"master_weights", 0}}},
      {"rmsprop", {{"lr", 0.01}, {"alpha", 0.99}, {"eps", 1e-8}, {"weight_decay", 0}, {"momentum", 0},
                   {"centered", 0}, {"master_weights", 0}}},
      {"adamax", {{"lr", 2e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0},
                  {"master_weights", 0}}},
      {"nadam", {{"lr", 2e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0},
                 {"momentum_decay", 4e-3}, {"master_weights", 0}}},
      {"radam", {{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0},
                 {"master_weights", 0}}},
  };
  EXPECT_EQ(optim::SGDOptions().values(), expected.at("sgd"));
  EXPECT_EQ(optim::AdamOptions().values(), expected.at("adam"));
  EXPECT_EQ(optim::AdagradOptions().values(), expected.at("adagrad"));
  EXPECT_EQ(optim::RMSpropOptions().values(), expected.at("rmsprop"));
  EXPECT_EQ(optim::AdamaxOptions().values(), expected.at("adamax"));
  EXPECT_EQ(optim::NAdamOptions().values(), expected.at("nadam"));
  EXPECT_EQ(optim::RAdamOptions().values(), expected.at("radam"));
  Values adamw = expected.at("adam");
  adamw["weight_decay"] = 0.01;
  EXPECT_EQ(optim::AdamW(params()).options().values(), adamw);
}

TEST(OptimizerBases, SharedSettersSetTheirOption) {
  optim::NAdamOptions o = optim::NAdamOptions(0.5).betas(0.1, 0.2).eps(0.3).weight_decay(0.4).momentum_decay(0.6);
  EXPECT_EQ(o.lr(), 0.5);
  EXPECT_EQ(o.beta1(), 0.1);
  EXPECT_EQ(o.beta2(), 0.2);
  EXPECT_EQ(o.eps(), 0.3);
  EXPECT_EQ(o.weight_decay(), 0.4);
  EXPECT_EQ(o.momentum_decay(), 0.6);
  o.set_values({{"beta2", 0.25}, {"master_weights", 1}});
  EXPECT_EQ(o.beta2(), 0.25);
  EXPECT_TRUE(o.master_weights());
  EXPECT_THROW(o.set_values({{"amsgrad", 1}}), ValueError);
}

TEST(OptimizerBases, EveryOptimizerHasLibTorchsThreeConstructors) {
  const std::vector<Tensor> ps = params();
  EXPECT_EQ(optim::Adamax(ps).options().lr(), 2e-3);
  EXPECT_EQ(optim::Adamax(ps, 0.5).options().lr(), 0.5);
  EXPECT_EQ(optim::Adamax(ps, optim::AdamaxOptions(0.25)).options().lr(), 0.25);
  optim::RMSprop grouped({optim::OptimizerParamGroup(ps)}, optim::RMSpropOptions(0.125).centered(true));
  EXPECT_TRUE(grouped.options().centered());
  EXPECT_EQ(grouped.param_groups()[0].options().get_lr(), 0.125);
  EXPECT_EQ(optim::AdamW(ps, 0.5).options().weight_decay(), 0.01);
  // The checks of each optimizer run from the shared constructors, with PyTorch's messages.
  EXPECT_THROW(optim::Adagrad(ps, optim::AdagradOptions().lr_decay(-1)), ValueError);
  EXPECT_THROW(optim::NAdam(ps, optim::NAdamOptions().momentum_decay(-1)), ValueError);
  EXPECT_THROW(optim::RAdam(ps, optim::RAdamOptions().betas(0.9, 1.0)), ValueError);
  EXPECT_THROW(optim::SGD(ps, optim::SGDOptions(0.1).nesterov(true)), ValueError);
}

std::set<std::string> keys(const std::map<std::string, Tensor>& state) {
  std::set<std::string> out;
  for (const auto& [name, t] : state) out.insert(name);
  return out;
}

TEST(OptimizerBases, SchedulersSaveTheirFieldsByPyTorchsNames) {
  const std::set<std::string> base = {"last_epoch", "_step_count", "base_lrs", "_last_lr"};
  auto with = [&](std::set<std::string> own) {
    own.insert(base.begin(), base.end());
    return own;
  };
  optim::SGD opt(params(), optim::SGDOptions(0.1).momentum(0.9));
  EXPECT_EQ(keys(optim::StepLR(opt, 3, 0.5).state_dict()), with({"step_size", "gamma"}));
  EXPECT_EQ(keys(optim::MultiStepLR(opt, {4, 2, 2}).state_dict()), with({"milestones", "gamma"}));
  EXPECT_EQ(keys(optim::ExponentialLR(opt, 0.5).state_dict()), with({"gamma"}));
  EXPECT_EQ(keys(optim::CosineAnnealingLR(opt, 10).state_dict()), with({"T_max", "eta_min"}));
  EXPECT_EQ(keys(optim::CosineAnnealingWarmRestarts(opt, 10, 2).state_dict()),
            with({"T_0", "T_i", "T_mult", "eta_min", "T_cur"}));
  EXPECT_EQ(keys(optim::LinearLR(opt).state_dict()), with({"start_factor", "end_factor", "total_iters"}));
  EXPECT_EQ(keys(optim::ConstantLR(opt).state_dict()), with({"factor", "total_iters"}));
  EXPECT_EQ(keys(optim::LambdaLR(opt, [](int64_t) { return 1.0; }).state_dict()), base);
  EXPECT_EQ(keys(optim::OneCycleLR(opt, optim::OneCycleLROptions(0.1, 10)).state_dict()), with({"total_steps"}));
}

TEST(OptimizerBases, SchedulerFieldsRoundTrip) {
  optim::SGD opt(params(), 0.1);
  optim::MultiStepLR saved(opt, {4, 2, 2}, 0.5);
  auto state = saved.state_dict();
  EXPECT_EQ(testing::values(state.at("milestones")), (std::vector<double>{2, 2, 4}));
  state["gamma"] = tensor(std::vector<double>{0.25}, TensorOptions().dtype(kFloat64));
  state["milestones"] = tensor(std::vector<double>{1, 3}, TensorOptions().dtype(kFloat64));
  optim::MultiStepLR loaded(opt, {7});
  loaded.load_state_dict(state);
  EXPECT_EQ(testing::values(loaded.state_dict().at("gamma")), std::vector<double>{0.25});
  EXPECT_EQ(testing::values(loaded.state_dict().at("milestones")), (std::vector<double>{1, 3}));
  state["nonsense"] = state.at("gamma");
  EXPECT_THROW(loaded.load_state_dict(state), ValueError);
}

}  // namespace
}  // namespace locus
