// nn::DataParallel on sim:0 + sim:1 (the same code runs over cuda devices): the same training
// as on one device, uneven and tiny batches, placement errors, errors from a replica, user
// modules as the docs write them, the braced device lists and the default devices.

#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "tests/nn/docs_style_modules.h"

namespace locus {
namespace {

using testing::DocsNet;
using testing::values;

// Sets an environment variable for the scope's lifetime, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void expect_near(const Tensor& a, const Tensor& b, double tol) {
  const std::vector<double> va = values(a), vb = values(b);
  ASSERT_EQ(va.size(), vb.size());
  for (size_t j = 0; j < va.size(); ++j) EXPECT_NEAR(va[j], vb[j], tol) << "[" << j << "]";
}

nn::Sequential make_model() {
  manual_seed(3);
  return nn::Sequential{nn::Linear(6, 8), nn::Tanh(), nn::Linear(8, 3)};
}

void expect_same_parameters(const nn::Module& a, const nn::Module& b, double tol) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    const std::vector<double> va = values(pa[i].second), vb = values(pb[i].second);
    ASSERT_EQ(va.size(), vb.size());
    for (size_t j = 0; j < va.size(); ++j) EXPECT_NEAR(va[j], vb[j], tol) << pa[i].first << "[" << j << "]";
  }
}

TEST(DataParallel, TrainsLikeOneDevice) {
  const Device d0("sim:0"), d1("sim:1");
  auto single = make_model().to(d0);
  auto wrapped_model = make_model().to(d0);
  nn::DataParallel parallel(wrapped_model, std::vector<Device>{d0, d1});
  EXPECT_EQ(parallel->named_parameters()[0].first, "module.0.weight");  // PyTorch's state_dict names
  optim::Adam opt_parallel(wrapped_model->parameters(), 0.01);
  optim::Adam opt_single_adam(single->parameters(), 0.01);
  manual_seed(11);
  const Tensor x = randn({9, 6});  // 9 rows: chunks of 5 and 4
  const Tensor y = tensor({0, 1, 2, 0, 1, 2, 2, 1, 0});
  for (int step = 0; step < 4; ++step) {
    for (auto* opt : {static_cast<optim::Optimizer*>(&opt_single_adam), static_cast<optim::Optimizer*>(&opt_parallel)})
      opt->zero_grad();
    nn::functional::cross_entropy(single(x.to(d0)), y.to(d0)).backward();
    const Tensor out = parallel(x);
    EXPECT_EQ(out.device(), d0);
    EXPECT_EQ(out.shape(), (Shape{9, 3}));
    nn::functional::cross_entropy(out, y.to(d0)).backward();
    if (step == 0) {  // the gradients themselves, before any step
      const auto gs = single->parameters(), gp = wrapped_model->parameters();
      for (size_t i = 0; i < gs.size(); ++i) {
        const std::vector<double> a = values(gs[i].grad()), b = values(gp[i].grad());
        for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], 1e-6);
      }
    }
    opt_single_adam.step();
    opt_parallel.step();
  }
  expect_same_parameters(*single, *wrapped_model, 1e-5);
}

TEST(DataParallel, SmallBatchesUseFewerDevicesAndEvalNeedsNoGraph) {
  const Device d0("sim:0"), d1("sim:1");
  auto model = make_model().to(d0);
  nn::DataParallel parallel(model, std::vector<Device>{d0, d1}, d1);
  EXPECT_EQ(parallel->output_device(), d1);
  const Tensor one = randn({1, 6});
  EXPECT_EQ(values(parallel(one)), values(model(one.to(d0))));  // one row: one device
  {
    NoGradGuard no_grad;
    const Tensor x = randn({4, 6});
    const Tensor out = parallel(x);
    EXPECT_EQ(out.device(), d1);
    EXPECT_FALSE(out.requires_grad());
    const std::vector<double> a = values(out), b = values(model(x.to(d0)));
    for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], 1e-6);
  }
}

TEST(DataParallel, PlacementAndReplicaErrors) {
  const Device d0("sim:0"), d1("sim:1");
  auto model = make_model();  // still on the cpu
  nn::DataParallel parallel(model, std::vector<Device>{d0, d1});
  try {
    (void)parallel(randn({4, 6}));
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "DataParallel: module must have its parameters and buffers on device sim:0 (device_ids[0]) but found "
                 "'0.weight' on device cpu");
  }
  model->to(d0);
  EXPECT_THROW((void)parallel(randn({4, 5})), ShapeError);  // raised in a replica, rethrown here
  EXPECT_EQ(parallel(randn({4, 6})).shape(), (Shape{4, 3}));  // and usable afterwards
  EXPECT_THROW(nn::DataParallel(model, std::vector<Device>{d0, d0}), ValueError);
}

// A module with a member that cannot be copied is the one kind left that cannot be replicated.
struct HoldsUniqueImpl : nn::Module {
  Tensor forward(const Tensor& x) override { return x; }
  std::unique_ptr<int> state;
};

TEST(DataParallel, ModulesThatCannotBeCopiedSayWhy) {
  const Device d0("sim:0"), d1("sim:1");
  struct Plain : nn::Module {  // no handle, no Cloneable: a std::shared_ptr to its class suffices
    Tensor forward(const Tensor& x) override { return mul(x, 3.0); }
  };
  nn::DataParallel plain(std::make_shared<Plain>(), std::vector<Device>{d0, d1});
  EXPECT_EQ(values(plain(ones({4, 2}, d0))), std::vector<double>(8, 3.0));
  nn::DataParallel uncopyable(std::make_shared<HoldsUniqueImpl>(), std::vector<Device>{d0, d1});
  try {
    (void)uncopyable(randn({4, 6}, d0));
    FAIL();
  } catch (const NotImplementedError& e) {
    EXPECT_STREQ(e.what(),
                 "Module [HoldsUnique] cannot be cloned: its class has no copy constructor (a member that cannot be "
                 "copied, or one declared deleted); give it one, or derive it from nn::Cloneable<HoldsUniqueImpl> and "
                 "build its parts in reset()");
  }
}

TEST(DataParallel, WithoutDevicesAndWithoutAnAcceleratorRunsTheModuleAsItIs) {
  const ScopedEnv cpu("LOCUS_DEVICE", "cpu");
  auto model = make_model();
  nn::DataParallel parallel(model);
  EXPECT_TRUE(parallel->device_ids().empty());
  EXPECT_EQ(parallel->output_device(), Device("cpu"));
  const Tensor x = randn({3, 6});
  EXPECT_EQ(values(parallel(x)), values(model(x)));
  nn::DataParallel indices(model, {0, 1});  // PyTorch ignores device_ids without an accelerator
  EXPECT_TRUE(indices->device_ids().empty());
  EXPECT_EQ(values(indices(x)), values(model(x)));
}

TEST(DataParallel, WithoutDevicesUsesEveryDeviceOfTheAccelerator) {
  const ScopedEnv sim("LOCUS_DEVICE", "sim");
  manual_seed(8);
  DocsNet model;
  model->to(best_device());
  nn::DataParallel parallel(model);
  EXPECT_EQ(parallel->device_ids(), (std::vector<Device>{Device("sim:0"), Device("sim:1")}));
  EXPECT_EQ(parallel->output_device(), Device("sim:0"));
  testing::forward_log.take();
  const Tensor x = randn({6, 6});
  const Tensor out = parallel(x);
  std::set<std::string> ran_on;
  for (const auto& r : testing::forward_log.take()) ran_on.insert(r.input.str());
  EXPECT_EQ(ran_on, (std::set<std::string>{"sim:0", "sim:1"}));
  expect_near(out, model(x.to(Device("sim:0"))), 1e-6);
}

// The modules of docs/api.md's pattern, replicated with nothing added to them: the same outputs
// and gradients as on one device, each replica computing with its own device's tensors, the
// original module untouched.
TEST(DataParallel, UserModulesAsTheDocsWriteThem) {
  const Device d0("sim:0"), d1("sim:1");
  manual_seed(4);
  DocsNet single;
  single->to(d0);
  manual_seed(4);
  DocsNet model;
  model->to(d0);
  const auto before = model->state_dict();
  const nn::Module* fc1_before = model->fc1.get();
  nn::DataParallel parallel(model, {Device("sim:0"), Device("sim:1")});
  manual_seed(12);
  const Tensor x = randn({7, 6});  // chunks of 4 and 3 rows
  const Tensor target = randn({7, 3});

  testing::forward_log.take();
  const Tensor out = parallel(x);
  const auto records = testing::forward_log.take();
  ASSERT_EQ(records.size(), 2u);
  std::set<std::string> inputs;
  for (const auto& r : records) {
    inputs.insert(r.input.str());
    for (const Device& d : r.used) EXPECT_EQ(d, r.input) << "a replica used a tensor of another device";
  }
  EXPECT_EQ(inputs, (std::set<std::string>{"sim:0", "sim:1"}));

  const Tensor expected = single(x.to(d0));
  EXPECT_EQ(out.device(), d0);
  expect_near(out, expected, 1e-6);
  locus::mse_loss(out, target.to(d0)).backward();
  locus::mse_loss(expected, target.to(d0)).backward();
  const auto gs = single->named_parameters(), gp = model->named_parameters();
  ASSERT_EQ(gs.size(), gp.size());
  for (size_t i = 0; i < gs.size(); ++i) {
    ASSERT_TRUE(gp[i].second.grad().defined()) << gp[i].first;
    EXPECT_EQ(gp[i].second.grad().device(), d0) << gp[i].first;
    expect_near(gp[i].second.grad(), gs[i].second.grad(), 1e-5);
  }

  // The original: same tensors, on sim:0, with the values it had; its members are its own.
  EXPECT_EQ(model->device(), d0);
  EXPECT_EQ(model->fc1.get(), fc1_before);
  for (const auto& [name, t] : model->state_dict()) EXPECT_EQ(values(t), values(before.at(name))) << name;

  // A second forward reuses the replicas and follows the module's new values.
  {
    NoGradGuard no_grad;
    model->w.mul_(2.0);
    single->w.mul_(2.0);
  }
  expect_near(parallel(x), single(x.to(d0)), 1e-6);
}

TEST(DataParallel, BracedDeviceListsAsTheTutorialsWriteThem) {
  const ScopedEnv sim("LOCUS_DEVICE", "sim");
  const Device d0("sim:0"), d1("sim:1");
  manual_seed(6);
  DocsNet model;
  model->to(d0);
  const Tensor x = randn({4, 6});
  const Tensor expected = model(x.to(d0));

  nn::DataParallel indices(model, {0, 1});  // device_ids=[0, 1]: the accelerator's devices
  EXPECT_EQ(indices->device_ids(), (std::vector<Device>{d0, d1}));
  EXPECT_EQ(indices->output_device(), d0);
  expect_near(indices(x), expected, 1e-6);

  nn::DataParallel to_one(model, {0, 1}, 1);  // output_device=1
  EXPECT_EQ(to_one->output_device(), d1);
  const Tensor gathered = to_one(x);
  EXPECT_EQ(gathered.device(), d1);
  expect_near(gathered, expected, 1e-6);

  nn::DataParallel named(model, {Device("sim:0"), Device("sim:1")}, Device("sim:1"));
  EXPECT_EQ(named->device_ids(), (std::vector<Device>{d0, d1}));
  expect_near(named(x), expected, 1e-6);

  // Device(1) is cuda:1 wherever it is written (Device(int) means a CUDA index).
  const auto as_in_the_issue = nn::DataParallel(model, {Device("sim:0"), Device("sim:1")}, Device(1));
  EXPECT_EQ(as_in_the_issue->output_device(), Device("cuda:1"));
  const auto int_list_device_output = nn::DataParallel(model, {0, 1}, Device(1));
  EXPECT_EQ(int_list_device_output->device_ids(), (std::vector<Device>{d0, d1}));
  EXPECT_EQ(int_list_device_output->output_device(), Device("cuda:1"));

  try {
    (void)nn::DataParallel(model, {0, -1});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "DataParallel: device_ids must be device indices (0, 1, ...), got -1");
  }
  try {
    (void)nn::DataParallel(model, {0, 1}, -1);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "DataParallel: output_device must be a device index (0, 1, ...), got -1");
  }
}

// A user module in LibTorch's Cloneable form: everything built in reset().
class TwoLayerImpl : public nn::Cloneable<TwoLayerImpl> {
 public:
  TwoLayerImpl() { reset(); }
  void reset() override {
    fc1 = register_module("fc1", nn::Linear(6, 4));
    fc2 = register_module("fc2", nn::Linear(4, 3));
    register_buffer("scale", full({1}, 2.0));
  }
  Tensor forward(const Tensor& x) override { return fc2(relu(fc1(x))); }
  nn::Linear fc1{nullptr}, fc2{nullptr};
};
LOCUS_MODULE(TwoLayer);

TEST(Cloneable, UserModulesAndDataParallel) {
  manual_seed(5);
  TwoLayer net;
  net->to(Device("sim:0"));
  auto copy = std::dynamic_pointer_cast<TwoLayerImpl>(net->clone());
  ASSERT_TRUE(copy);
  EXPECT_NE(copy->fc1.get(), net->fc1.get());  // members point at the copy's own layers
  EXPECT_EQ(values(copy->fc1->weight), values(net->fc1->weight));
  EXPECT_EQ(copy->named_buffers()[0].first, "scale");
  nn::DataParallel parallel(net, std::vector<Device>{Device("sim:0"), Device("sim:1")});
  const Tensor x = randn({6, 6});
  const std::vector<double> a = values(parallel(x)), b = values(net(x.to(Device("sim:0"))));
  for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], 1e-6);
}

TEST(Cloneable, ClonesOwnTheirTensorsAndKeepTheGenerator) {
  auto model = make_model();
  const RngState before = get_rng_state();
  auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(model->clone(Device("sim:1")));
  ASSERT_TRUE(copy);
  EXPECT_EQ(get_rng_state(), before);
  EXPECT_EQ(copy->device(), Device("sim:1"));
  expect_same_parameters(*model, *copy, 0);
  copy->parameters()[0].detach().fill_(0.f);
  EXPECT_NE(values(model->parameters()[0])[0], 0.0);  // not shared
}

}  // namespace
}  // namespace locus
