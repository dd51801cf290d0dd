// Module::clone of modules written without Cloneable (Note [Replicating modules]): the copy's
// members are its own parts, on the requested device; the original is untouched; classes Locus
// cannot copy say why.

#include <memory>
#include <typeinfo>

#include "tests/nn/docs_style_modules.h"

namespace locus {
namespace {

using testing::DocsNet;
using testing::DocsNetImpl;
using testing::values;

// The module registered under `name` among `m`'s children.
const nn::Module* child(const nn::Module& m, const std::string& name) {
  for (const auto& [n, c] : m.named_children())
    if (n == name) return c.get();
  return nullptr;
}

// The registered tensor `name` (a parameter or a buffer) of `m`.
Tensor named(const nn::Module& m, const std::string& name) {
  for (const auto& list : {m.named_parameters(), m.named_buffers()})
    for (const auto& [n, t] : list)
      if (n == name) return t;
  ADD_FAILURE() << "no tensor " << name;
  return Tensor();
}

TEST(Replicate, UserModuleGetsItsOwnPartsOnTheDevice) {
  const Device d0("sim:0"), d1("sim:1");
  manual_seed(2);
  DocsNet net;
  net->to(d0);
  const auto names_before = net->state_dict();
  const RngState rng = get_rng_state();
  auto copy = std::dynamic_pointer_cast<DocsNetImpl>(net->clone(d1));
  ASSERT_TRUE(copy);
  EXPECT_EQ(get_rng_state(), rng);

  // Members are the copy's registered parts, not the original's.
  EXPECT_EQ(copy->fc1.get(), child(*copy, "fc1"));
  EXPECT_NE(copy->fc1.get(), net->fc1.get());
  EXPECT_EQ(copy->block.get(), child(*copy, "block"));
  EXPECT_EQ(copy->block->fc.get(), child(*copy->block, "fc"));
  EXPECT_NE(copy->block->fc.get(), net->block->fc.get());
  EXPECT_EQ(copy->head.get(), child(*copy, "head"));
  EXPECT_NE(copy->head.get(), net->head.get());
  EXPECT_TRUE(copy->w.is_same(named(*copy, "w")));
  EXPECT_TRUE(copy->offset.is_same(named(*copy, "offset")));
  EXPECT_TRUE(copy->block->gain.is_same(named(*copy, "block.gain")));
  EXPECT_TRUE(copy->fc1->weight.is_same(named(*copy, "fc1.weight")));
  EXPECT_TRUE(copy->note.is_same(net->note));  // unregistered: shared, as in PyTorch

  // Same names and values, every tensor on sim:1, parameters still parameters.
  const auto a = net->named_parameters(), b = copy->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_FALSE(a[i].second.is_same(b[i].second));
    EXPECT_EQ(b[i].second.device(), d1) << b[i].first;
    EXPECT_TRUE(b[i].second.requires_grad()) << b[i].first;
    EXPECT_EQ(values(a[i].second), values(b[i].second)) << b[i].first;
  }
  ASSERT_EQ(copy->named_buffers().size(), 1u);
  EXPECT_EQ(copy->named_buffers()[0].first, "offset");
  EXPECT_EQ(copy->offset.device(), d1);
  EXPECT_EQ(values(copy->offset), values(net->offset));

  const Tensor x = randn({3, 6});
  const std::vector<double> out0 = values(net(x.to(d0))), out1 = values((*copy)(x.to(d1)));
  ASSERT_EQ(out0.size(), out1.size());
  for (size_t j = 0; j < out0.size(); ++j) EXPECT_NEAR(out0[j], out1[j], 1e-6);

  // The original is untouched: its tensors stay where they were, with their values.
  EXPECT_EQ(net->device(), d0);
  EXPECT_EQ(net->fc1.get(), child(*net, "fc1"));
  EXPECT_TRUE(net->w.is_same(named(*net, "w")));
  copy->w.detach().fill_(0.f);
  copy->fc1->weight.detach().fill_(0.f);
  for (const auto& [name, t] : net->state_dict()) EXPECT_EQ(values(t), values(names_before.at(name))) << name;
}

TEST(Replicate, WithoutADeviceTheCopyStaysOnEachTensorsDevice) {
  DocsNet net;
  auto copy = std::dynamic_pointer_cast<DocsNetImpl>(net->clone());
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->device(), Device("cpu"));
  EXPECT_FALSE(copy->w.is_same(net->w));
  EXPECT_EQ(values(copy->w), values(net->w));
  EXPECT_EQ(copy->is_training(), net->is_training());
  net->eval();
  EXPECT_FALSE(net->clone()->is_training());
}

// A module registered twice shares one replica, as it shares one module.
struct TwiceImpl : nn::Module {
  TwiceImpl() {
    a = register_module("a", nn::Linear(2, 2));
    b = register_module("b", a);
  }
  Tensor forward(const Tensor& x) override { return b(a(x)); }
  nn::Linear a{nullptr}, b{nullptr};
};
LOCUS_MODULE(Twice);

TEST(Replicate, SharedSubmodulesStayShared) {
  Twice net;
  auto copy = std::dynamic_pointer_cast<TwiceImpl>(net->clone());
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->a.get(), copy->b.get());
  EXPECT_NE(copy->a.get(), net->a.get());
  // As PyTorch's named_parameters(): a shared submodule's parameters once, under their first
  // names; state_dict() keeps both names.
  EXPECT_EQ(copy->parameters().size(), 2u);
  EXPECT_EQ(copy->state_dict().size(), 4u);
  EXPECT_TRUE(copy->named_parameters().contains("a.weight"));
  EXPECT_FALSE(copy->named_parameters().contains("b.weight"));
}

// A subclass of a built-in (Cloneable) layer: cloned as itself, not sliced to a LinearImpl.
struct ScaledLinearImpl : nn::LinearImpl {
  ScaledLinearImpl() : nn::LinearImpl(3, 2) {}
  Tensor forward(const Tensor& x) override { return mul(nn::LinearImpl::forward(x), 2.0); }
};
LOCUS_MODULE(ScaledLinear);

TEST(Replicate, SubclassOfABuiltInLayerKeepsItsClass) {
  ScaledLinear m;
  const std::shared_ptr<nn::Module> copy = m->clone(Device("sim:1"));
  ASSERT_EQ(typeid(*copy), typeid(ScaledLinearImpl));
  const auto& typed = static_cast<const ScaledLinearImpl&>(*copy);
  EXPECT_TRUE(typed.weight.is_same(copy->named_parameters()[0].second));
  EXPECT_EQ(typed.weight.device(), Device("sim:1"));
  const Tensor x = randn({2, 3});
  const std::vector<double> a = values((*copy)(x.to(Device("sim:1")))), b = values(m(x));
  ASSERT_EQ(a.size(), b.size());
  for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], 1e-6);
}

TEST(Replicate, CloneableModulesStillBuildThemselvesInReset) {
  nn::Linear lin(4, 3);
  auto copy = std::dynamic_pointer_cast<nn::LinearImpl>(lin->clone(Device("sim:1")));
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->weight.is_same(copy->named_parameters()[0].second));
  EXPECT_EQ(copy->weight.device(), Device("sim:1"));
  EXPECT_EQ(values(copy->weight), values(lin->weight));
}

struct NeverSeenImpl : nn::Module {
  Tensor forward(const Tensor& x) override { return x; }
};

TEST(Replicate, ClassNeverSeenByAHandleSaysHowToFixIt) {
  const std::shared_ptr<nn::Module> m = std::make_shared<NeverSeenImpl>();  // the base type only
  try {
    (void)m->clone();
    FAIL();
  } catch (const NotImplementedError& e) {
    EXPECT_STREQ(e.what(),
                 "Module [NeverSeen] cannot be cloned: Locus learns how to copy a module class from its handle "
                 "(LOCUS_MODULE), register_module or nn::AnyModule, and this module reached none of them; pass it as "
                 "its handle or as a std::shared_ptr to its own class");
  }
}

struct UncopyableImpl : nn::Module {
  UncopyableImpl() { fc = register_module("fc", nn::Linear(2, 2)); }
  Tensor forward(const Tensor& x) override { return fc(x); }
  nn::Linear fc{nullptr};
  std::unique_ptr<int> state = std::make_unique<int>(1);
};
LOCUS_MODULE(Uncopyable);

TEST(Replicate, ClassWithoutACopyConstructorSaysSo) {
  Uncopyable m;
  try {
    (void)m->clone();
    FAIL();
  } catch (const NotImplementedError& e) {
    EXPECT_STREQ(e.what(),
                 "Module [Uncopyable] cannot be cloned: its class has no copy constructor (a member that cannot be "
                 "copied, or one declared deleted); give it one, or derive it from nn::Cloneable<UncopyableImpl> and "
                 "build its parts in reset()");
  }
  EXPECT_EQ(m->named_parameters().size(), 2u);  // the module is left as it was
}

TEST(Replicate, TensorCopiesOutsideACloneArePlainCopies) {
  const Tensor t = ones({2});
  const Tensor u = t;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the subject
  EXPECT_TRUE(u.is_same(t));
  nn::Linear lin(2, 2);
  const nn::Linear other = lin;
  EXPECT_EQ(other.get(), lin.get());
}

}  // namespace
}  // namespace locus
