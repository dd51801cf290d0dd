// ModuleList, ModuleDict, ParameterList, Identity and Unflatten as modules: PyTorch's names and
// repr text, moving with to() and replicating as Sequential does; Module's children, apply and
// non-persistent buffers. (Their state_dict names against PyTorch's are in the golden family nn.)

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

std::vector<std::string> keys_of(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [key, t] : m.state_dict()) out.push_back(key);
  return out;
}

struct TowerImpl : nn::Module {
  TowerImpl() {
    layers = register_module("layers", nn::ModuleList(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)));
    heads = register_module("heads", nn::ModuleDict(std::vector<std::pair<std::string, nn::AnyModule>>{
                                         {"b", nn::Linear(2, 1)}, {"a", nn::Identity()}}));
    scales = register_module("scales", nn::ParameterList(std::vector<Tensor>{ones({2}), ones({1})}));
    register_buffer("steps", zeros({1}));
    register_buffer("cache", zeros({3}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) override {
    Tensor y = x;
    for (const auto& layer : *layers) y = layer->forward(y);
    return heads->at<nn::LinearImpl>("b").forward(y * scales->at(0)) * scales->at(1);
  }
  nn::ModuleList layers{nullptr};
  nn::ModuleDict heads{nullptr};
  nn::ParameterList scales{nullptr};
};
LOCUS_MODULE(Tower);

TEST(Containers, NamesAndReprAsPyTorch) {
  Tower t;
  EXPECT_EQ(keys_of(*t), (std::vector<std::string>{"steps", "layers.0.weight", "layers.0.bias", "layers.2.weight",
                                                   "layers.2.bias", "heads.b.weight", "heads.b.bias", "scales.0",
                                                   "scales.1"}));
  // The non-persistent buffer is a buffer all the same.
  EXPECT_EQ(t->named_buffers().size(), 2u);
  EXPECT_EQ(t->parameters().size(), 8u);
  // print(model) of the same model in PyTorch 1.13.
  EXPECT_EQ(t->repr(),
            "Tower(\n"
            "  (layers): ModuleList(\n"
            "    (0): Linear(in_features=3, out_features=4, bias=True)\n"
            "    (1): ReLU()\n"
            "    (2): Linear(in_features=4, out_features=2, bias=True)\n"
            "  )\n"
            "  (heads): ModuleDict(\n"
            "    (b): Linear(in_features=2, out_features=1, bias=True)\n"
            "    (a): Identity()\n"
            "  )\n"
            "  (scales): ParameterList(\n"
            "      (0): Parameter containing: [torch.float32 of size 2]\n"
            "      (1): Parameter containing: [torch.float32 of size 1]\n"
            "  )\n"
            ")");
  EXPECT_EQ(nn::Unflatten(1, {2, 5})->repr(), "Unflatten(dim=1, unflattened_size=(2, 5))");
  EXPECT_EQ(nn::Unflatten(0, {4})->repr(), "Unflatten(dim=0, unflattened_size=(4,))");
}

TEST(Containers, ModuleListEditing) {
  nn::ModuleList list;
  EXPECT_TRUE(list->is_empty());
  list->push_back(nn::Linear(2, 2));
  list->push_back(nn::ReLU());
  list->insert(1, nn::Linear(2, 3));
  list->extend(*nn::ModuleList(nn::Tanh()));
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ(list->at<nn::LinearImpl>(1).weight.size(0), 3);
  EXPECT_NE(list->ptr<nn::ReLUImpl>(2), nullptr);
  EXPECT_EQ(list->ptr<nn::ReLUImpl>(0), nullptr);
  EXPECT_EQ((*list)[3]->name(), "Tanh");
  EXPECT_EQ(keys_of(*list), (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"}));
  EXPECT_THROW((*list)[4], IndexError);
  EXPECT_THROW(list->insert(9, nn::ReLU()), IndexError);
  EXPECT_THROW(list->at<nn::LinearImpl>(2), ValueError);
  EXPECT_THROW(list->push_back(nn::Linear(nullptr)), ValueError);
  EXPECT_THROW((*list)(ones({2})), NotImplementedError);  // no forward, as PyTorch
  size_t n = 0;
  for (const auto& m : *list) n += m != nullptr;
  EXPECT_EQ(n, 4u);
}

TEST(Containers, ModuleDictKeepsInsertionOrder) {
  nn::ModuleDict dict;
  dict->insert("z", nn::Linear(1, 1));
  dict->update(std::vector<std::pair<std::string, nn::AnyModule>>{{"a", nn::ReLU()}, {"z", nn::Linear(1, 2)}});
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(dict->at<nn::LinearImpl>("z").weight.size(0), 2);  // replaced where it stood
  EXPECT_TRUE(dict->contains("a"));
  EXPECT_EQ(dict->values().size(), 2u);
  EXPECT_EQ(dict->pop("z")->name(), "Linear");
  EXPECT_FALSE(dict->contains("z"));
  EXPECT_TRUE(keys_of(*dict).empty());
  EXPECT_THROW(dict->pop("z"), IndexError);
  EXPECT_THROW((*dict)["q"], IndexError);
  EXPECT_THROW(dict->insert("a.b", nn::ReLU()), ValueError);
  dict->clear();
  EXPECT_TRUE(dict->empty());
}

TEST(Containers, ParameterListMakesParameters) {
  nn::ParameterList params;
  params->append(zeros({3}));
  params->extend(std::vector<Tensor>{ones({2, 2})});
  ASSERT_EQ(params->size(), 2u);
  EXPECT_TRUE((*params)[1].requires_grad());
  EXPECT_EQ(keys_of(*params), (std::vector<std::string>{"0", "1"}));
  EXPECT_THROW(params->at(2), IndexError);
  EXPECT_THROW(params->append(Tensor()), ValueError);
}

TEST(Containers, FollowToAndClone) {
  manual_seed(3);
  Tower t;
  const Tensor x = randn({5, 3});
  const std::vector<double> before = values(t(x));
  t->to(Device("sim:0"));
  for (const auto& [name, p] : t->named_parameters()) EXPECT_EQ(p.device(), Device("sim:0")) << name;
  for (const auto& [name, b] : t->named_buffers()) EXPECT_EQ(b.device(), Device("sim:0")) << name;
  EXPECT_EQ(values(t(x.to(Device("sim:0")))), before);
  // clone() (what DataParallel replicates with): own tensors, same values, same names.
  const auto copy = std::dynamic_pointer_cast<TowerImpl>(t->clone(Device("sim:1")));
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(keys_of(*copy), keys_of(*t));
  EXPECT_NE(copy->layers.get(), t->layers.get());
  EXPECT_NE(copy->scales->at(0).data_ptr(), t->scales->at(0).data_ptr());
  EXPECT_EQ(copy->layers->at<nn::LinearImpl>(0).weight.device(), Device("sim:1"));
  EXPECT_EQ(copy->heads->at<nn::LinearImpl>("b").weight.device(), Device("sim:1"));
  EXPECT_EQ(copy->scales->at(1).device(), Device("sim:1"));
  EXPECT_EQ(values((*copy)(x.to(Device("sim:1")))), before);
}

TEST(Containers, DataParallelReplicatesThem) {
  manual_seed(6);
  Tower t;
  const Tensor x = randn({6, 3});
  const std::vector<double> single = values(t(x));
  t->to(Device("sim:0"));
  nn::DataParallel parallel(t, {Device("sim:0"), Device("sim:1")});
  testing::expect_close(parallel(x), single, 1e-5, 1e-6);
}

TEST(Module, ChildrenNamedChildrenAndApply) {
  Tower t;
  std::vector<std::string> names;
  for (const auto& [name, child] : t->named_children()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"layers", "heads", "scales"}));
  EXPECT_EQ(t->children().size(), 3u);
  // apply visits every module, children before their parent (PyTorch's order).
  std::vector<std::string> visited;
  t->apply([&](nn::Module& m) {
    visited.push_back(m.name());
    if (auto* linear = dynamic_cast<nn::LinearImpl*>(&m)) nn::init::zeros_(linear->weight);
  });
  EXPECT_EQ(visited, (std::vector<std::string>{"Linear", "ReLU", "Linear", "ModuleList", "Linear", "Identity",
                                               "ModuleDict", "ParameterList", "Tower"}));
  for (const auto& [name, p] : t->named_parameters())
    if (name.ends_with("weight")) EXPECT_EQ(values(p), std::vector<double>(p.numel(), 0.0)) << name;
}

TEST(Module, NonPersistentBuffersStayOutOfCheckpoints) {
  Tower a, b;
  auto state = a->state_dict();
  EXPECT_FALSE(state.contains("cache"));
  EXPECT_NO_THROW(b->load_state_dict(state));  // strict: "cache" is not missing
  state.insert("cache", zeros({3}));
  EXPECT_THROW(b->load_state_dict(state), ValueError);  // nor expected
}

TEST(Layers, IdentityAndUnflatten) {
  const Tensor x = arange(24).reshape({2, 12});
  EXPECT_EQ(nn::Identity()(x).data_ptr(), x.data_ptr());
  EXPECT_EQ(nn::Unflatten(1, {3, -1})(x).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(nn::Unflatten(-1, {2, 2, 3})(x).shape(), (Shape{2, 2, 2, 3}));
  EXPECT_THROW(nn::Unflatten(1, {5, 2})(x), ShapeError);
  EXPECT_THROW(nn::Unflatten(1, {-1, 5})(x), ShapeError);
  EXPECT_THROW(nn::Unflatten(2, {2, 6})(x), IndexError);
  EXPECT_THROW(nn::Unflatten(1, {-1, -1}), ValueError);
}

}  // namespace
}  // namespace locus
