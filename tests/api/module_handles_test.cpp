// Module handles, Sequential from handles, printing, loss modules, Module::to.

#include <sstream>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

class NetImpl : public nn::Module {
 public:
  NetImpl() {
    fc1 = register_module("fc1", nn::Linear(4, 3));
    body = register_module("body", nn::Sequential{nn::ReLU(), nn::Dropout(0.25)});
    fc2 = register_module("fc2", nn::Linear(3, 2, /*bias=*/false));
  }
  Tensor forward(const Tensor& x) override { return fc2(body(fc1(x))); }
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::Sequential body{nullptr};
};
LOCUS_MODULE(Net);

TEST(ModuleHandles, CopiesShareOneModuleAndCallLikeFunctions) {
  manual_seed(0);
  nn::Linear a(3, 2);
  nn::Linear b = a;  // shares, as Python names do
  EXPECT_EQ(a.get(), b.get());
  b->weight.detach().fill_(1.f);
  EXPECT_EQ(values(a->weight), std::vector<double>(6, 1.0));
  const Tensor x = ones({5, 3});
  EXPECT_EQ(values(a(x)), values((*a)(x)));
  EXPECT_EQ(a(x).shape(), (Shape{5, 2}));
  nn::Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  try {
    (void)empty->weight;
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "an empty Linear handle was used; construct it or assign a module first");
  }
}

TEST(ModuleHandles, UserModulesRegisterHandlesWithPyTorchNames) {
  Net net;
  std::vector<std::string> names;
  for (const auto& [name, t] : net->named_parameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight"}));
  EXPECT_EQ(net(randn({2, 4})).shape(), (Shape{2, 2}));
  EXPECT_EQ(net->fc1->weight.shape(), (Shape{3, 4}));
  struct Bad : nn::Module {
    void add_empty() { register_module("x", nn::Linear(nullptr)); }
    void add_twice() {
      register_module("y", nn::ReLU());
      register_module("y", nn::ReLU());
    }
    void add_dotted() { register_module("a.b", nn::ReLU()); }
  } bad;
  EXPECT_THROW(bad.add_empty(), ValueError);
  EXPECT_THROW(bad.add_twice(), ValueError);
  EXPECT_THROW(bad.add_dotted(), ValueError);
}

TEST(ModuleHandles, PrintsLikePyTorch) {
  Net net;
  std::ostringstream os;
  os << net;
  // print(Net()) of the same module in PyTorch 1.13.
  EXPECT_EQ(os.str(),
            "Net(\n"
            "  (fc1): Linear(in_features=4, out_features=3, bias=True)\n"
            "  (body): Sequential(\n"
            "    (0): ReLU()\n"
            "    (1): Dropout(p=0.25, inplace=False)\n"
            "  )\n"
            "  (fc2): Linear(in_features=3, out_features=2, bias=False)\n"
            ")");
  std::ostringstream leaf;
  leaf << *nn::Flatten() << " " << *nn::GELU() << " " << nn::Sigmoid() << " " << nn::CrossEntropyLoss();
  EXPECT_EQ(leaf.str(), "Flatten(start_dim=1, end_dim=-1) GELU(approximate='none') Sigmoid() CrossEntropyLoss()");
  EXPECT_EQ(nn::Sequential().ptr()->repr(), "Sequential()");
}

TEST(ModuleHandles, SequentialFromListsArgumentsAndPushBack) {
  manual_seed(2);
  nn::Sequential braces{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)};
  nn::Sequential parens(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
  nn::Sequential grown;
  grown->push_back(nn::Linear(4, 3));
  grown->push_back(std::make_shared<nn::ReLUImpl>());
  for (const nn::Sequential& s : {braces, parens}) {
    EXPECT_EQ(s->size(), 3u);
    EXPECT_EQ(s->named_parameters()[2].first, "2.weight");
  }
  EXPECT_EQ(grown->size(), 2u);
  EXPECT_EQ(grown->named_parameters()[0].first, "0.weight");
  try {
    (void)(*braces)[3];
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_STREQ(e.what(), "Sequential: index 3 is out of range for 3 modules");
  }
  EXPECT_THROW((nn::Sequential{nn::ReLU(), nn::Linear(nullptr)}), ValueError);
}

TEST(ModuleHandles, ToReturnsTheHandleAndMovesInPlace) {
  auto m = nn::Linear(10, 5).to(Device("sim:0"));  // model = nn.Linear(10, 5).to(device)
  static_assert(std::is_same_v<decltype(m), nn::Linear>);
  EXPECT_EQ(m->device(), Device("sim:0"));
  const Tensor w = m->weight;
  m->to(kFloat64).train(false);  // chains on the module
  EXPECT_EQ(w.dtype(), kFloat64);  // the same tensor, converted in place
  EXPECT_FALSE(m->is_training());
  const Tensor pinned_batch = ones({2, 10}).pin_memory();
  auto seq = nn::Sequential{nn::Linear(10, 2)}.to(Device("sim:1"), kFloat64, /*non_blocking=*/true);
  EXPECT_EQ(seq->device(), Device("sim:1"));
  EXPECT_EQ(seq(pinned_batch.to(Device("sim:1"), kFloat64)).dtype(), kFloat64);
}

TEST(ModuleHandles, LossModulesCarryTheirOptions) {
  const Tensor x = tensor({{1.0, 2.0, 3.0}, {1.0, 0.0, 0.0}, {0.5, -1.0, 2.0}}, kFloat64);
  const Tensor t = tensor({2, -100, 0});
  nn::CrossEntropyLoss mean_loss;
  nn::CrossEntropyLoss sum_loss(nn::ClassLossOptions().reduction(nn::Reduction::Sum));
  // PyTorch 1.13: nn.CrossEntropyLoss()(x, t) and reduction='sum'.
  EXPECT_NEAR(mean_loss(x, t).item<double>(), 1.0744586305507688, 1e-12);
  EXPECT_NEAR(sum_loss(x, t).item<double>(), 2.1489172611015377, 1e-12);
  nn::NLLLoss nll(nn::ClassLossOptions().ignore_index(0));
  EXPECT_NEAR(nll(log_softmax(x, 1), tensor({2, 1, 0})).item<double>(), 0.9795253391882157, 1e-12);
  nn::MSELoss mse(nn::Reduction::Sum);
  EXPECT_EQ(mse(tensor({1.0, 2.0}), tensor({0.0, 0.0})).item<double>(), 5.0);
  // Sequential calls forward(x); a module without one says so, as PyTorch does.
  try {
    (void)(*mse)(x);
    FAIL();
  } catch (const NotImplementedError& e) {
    EXPECT_STREQ(e.what(), "Module [MSELoss] is missing the required \"forward\" function (or takes other arguments than one tensor)");
  }
}

}  // namespace
}  // namespace locus
