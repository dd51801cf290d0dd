// Module's forward hooks: every call path runs them (a handle, Module's operator(), Sequential,
// AnyModule), they can replace the tensor arguments and results, they come off by id, and a
// Linear with hooks is not folded into its activation by Sequential.

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

TEST(ForwardHooks, RunOnEveryCallPathAndReplaceInputsAndOutputs) {
  manual_seed(0);
  nn::Linear lin(3, 2);
  std::vector<std::string> calls;
  const int64_t pre = lin->register_forward_pre_hook([&](nn::Module& m, std::vector<Tensor>& inputs) {
    calls.push_back("pre " + m.name());
    ASSERT_EQ(inputs.size(), 1u);
    inputs[0] = inputs[0] * 2;  // the forward sees twice the input
  });
  const int64_t post = lin->register_forward_hook([&](nn::Module&, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
    calls.push_back("post");
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(values(inputs[0]), values(full({1, 3}, 2.0)));  // the replaced input
    outputs[0] = outputs[0] + 1;
  });
  const Tensor x = ones({1, 3});
  const std::vector<double> want = values(lin->forward(x * 2) + 1);  // a direct forward runs no hook
  EXPECT_TRUE(calls.empty());
  EXPECT_EQ(values(lin(x)), want);                      // the handle
  EXPECT_EQ(values((*lin.ptr())(x)), want);             // Module's operator()
  EXPECT_EQ(values(nn::AnyModule(lin).forward(x)), want);
  nn::Sequential seq{lin, nn::ReLU()};                  // not folded with the ReLU: the hooks run
  EXPECT_EQ(values(seq(x)), values(relu(lin->forward(x * 2) + 1)));
  EXPECT_EQ(calls.size(), 8u);
  EXPECT_EQ(calls[0], "pre Linear");
  lin->remove_forward_hook(pre);
  lin->remove_forward_hook(post);
  lin->remove_forward_hook(post);  // gone already: nothing
  EXPECT_FALSE(lin->has_forward_hooks());
  EXPECT_EQ(values(lin(x)), values(lin->forward(x)));
  EXPECT_EQ(calls.size(), 8u);
}

TEST(ForwardHooks, SeeEveryTensorOfOtherSignatures) {
  // A forward of two tensors returning a tuple: the hooks see both arguments and both results.
  struct PairImpl : nn::Module {
    std::tuple<Tensor, Tensor> forward(const Tensor& a, const Tensor& b) { return {a + b, a - b}; }
  };
  LOCUS_MODULE(Pair);
  Pair pair;
  size_t seen_in = 0;
  pair->register_forward_hook([&](nn::Module&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
    seen_in = in.size();
    ASSERT_EQ(out.size(), 2u);
    std::swap(out[0], out[1]);
  });
  const auto [first, second] = pair(full({2}, 3.0), ones({2}));
  EXPECT_EQ(seen_in, 2u);
  EXPECT_EQ(values(first), (std::vector<double>{2, 2}));
  EXPECT_EQ(values(second), (std::vector<double>{4, 4}));
}

TEST(ForwardHooks, AReplicaStartsWithoutTheModulesHooks) {
  nn::Linear lin(2, 2);
  lin->register_forward_pre_hook([](nn::Module&, std::vector<Tensor>&) {});
  EXPECT_TRUE(lin->has_forward_hooks());
  EXPECT_FALSE(lin->clone()->has_forward_hooks());
}

}  // namespace
}  // namespace locus
