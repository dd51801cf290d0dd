// Module state in PyTorch's order and load_state_dict's reporting: state_dict, named_modules,
// named_parameters and checkpoint files list names as the modules registered them, and a bad
// dict is reported whole and changes nothing.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "locus/locus.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::read_file;

using testing::values;

// Parameters and buffers, as BatchNorm registers them.
class NormImpl : public nn::Module {
 public:
  NormImpl() {
    weight = register_parameter("weight", ones({2}));
    bias = register_parameter("bias", zeros({2}));
    running_mean = register_buffer("running_mean", zeros({2}));
    running_var = register_buffer("running_var", ones({2}));
  }
  Tensor weight, bias, running_mean, running_var;
};
LOCUS_MODULE(Norm);

// Submodules registered out of alphabetical order.
class NetImpl : public nn::Module {
 public:
  NetImpl() {
    norm = register_module("norm", Norm());
    encoder = register_module("encoder", nn::Sequential{nn::Linear(2, 3), nn::ReLU(), nn::Linear(3, 3)});
    decoder = register_module("decoder", nn::Linear(3, 2));
  }
  Norm norm{nullptr};
  nn::Sequential encoder{nullptr};
  nn::Linear decoder{nullptr};
};
LOCUS_MODULE(Net);

// What PyTorch 1.13 lists for the same module (checked with torch).
const std::vector<std::string> kTorchStateDictKeys{
    "norm.weight",      "norm.bias",      "norm.running_mean", "norm.running_var", "encoder.0.weight",
    "encoder.0.bias",   "encoder.2.weight", "encoder.2.bias",  "decoder.weight",   "decoder.bias"};

std::shared_ptr<nn::LinearImpl> linear_at(const nn::Sequential& s, size_t i) {
  return std::dynamic_pointer_cast<nn::LinearImpl>((*s)[i]);
}

std::vector<std::string> names(const OrderedDict<std::string, Tensor>& list) {
  std::vector<std::string> out;
  for (const auto& [name, t] : list) out.push_back(name);
  return out;
}

TEST(StateDict, FollowsRegistrationOrderAsPyTorch) {
  Net net;
  EXPECT_EQ(net->state_dict().keys(), kTorchStateDictKeys);
  EXPECT_EQ(names(net->named_parameters()),
            (std::vector<std::string>{"norm.weight", "norm.bias", "encoder.0.weight", "encoder.0.bias", "encoder.2.weight",
                                      "encoder.2.bias", "decoder.weight", "decoder.bias"}));
  EXPECT_EQ(names(net->named_buffers()), (std::vector<std::string>{"norm.running_mean", "norm.running_var"}));
  nn::Sequential seq{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)};
  EXPECT_EQ(seq->state_dict().keys(), (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
}

TEST(StateDict, IsIndexableByKeyAndSharesTheModulesData) {
  Net net;
  const auto sd = net->state_dict();
  EXPECT_FALSE(sd["decoder.weight"].requires_grad());
  EXPECT_EQ(sd["decoder.weight"].data_ptr(), net->decoder->weight.data_ptr());
  EXPECT_EQ(sd.at("norm.running_var").data_ptr(), net->norm->running_var.data_ptr());
}

TEST(NamedModules, ListsItselfFirstThenEveryModuleDepthFirst) {
  Net net;
  const auto modules = net->named_modules();
  EXPECT_EQ(modules.keys(), (std::vector<std::string>{"", "norm", "encoder", "encoder.0", "encoder.1", "encoder.2", "decoder"}));
  EXPECT_EQ(modules[""].get(), net.get());
  EXPECT_EQ(modules["encoder.2"].get(), (*net->encoder)[2].get());
  EXPECT_EQ(modules["decoder"]->name(), "Linear");
  EXPECT_EQ(net->named_modules("model").keys(),
            (std::vector<std::string>{"model", "model.norm", "model.encoder", "model.encoder.0", "model.encoder.1",
                                      "model.encoder.2", "model.decoder"}));
  EXPECT_EQ(net->named_modules("", /*include_self=*/false).keys(),
            (std::vector<std::string>{"norm", "encoder", "encoder.0", "encoder.1", "encoder.2", "decoder"}));
}

class TiedImpl : public nn::Module {
 public:
  TiedImpl() {
    const nn::Linear shared(1, 1);
    register_module("a", shared);
    register_module("b", shared);
  }
};
LOCUS_MODULE(Tied);

TEST(NamedModules, ListsAModuleRegisteredTwiceOnceButStateDictKeepsBothNames) {
  Tied tied;
  EXPECT_EQ(tied->named_modules().keys(), (std::vector<std::string>{"", "a"}));
  EXPECT_EQ(tied->state_dict().keys(), (std::vector<std::string>{"a.weight", "a.bias", "b.weight", "b.bias"}));
}

TEST(NamedModules, OfAModuleNotHeldBySharedPtrNeedsIncludeSelfFalse) {
  NormImpl on_stack;
  try {
    on_stack.named_modules();
    FAIL() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("this Norm is not held by a std::shared_ptr"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(on_stack.named_modules("", false).empty());
}


TEST(StateDict, CheckpointFilesKeepTheOrderBothWays) {
  Net net;
  const std::string path = ::testing::TempDir() + "/locus_order_" + std::to_string(::getpid()) + ".safetensors";
  save(net->state_dict(), path);
  // The header lists the tensors in state_dict order, and so does load().
  const std::string bytes = read_file(path);
  size_t at = 0;
  for (const std::string& key : kTorchStateDictKeys) {
    const size_t found = bytes.find("\"" + key + "\":{", at);
    ASSERT_NE(found, std::string::npos) << key << " out of order in the header";
    at = found;
  }
  const auto loaded = load(path);
  EXPECT_EQ(loaded.keys(), kTorchStateDictKeys);
  EXPECT_EQ(load(path, Device("sim:0")).keys(), kTorchStateDictKeys);
  Net other;
  other->load_state_dict(loaded);
  EXPECT_EQ(values(linear_at(other->encoder, 2)->weight), values(linear_at(net->encoder, 2)->weight));
  std::remove(path.c_str());
}

// PyTorch's message: every missing key, every unexpected key, every size mismatch, in one error.
TEST(LoadStateDict, NamesEveryMissingUnexpectedAndMismatchedKeyInOneError) {
  nn::Sequential model{nn::Linear(2, 3), nn::Linear(3, 2)};
  const std::vector<double> before = values(linear_at(model, 0)->weight);
  OrderedDict<std::string, Tensor> sd = model->state_dict();
  sd.erase("1.bias");
  sd.erase("0.bias");
  sd["x"] = zeros({1});
  sd["y.weight"] = zeros({1});
  sd.insert_or_assign("1.weight", zeros({2, 2}));
  sd.insert_or_assign("0.weight", full({3, 2}, 9.f));  // valid, yet not copied: the load fails
  try {
    model->load_state_dict(sd);
    FAIL() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "Error(s) in loading state_dict for Sequential:\n"
                 "\tMissing key(s) in state_dict: \"0.bias\", \"1.bias\". \n"
                 "\tUnexpected key(s) in state_dict: \"x\", \"y.weight\". \n"
                 "\tsize mismatch for 1.weight: copying a param with shape [2, 2] from checkpoint, the shape in current "
                 "model is [2, 3].");
  }
  EXPECT_EQ(values(linear_at(model, 0)->weight), before);
}

TEST(LoadStateDict, ShapeMismatchesAloneAreAShapeErrorListingEach) {
  nn::Linear model(2, 3);
  const std::vector<double> weight = values(model->weight);
  try {
    model->load_state_dict({{"weight", zeros({2, 2})}, {"bias", zeros({4})}});
    FAIL() << "no ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(),
                 "Error(s) in loading state_dict for Linear:\n"
                 "\tsize mismatch for weight: copying a param with shape [2, 2] from checkpoint, the shape in current model "
                 "is [3, 2].\n"
                 "\tsize mismatch for bias: copying a param with shape [4] from checkpoint, the shape in current model is [3].");
  }
  EXPECT_EQ(values(model->weight), weight);
}

TEST(LoadStateDict, NonStrictReturnsMissingAndUnexpectedKeysAndLoadsTheRest) {
  nn::Sequential model{nn::Linear(2, 3), nn::Linear(3, 1)};
  const nn::IncompatibleKeys keys =
      model->load_state_dict({{"extra", ones({1})}, {"1.bias", full({1}, 4.f)}, {"0.weight", ones({3, 2})}}, /*strict=*/false);
  EXPECT_EQ(keys.missing_keys, (std::vector<std::string>{"0.bias", "1.weight"}));
  EXPECT_EQ(keys.unexpected_keys, std::vector<std::string>{"extra"});
  EXPECT_EQ(values(linear_at(model, 1)->bias), std::vector<double>{4});
  EXPECT_EQ(values(linear_at(model, 0)->weight), std::vector<double>(6, 1.0));
  // A strict load of a complete dict reports nothing.
  const nn::IncompatibleKeys none = model->load_state_dict(model->state_dict());
  EXPECT_TRUE(none.missing_keys.empty());
  EXPECT_TRUE(none.unexpected_keys.empty());
}

TEST(LoadStateDict, NonStrictStillRefusesShapeMismatchesAndChangesNothing) {
  nn::Linear model(2, 3);
  const std::vector<double> bias = values(model->bias);
  EXPECT_THROW(model->load_state_dict({{"bias", zeros({2})}, {"weight", zeros({3, 2})}}, false), ShapeError);
  EXPECT_EQ(values(model->bias), bias);
  EXPECT_NE(values(model->weight), std::vector<double>(6, 0.0));
}

TEST(LoadStateDict, AnUndefinedTensorIsAValueErrorNamingIt) {
  nn::Linear model(1, 1);
  try {
    model->load_state_dict({{"weight", Tensor()}, {"bias", zeros({1})}});
    FAIL() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "Error(s) in loading state_dict for Linear:\n\tUndefined tensor(s) in state_dict: \"weight\". ");
  }
}

TEST(LoadStateDict, ConvertsToTheModulesDeviceAndDtypeInPlace) {
  nn::Linear model(2, 1);
  model->to(Device("sim:0"));
  const Tensor weight = model->weight;  // the parameter keeps its identity
  model->load_state_dict({{"weight", tensor({0.5, -1.5}).reshape({1, 2})}, {"bias", tensor({2.0})}});
  EXPECT_EQ(model->weight.data_ptr(), weight.data_ptr());
  EXPECT_EQ(model->weight.device(), Device("sim:0"));
  EXPECT_EQ(model->weight.dtype(), kFloat32);
  EXPECT_EQ(values(model->weight), (std::vector<double>{0.5, -1.5}));
  EXPECT_EQ(values(model->bias), std::vector<double>{2});
}

// Code written when state_dict() returned a std::map still compiles and works.
TEST(StateDict, StdMapCodeStillCompiles) {
  nn::Linear a(3, 2), b(3, 2);
  std::map<std::string, Tensor> sd = a->state_dict();
  EXPECT_EQ(sd.begin()->first, "bias");
  b->load_state_dict(sd);
  EXPECT_EQ(values(b->weight), values(a->weight));
}

}  // namespace
}  // namespace locus
