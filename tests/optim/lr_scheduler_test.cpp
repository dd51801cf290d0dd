// LR schedulers: a schedule saved and loaded (with its optimizer) continues exactly; the
// exact sequences against PyTorch are the golden family lr_scheduler.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace locus {
namespace {

namespace sched = optim::lr_scheduler;
using optim::OptimizerParamGroup;

std::unique_ptr<optim::SGD> two_group_sgd(double lr0, double lr1) {
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{zeros({2}).requires_grad_()}, optim::SGDOptions(lr0).momentum(0.9));
  groups.emplace_back(std::vector<Tensor>{zeros({3}).requires_grad_()}, optim::SGDOptions(lr1).momentum(0.9));
  return std::make_unique<optim::SGD>(std::move(groups), optim::SGDOptions(lr0).momentum(0.9));
}

using MakeScheduler = std::function<std::shared_ptr<sched::LRScheduler>(optim::Optimizer&)>;

struct SchedulerCase {
  std::string name;
  MakeScheduler make;
};

std::vector<SchedulerCase> cases() {
  return {
      {"step", [](auto& o) { return std::make_shared<sched::StepLR>(o, 4, 0.5); }},
      {"multistep",
       [](auto& o) {
         return std::make_shared<sched::MultiStepLR>(o, std::vector<int64_t>{5, 12, 12}, 0.3);
       }},
      {"exponential", [](auto& o) { return std::make_shared<sched::ExponentialLR>(o, 0.9); }},
      {"cosine", [](auto& o) { return std::make_shared<sched::CosineAnnealingLR>(o, 7, 0.001); }},
      {"warm_restarts", [](auto& o) { return std::make_shared<sched::CosineAnnealingWarmRestarts>(o, 3, 2, 0.001); }},
      {"linear", [](auto& o) { return std::make_shared<sched::LinearLR>(o, 0.2, 0.9, 15); }},
      {"constant", [](auto& o) { return std::make_shared<sched::ConstantLR>(o, 0.5, 12); }},
      {"lambda", [](auto& o) { return std::make_shared<sched::LambdaLR>(o, [](int64_t e) { return 1.0 / (1 + e); }); }},
      {"one_cycle",
       [](auto& o) {
         return std::make_shared<sched::OneCycleLR>(o, sched::OneCycleLROptions(0.2, 40).three_phase(true));
       }},
      {"sequential",
       [](auto& o) {
         auto warm = std::make_shared<sched::LinearLR>(o, 0.1, 1.0, 5);
         auto decay = std::make_shared<sched::ExponentialLR>(o, 0.8);
         return std::make_shared<sched::SequentialLR>(o, std::vector<std::shared_ptr<sched::LRScheduler>>{warm, decay},
                                                      std::vector<int64_t>{5});
       }},
  };
}

class Resumed : public ::testing::TestWithParam<SchedulerCase> {};

TEST_P(Resumed, ContinuesExactlyAfterStateDictAndLoad) {
  const SchedulerCase& c = GetParam();
  auto whole_opt = two_group_sgd(0.1, 0.03);
  auto whole = c.make(*whole_opt);
  auto first_opt = two_group_sgd(0.1, 0.03);
  auto first = c.make(*first_opt);
  for (int t = 0; t < 10; ++t) whole->step(), first->step();
  const auto opt_state = first_opt->state_dict();
  const auto sched_state = first->state_dict();
  // A fresh optimizer with other rates: loading restores the rates, the schedule's values in the
  // groups (initial_lr, OneCycleLR's bounds) and the momentum OneCycleLR cycles.
  auto second_opt = two_group_sgd(0.7, 0.7);
  auto second = c.make(*second_opt);
  second_opt->load_state_dict(opt_state);
  second->load_state_dict(sched_state);
  EXPECT_EQ(second->get_last_lr(), first->get_last_lr());
  for (int t = 0; t < 25; ++t) {
    whole->step(), second->step();
    ASSERT_EQ(second->get_last_lr(), whole->get_last_lr()) << c.name << " step " << t;
    for (size_t g = 0; g < 2; ++g)
      ASSERT_EQ(second_opt->param_groups()[g].options().values(), whole_opt->param_groups()[g].options().values());
  }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Resumed, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(LRScheduler, SetsEveryGroupsRateAndIsReachableFromOptim) {
  auto opt = two_group_sgd(0.1, 0.01);
  optim::StepLR step(*opt, 2, 0.5);  // the short spelling
  EXPECT_EQ(step.get_last_lr(), (std::vector<double>{0.1, 0.01}));
  step.step(), step.step();
  EXPECT_EQ(step.get_last_lr(), (std::vector<double>{0.05, 0.005}));
  EXPECT_EQ(opt->param_groups()[1].options().get_lr(), 0.005);
  EXPECT_EQ(step.last_epoch(), 2);
}

TEST(LRScheduler, ResumingWithoutInitialLrIsAnError) {
  auto opt = two_group_sgd(0.1, 0.01);
  EXPECT_THROW((sched::ExponentialLR{*opt, 0.9, 4}), ValueError);
  sched::ExponentialLR started(*opt, 0.9);
  EXPECT_NO_THROW((sched::ExponentialLR{*opt, 0.9, 4}));
}

TEST(LRScheduler, OneCycleCyclesAdamsBeta1) {
  Tensor p = zeros({2}).requires_grad_();
  optim::Adam adam({p}, optim::AdamOptions(1e-3));
  sched::OneCycleLR one(adam, sched::OneCycleLROptions(0.01, 10).base_momentum(0.8).max_momentum(0.9));
  auto beta1 = [&] { return static_cast<optim::AdamOptions&>(adam.param_groups()[0].options()).beta1(); };
  EXPECT_EQ(beta1(), 0.9);
  for (int t = 0; t < 3; ++t) one.step();
  EXPECT_LT(beta1(), 0.9);
  optim::Adagrad adagrad({p});
  EXPECT_THROW((sched::OneCycleLR{adagrad, sched::OneCycleLROptions(0.01, 10)}), ValueError);
  EXPECT_NO_THROW((sched::OneCycleLR{adagrad, sched::OneCycleLROptions(0.01, 10).cycle_momentum(false)}));
}

// The snippet of docs/training.md ("Parameter groups and learning-rate schedulers"), as written
// there: two groups, a changed rate, five epochs of linear warm-up and then cosine annealing.
TEST(LRScheduler, TrainingDocSnippet) {
  // A model with a body and a head, each with parameters() as a module handle has.
  struct Part {
    std::vector<Tensor> params;
    std::vector<Tensor> parameters() const { return params; }
  };
  struct Model {
    std::shared_ptr<Part> body, head;
  };
  const auto model = std::make_shared<Model>(Model{std::make_shared<Part>(Part{{zeros({3}).requires_grad_()}}),
                                                   std::make_shared<Part>(Part{{zeros({2}).requires_grad_()}})});
  int trained = 0;
  auto train = [&](optim::Optimizer& opt) { trained += static_cast<int>(opt.param_groups().size()); };
  // ---- as in the doc
  namespace sched = optim::lr_scheduler;
  optim::SGD opt({optim::OptimizerParamGroup(model->body->parameters()),
                  optim::OptimizerParamGroup(model->head->parameters(), optim::SGDOptions(0.01).momentum(0.9))},
                 optim::SGDOptions(0.1).momentum(0.9));
  opt.param_groups()[0].options().set_lr(0.05);
  sched::SequentialLR scheduler(opt, {std::make_shared<sched::LinearLR>(opt, 0.1, 1.0, 5),
                                      std::make_shared<sched::CosineAnnealingLR>(opt, 95)}, {5});
  for (int epoch = 0; epoch < 100; ++epoch) {
    train(opt);
    scheduler.step();
  }
  // ----
  EXPECT_EQ(trained, 200);
  // The warm-up started from the rate set before the schedulers (initial_lr), and 95 epochs of
  // cosine annealing end at eta_min.
  EXPECT_EQ(opt.param_groups()[0].scheduler_values().at("initial_lr"), 0.05);
  EXPECT_NEAR(scheduler.get_last_lr()[0], 0.0, 1e-12);
  EXPECT_NEAR(scheduler.get_last_lr()[1], 0.0, 1e-12);
}

TEST(ReduceLROnPlateau, ReducesAfterPatienceAndResumes) {
  auto opt = two_group_sgd(0.1, 0.01);
  sched::ReduceLROnPlateau plateau(*opt,
                                   sched::ReduceLROnPlateauOptions().patience(1).factor(0.5).min_lr({0.0, 0.004}));
  plateau.step(1.0);
  plateau.step(1.0);  // one bad epoch: within patience
  EXPECT_EQ(plateau.get_last_lr(), (std::vector<double>{0.1, 0.01}));
  plateau.step(1.0);  // two: reduce
  EXPECT_EQ(plateau.get_last_lr(), (std::vector<double>{0.05, 0.005}));
  const auto saved = plateau.state_dict();
  auto other = two_group_sgd(0.05, 0.005);
  sched::ReduceLROnPlateau resumed(*other,
                                   sched::ReduceLROnPlateauOptions().patience(1).factor(0.5).min_lr({0.0, 0.004}));
  resumed.load_state_dict(saved);
  for (double m : {1.0, 1.0, 0.5, 0.5, 0.5}) plateau.step(m), resumed.step(tensor(m));  // a loss tensor too
  EXPECT_EQ(resumed.get_last_lr(), plateau.get_last_lr());
  EXPECT_EQ(plateau.get_last_lr()[1], 0.004);  // floored at min_lr
}

}  // namespace
}  // namespace locus
