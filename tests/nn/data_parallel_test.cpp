// nn::DataParallel on sim:0 + sim:1 (the same code runs over cuda devices): the same training
// as on one device, uneven and tiny batches, placement errors, errors from a replica.

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

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
    nn::cross_entropy(single(x.to(d0)), y.to(d0)).backward();
    const Tensor out = parallel(x);
    EXPECT_EQ(out.device(), d0);
    EXPECT_EQ(out.shape(), (Shape{9, 3}));
    nn::cross_entropy(out, y.to(d0)).backward();
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
  struct Plain : nn::Module {
    Tensor forward(const Tensor& x) override { return x; }
  };
  nn::DataParallel not_cloneable(std::make_shared<Plain>(), std::vector<Device>{d0, d1});
  EXPECT_THROW((void)not_cloneable(randn({4, 6}, d0)), NotImplementedError);
}

TEST(DataParallel, WithoutDevicesRunsTheModuleAsItIs) {
  if (cuda::is_available()) GTEST_SKIP() << "the default device_ids are the CUDA devices here";
  auto model = make_model();
  nn::DataParallel parallel(model);
  const Tensor x = randn({3, 6});
  EXPECT_EQ(values(parallel(x)), values(model(x)));
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
