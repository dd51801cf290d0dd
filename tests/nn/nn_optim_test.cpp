// nn and optim: modules moved in place with their optimizer, state that follows, losses, and
// each optimizer's steps against a float64 reference computed here by hand.

#include <cmath>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::OnEachDevice;
using testing::values;

class NnOnEachDevice : public OnEachDevice {};

TEST_P(NnOnEachDevice, LinearForwardMatchesTheFormulaAndBackpropagates) {
  manual_seed(1);
  nn::Linear lin(3, 2);
  lin->to(dev());
  EXPECT_EQ(lin->device(), dev());
  const Tensor x = tensor(std::vector<double>{1, 2, 3, -1, 0, 4}, Shape{2, 3}).to(kFloat32).to(dev());
  const Tensor y = lin(x);
  const std::vector<double> w = values(lin->weight), b = values(lin->bias), xv = values(x);
  std::vector<double> ref;
  for (int r = 0; r < 2; ++r)
    for (int o = 0; o < 2; ++o) ref.push_back(b[o] + w[o * 3] * xv[r * 3] + w[o * 3 + 1] * xv[r * 3 + 1] + w[o * 3 + 2] * xv[r * 3 + 2]);
  expect_close(y, ref, 1e-5, 1e-5);
  y.sum().backward();
  expect_close(lin->bias.grad(), {2, 2});
  expect_close(lin->weight.grad(), {0, 2, 7, 0, 2, 7});
  EXPECT_EQ(lin->weight.grad().device(), dev());
}

TEST_P(NnOnEachDevice, LossesAgainstFloat64) {
  const Tensor logits = tensor(std::vector<double>{2, 1, 0.1, 0.5, 2.5, -1}, Shape{2, 3}).to(dev());
  const Tensor target = tensor({0L, 1L}).to(dev());
  double ref = 0;
  const double rows[2][3] = {{2, 1, 0.1}, {0.5, 2.5, -1}};
  const int t[2] = {0, 1};
  for (int r = 0; r < 2; ++r) {
    double z = 0;
    for (double v : rows[r]) z += std::exp(v);
    ref += -(rows[r][t[r]] - std::log(z));
  }
  EXPECT_NEAR(nn::functional::cross_entropy(logits, target).item<double>(), ref / 2, 1e-12);
  EXPECT_NEAR(locus::mse_loss(tensor({1.0, 2.0}).to(dev()), tensor({0.0, 4.0}).to(dev())).item<double>(), 2.5, 1e-12);
  // On cuda the check runs on the device and raises at the next synchronization: item().
  EXPECT_THROW(nn::functional::cross_entropy(logits, tensor({0L, 3L}).to(dev())).item<double>(), IndexError);
  EXPECT_THROW(locus::mse_loss(logits, target), ShapeError);
}

// Reductions, ignore_index, class probabilities, unbatched and N-d inputs, against values read
// off torch.nn.functional (1.13) for the same float64 inputs.
TEST_P(NnOnEachDevice, LossOptionsFollowPyTorch) {
  const Tensor x = tensor(std::vector<double>{1, 2, 3, 1, 0, 0, 0.5, -1, 2}, Shape{3, 3}).to(dev());
  const Tensor t = tensor({2L, -100L, 0L}).to(dev());
  EXPECT_NEAR(nn::functional::cross_entropy(x, t).item<double>(), 1.0744586305507688, 1e-12);
  EXPECT_NEAR(nn::functional::cross_entropy(x, t, nn::ClassLossOptions(nn::Reduction::Sum)).item<double>(), 2.1489172611015377, 1e-12);
  expect_close(nn::functional::cross_entropy(x, t, nn::ClassLossOptions(nn::Reduction::None)), {0.4076059644443804, 0.0, 1.7413112966571571}, 1e-12, 1e-12);
  EXPECT_NEAR(nn::functional::nll_loss(log_softmax(x, 1), t, nn::ClassLossOptions(nn::Reduction::Sum)).item<double>(), 2.1489172611015377, 1e-12);
  EXPECT_THROW(nn::functional::cross_entropy(x, t, nn::ClassLossOptions(nn::Reduction::Mean, 0)).item<double>(), IndexError);  // -100 is a class then
  EXPECT_TRUE(std::isnan(nn::functional::cross_entropy(x, tensor({-100L, -100L, -100L}).to(dev())).item<double>()));
  const Tensor p = tensor(std::vector<double>{0.2, 0.3, 0.5, 1, 0, 0, 0, 0.5, 0.5}, Shape{3, 3}).to(dev());
  EXPECT_NEAR(nn::functional::cross_entropy(x, p).item<double>(), 1.133453991677863, 1e-12);
  expect_close(nn::functional::cross_entropy(x, p, nn::ClassLossOptions(nn::Reduction::None)), {1.1076059644443805, 0.5514447139320511, 1.7413112966571571}, 1e-12, 1e-12);
  EXPECT_NEAR(nn::functional::cross_entropy(tensor({1.0, 2.0, 3.0}, kFloat64).to(dev()), tensor(2L).to(dev())).item<double>(), 0.4076059644443804, 1e-12);
  const Tensor x4 = (arange(24, TensorOptions().dtype(kFloat64)) / 10).reshape({2, 3, 2, 2}).to(dev());
  const Tensor t4 = tensor({0L, 1L, 2L, 0L, 1L, 1L, 2L, 2L}).reshape({2, 2, 2}).to(dev());
  EXPECT_NEAR(nn::functional::cross_entropy(x4, t4).item<double>(), 1.101250513728494, 1e-12);
  EXPECT_EQ(nn::functional::cross_entropy(x4, t4, nn::ClassLossOptions(nn::Reduction::None)).shape(), (Shape{2, 2, 2}));
  Tensor xg = x.detach().clone().requires_grad_();
  nn::functional::cross_entropy(xg, t).backward();
  expect_close(xg.grad(), {0.04501528658519022, 0.12236423552739882, -0.1673795221125891, 0, 0, 0, -0.41235480392998164,
                           0.019556286635343725, 0.39279851729463794}, 1e-12, 1e-12);
  expect_close(locus::mse_loss(tensor({1.0, 2.0}).to(dev()), tensor({0.0, 0.0}).to(dev()), nn::Reduction::None), {1, 4});
  EXPECT_NEAR(locus::mse_loss(tensor({1.0, 2.0}).to(dev()), tensor({0.0, 0.0}).to(dev()), nn::Reduction::Sum).item<double>(), 5, 1e-12);
  // Class targets must be int64, as in PyTorch; the error names the loss the user called.
  try {
    nn::functional::cross_entropy(x, tensor({2, 1, 0}).to(kInt32).to(dev()));
    ADD_FAILURE() << "int32 targets were accepted";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[locus::cross_entropy]"), std::string::npos) << e.what();
  }
  if (!dev().is_cpu()) {
    try {
      nn::functional::cross_entropy(x, t.cpu());
      ADD_FAILURE() << "targets on another device were accepted";
    } catch (const DeviceMismatchError& e) {
      EXPECT_NE(std::string(e.what()).find("of 'cross_entropy'"), std::string::npos) << e.what();
    }
  }
}

TEST(OptimizerArguments, InvalidValuesAreRejectedAsPyTorchDoes) {
  const Tensor w = zeros({2}).requires_grad_();
  auto sgd = [&](double lr, double momentum, double wd) {
    optim::SGDOptions o;
    o.lr(lr), o.momentum(momentum), o.weight_decay(wd);
    return optim::SGD({w}, o);
  };
  EXPECT_THROW(sgd(-1, 0, 0), ValueError);
  EXPECT_THROW(sgd(NAN, 0, 0), ValueError);
  EXPECT_THROW(sgd(0.1, -1, 0), ValueError);
  EXPECT_THROW(sgd(0.1, 0, -1), ValueError);
  EXPECT_NO_THROW(sgd(0.1, 0.9, 1e-4));
  auto adam = [&](double b1, double b2, double eps, double wd) {
    optim::AdamOptions o;
    o.beta1(b1), o.beta2(b2), o.eps(eps), o.weight_decay(wd);
    return optim::Adam({w}, o);
  };
  EXPECT_THROW(adam(1.0, 0.999, 1e-8, 0), ValueError);
  EXPECT_THROW(adam(0.9, -0.1, 1e-8, 0), ValueError);
  EXPECT_THROW(adam(0.9, 0.999, -1, 0), ValueError);
  EXPECT_THROW(adam(0.9, 0.999, 1e-8, -0.5), ValueError);
  EXPECT_THROW(optim::SGD(std::vector<Tensor>{}), ValueError);
}

// Runs `steps` updates of a 4-element parameter with a fixed gradient sequence and compares with
// the float64 formula.
struct Trajectory {
  std::vector<double> p{0.5, -1.0, 2.0, 0.1};
  static std::vector<double> grad(int step) { return {0.3 + step, -0.2, 0.05 * step, 1.0}; }
};

void run(optim::Optimizer& opt, const Tensor& p, Device d, int steps) {
  for (int s = 0; s < steps; ++s) {
    p.set_grad(tensor(Trajectory::grad(s)).to(kFloat64).to(d));
    opt.step();
  }
}

TEST_P(NnOnEachDevice, SgdMomentumNesterovWeightDecayStepByStep) {
  for (const bool nesterov : {false, true}) {
    const Tensor p = tensor(Trajectory{}.p).to(dev()).requires_grad_();
    optim::SGD opt({p}, optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.01).nesterov(nesterov));
    run(opt, p, dev(), 5);
    std::vector<double> ref = Trajectory{}.p, buf(4, 0);
    for (int s = 0; s < 5; ++s)
      for (int i = 0; i < 4; ++i) {
        double g = Trajectory::grad(s)[static_cast<size_t>(i)] + 0.01 * ref[static_cast<size_t>(i)];
        buf[static_cast<size_t>(i)] = s == 0 ? g : 0.9 * buf[static_cast<size_t>(i)] + g;
        ref[static_cast<size_t>(i)] -= 0.1 * (nesterov ? g + 0.9 * buf[static_cast<size_t>(i)] : buf[static_cast<size_t>(i)]);
      }
    expect_close(p, ref, 1e-12, 1e-12);
  }
}

TEST_P(NnOnEachDevice, AdamAndAdamWStepByStep) {
  for (const bool decoupled : {false, true}) {
    const Tensor p = tensor(Trajectory{}.p).to(dev()).requires_grad_();
    optim::AdamOptions o;
    o.lr(0.01), o.weight_decay(0.1);
    std::unique_ptr<optim::Optimizer> opt = decoupled ? std::unique_ptr<optim::Optimizer>(new optim::AdamW({p}, o))
                                                      : std::unique_ptr<optim::Optimizer>(new optim::Adam({p}, o));
    run(*opt, p, dev(), 6);
    std::vector<double> ref = Trajectory{}.p, m(4, 0), v(4, 0);
    for (int s = 0; s < 6; ++s)
      for (size_t i = 0; i < 4; ++i) {
        double g = Trajectory::grad(s)[i];
        if (decoupled) ref[i] *= 1 - 0.01 * 0.1;
        else g += 0.1 * ref[i];
        m[i] = 0.9 * m[i] + 0.1 * g;
        v[i] = 0.999 * v[i] + 0.001 * g * g;
        const double mh = m[i] / (1 - std::pow(0.9, s + 1)), vh = v[i] / (1 - std::pow(0.999, s + 1));
        ref[i] -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
      }
    expect_close(p, ref, 1e-10, 1e-12);
  }
}

TEST(NnModule, ToMovesInPlaceAndOptimizerStateFollows) {
  manual_seed(0);
  nn::Sequential model{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)};
  const std::vector<Tensor> params = model->parameters();
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(model->named_parameters()[2].first, "2.weight");
  optim::SGD opt(params, optim::SGDOptions(0.1).momentum(0.9));
  const Tensor x = randn({5, 4});
  nn::functional::cross_entropy(model(x), tensor({0L, 1L, 1L, 0L, 1L})).backward();
  opt.step();  // creates momentum buffers on the cpu
  model->to(Device("sim:0"));
  for (const Tensor& p : params) {
    EXPECT_EQ(p.device(), Device("sim:0"));  // the optimizer's handles see the move
    EXPECT_EQ(p.grad().device(), Device("sim:0"));
  }
  EXPECT_EQ(model->device(), Device("sim:0"));
  opt.zero_grad();
  nn::functional::cross_entropy(model(x.to(Device("sim:0"))), tensor({0L, 1L, 1L, 0L, 1L}).to(Device("sim:0"))).backward();
  opt.step();  // momentum buffers follow to sim:0
  for (const auto& [name, t] : opt.state_dict())
    if (name != "step") EXPECT_EQ(t.device(), Device("sim:0")) << name;
  // Mixed devices are reported by name.
  nn::Linear a(2, 2);
  a->bias.set_data(a->bias.to(Device("sim:1")));
  try {
    a->device();
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'bias' on sim:1"), std::string::npos) << e.what();
  }
}

TEST(NnModule, StateDictRoundTripsThroughSafetensorsAndChecksKeys) {
  manual_seed(4);
  nn::Linear a(3, 2), b(3, 2);
  const std::string path = ::testing::TempDir() + "/locus_linear.safetensors";
  save(a->state_dict(), path);
  b->load_state_dict(load(path));
  EXPECT_EQ(values(b->weight), values(a->weight));
  EXPECT_EQ(values(b->bias), values(a->bias));
  std::map<std::string, Tensor> bad = a->state_dict();
  bad.erase("bias");
  EXPECT_THROW(b->load_state_dict(bad), ValueError);
  bad["bias"] = zeros({3});
  EXPECT_THROW(b->load_state_dict(bad), ShapeError);
  EXPECT_EQ(values(b->bias), values(a->bias));  // untouched by the failed loads
  EXPECT_THROW(load(path + ".missing"), IOError);
}

TEST(NnModule, DropoutTrainAndEval) {
  nn::Dropout drop(0.5);
  const Tensor x = ones({1000});
  const std::vector<double> y = values(drop(x));
  int zeros_seen = 0;
  for (double v : y) {
    EXPECT_TRUE(v == 0 || v == 2);
    zeros_seen += v == 0;
  }
  EXPECT_GT(zeros_seen, 400);
  EXPECT_LT(zeros_seen, 600);
  drop->eval();
  EXPECT_EQ(values(drop(x)), values(x));
  EXPECT_THROW(nn::Dropout(1.0), ValueError);
}

INSTANTIATE_TEST_SUITE_P(Devices, NnOnEachDevice, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
