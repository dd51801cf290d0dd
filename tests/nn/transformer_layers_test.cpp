// The transformer's layers as modules: nn::Embedding (initialisation, padding row,
// from_pretrained, option checks, the out-of-range id's message), nn::LayerNorm and nn::RMSNorm
// (state_dict names, reprs, autocast, the fused kernels against the composition),
// MultiheadAttention and the encoder stack, beside the golden family `transformer` for the
// values.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

namespace F = nn::functional;
using testing::values;

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, t] : m.state_dict()) out.push_back(name);
  return out;
}

TEST(TransformerLayers, EmbeddingStartsStandardNormalWithThePaddingRowZero) {
  manual_seed(0);
  nn::Embedding e(nn::EmbeddingOptions(400, 50).padding_idx(-2));
  EXPECT_EQ(*e->options.padding_idx(), 398);  // made non-negative, as PyTorch's
  EXPECT_EQ(keys(*e), std::vector<std::string>{"weight"});
  EXPECT_EQ(values(e->weight[398]), std::vector<double>(50, 0.0));
  const std::vector<double> w = values(e->weight);
  double sum = 0, squares = 0;
  for (double v : w) sum += v, squares += v * v;
  const double n = static_cast<double>(w.size()) - 50, mean = sum / n, var = squares / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.03);  // 19950 draws: the standard error is 0.007
  EXPECT_NEAR(var, 1.0, 0.05);
}

TEST(TransformerLayers, EmbeddingPaddingRowGetsNoGradient) {
  nn::Embedding e(nn::EmbeddingOptions(5, 2).padding_idx(1));
  const Tensor ids = tensor(std::vector<int64_t>{1, 3, 1, 0}).view({2, 2});
  e(ids).sum().backward();
  EXPECT_EQ(values(e->weight.grad()), (std::vector<double>{1, 1, 0, 0, 0, 0, 1, 1, 0, 0}));
}

// Note [Deterministic index_add on CUDA]: the backward sums repeated ids in their order, rounding
// at each step as the CPU does, so the gradients are the CPU's bit for bit, run after run.
TEST(TransformerLayers, CudaEmbeddingBackwardIsTheCpusBitForBit) {
  REQUIRE_CUDA();
  manual_seed(11);
  const Tensor ids = randint(0, 50, {64, 320});  // 20480 ids over 50 rows: ~400 repeats each
  const Tensor grad = randn({64, 320, 96});
  for (DType dtype : {kFloat32, kFloat64, kBFloat16, kFloat16}) {
    const auto backward = [&](Device device) {
      const Tensor table = zeros({50, 96}, TensorOptions().dtype(dtype).device(device)).requires_grad_();
      F::embedding(ids.to(device), table, F::EmbeddingFuncOptions().padding_idx(7)).backward(grad.to(device, dtype));
      return values(table.grad().to(kCPU).to(kFloat64));
    };
    const auto on_cpu = backward(Device("cpu"));
    const auto on_cuda = backward(Device("cuda:0"));
    EXPECT_EQ(on_cuda, on_cpu) << dtype;
    EXPECT_EQ(backward(Device("cuda:0")), on_cuda) << dtype;
    for (int64_t d = 0; d < 96; ++d) EXPECT_EQ(on_cuda[7 * 96 + d], 0.0) << dtype;
  }
  // index_add along a middle dim onto a nonzero self, the indices unsorted.
  const Tensor self = randn({3, 40, 5}), source = randn({3, 1000, 5});
  const Tensor index = randint(0, 40, {1000});
  const Tensor on_cpu = index_add(self, 1, index, source);
  const Tensor on_cuda = index_add(self.cuda(), 1, index.cuda(), source.cuda());
  EXPECT_EQ(values(on_cuda.cpu()), values(on_cpu));
}

TEST(TransformerLayers, FromPretrainedSharesTheTableAndFreezesIt) {
  const Tensor table = arange(12, TensorOptions().dtype(kFloat32)).view({4, 3});
  nn::Embedding frozen = nn::Embedding::from_pretrained(table);
  EXPECT_FALSE(frozen->weight.requires_grad());
  EXPECT_EQ(frozen->weight.data_ptr(), table.data_ptr());
  EXPECT_EQ(values(frozen(tensor(std::vector<int64_t>{2}))), (std::vector<double>{6, 7, 8}));
  nn::Embedding trainable = nn::Embedding::from_pretrained(table.clone(), nn::EmbeddingFromPretrainedOptions().freeze(false));
  EXPECT_TRUE(trainable->weight.requires_grad());
  testing::expect_error<ValueError>([] { nn::Embedding::from_pretrained(zeros({3})); },
                                    "Embedding::from_pretrained: Embeddings parameter is expected to be 2-dimensional");
}

TEST(TransformerLayers, EmbeddingRefusesBadOptions) {
  testing::expect_error<ValueError>([] { nn::Embedding(nn::EmbeddingOptions(5, 2).padding_idx(5)); },
                                    "Embedding: Padding_idx must be within num_embeddings (got 5 for 5 rows)");
  testing::expect_error<ValueError>([] { nn::Embedding(0, 2); },
                                    "Embedding: num_embeddings and embedding_dim must be positive, got 0 and 2");
  testing::expect_error<NotImplementedError>(
      [] { nn::Embedding(nn::EmbeddingOptions(5, 2).sparse(true)); },
      "Embedding: sparse gradients are not supported: Locus has no sparse tensors (use sparse=false)");
  testing::expect_error<ShapeError>([] { nn::Embedding(nn::EmbeddingOptions(5, 2)._weight(zeros({5, 3}))); },
                                    "Embedding: Shape of weight does not match num_embeddings and embedding_dim");
}

// An id outside the table names itself and the table's size (PyTorch: "index out of range in self").
TEST(TransformerLayers, AnOutOfRangeIdNamesItselfAndTheTableSize) {
  nn::Embedding e(10, 4);
  try {
    e(tensor(std::vector<int64_t>{3, 12}));
    FAIL() << "no error";
  } catch (const IndexError& err) {
    const std::string what = err.what();
    EXPECT_NE(what.find("12"), std::string::npos) << what;
    EXPECT_NE(what.find("10"), std::string::npos) << what;
  }
}

TEST(TransformerLayers, NormStateDictsAndReprsArePyTorchs) {
  nn::LayerNorm ln(nn::LayerNormOptions({128}));
  EXPECT_EQ(keys(*ln), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(ln->extra_repr(), "(128,), eps=1e-05, elementwise_affine=True");
  EXPECT_EQ(nn::LayerNorm(nn::LayerNormOptions({3, 4}).eps(1e-6).elementwise_affine(false))->extra_repr(),
            "(3, 4), eps=1e-06, elementwise_affine=False");
  EXPECT_TRUE(keys(*nn::LayerNorm(nn::LayerNormOptions({4}).elementwise_affine(false))).empty());
  nn::RMSNorm rms(nn::RMSNormOptions({64}));
  EXPECT_EQ(keys(*rms), std::vector<std::string>{"weight"});
  EXPECT_EQ(rms->extra_repr(), "(64,), eps=None, elementwise_affine=True");
  EXPECT_EQ(nn::RMSNorm(nn::RMSNormOptions({8}).eps(1e-6))->extra_repr(), "(8,), eps=1e-06, elementwise_affine=True");
  EXPECT_EQ(nn::Embedding(nn::EmbeddingOptions(10, 3).max_norm(1.0).norm_type(1.0).scale_grad_by_freq(true))->extra_repr(),
            "10, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True");
  testing::expect_error<ValueError>([] { nn::LayerNorm(nn::LayerNormOptions({4, -1})); },
                                    "LayerNorm: normalized_shape has a negative size: (4, -1)");
}

// layer_norm is on autocast's float32 list: a bfloat16 input comes back float32, computed as the
// float32 input would be.
TEST(TransformerLayers, LayerNormRunsInFloat32UnderAutocast) {
  manual_seed(1);
  const Tensor x = randn({4, 16}).to(kBFloat16);
  nn::LayerNorm ln(nn::LayerNormOptions({16}));
  Tensor y;
  {
    const amp::AutocastGuard autocast(kCPU, kBFloat16);
    y = ln(x);
  }
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(values(y), values(ln(x.to(kFloat32))));
}

// RMSNorm's default eps is the input dtype's machine epsilon: it decides the output of an
// all-zero row's neighbour, a row of tiny values.
TEST(TransformerLayers, RmsNormDefaultEpsIsTheDtypesEpsilon) {
  const Tensor tiny = full({1, 4}, 1e-4);
  const double expected = 1e-4 / std::sqrt(1e-8 + 1.1920928955078125e-07);
  for (double v : values(F::rms_norm(tiny, F::RMSNormFuncOptions({4})))) EXPECT_NEAR(v, expected, 1e-6);
  const double expected64 = 1e-4 / std::sqrt(1e-8 + 2.220446049250313e-16);
  for (double v : values(F::rms_norm(tiny.to(kFloat64), F::RMSNormFuncOptions({4})))) EXPECT_NEAR(v, expected64, 1e-9);
}

// Attention dropout drops weights (rows no longer sum to 1) and always applies, as
// F.scaled_dot_product_attention's; with p = 0 the result is the same as without.
TEST(TransformerLayers, AttentionDropoutAppliesAndZeroIsNone) {
  manual_seed(7);
  const Tensor q = randn({2, 8, 4}), k = randn({2, 8, 4}), v = ones({2, 8, 1});
  EXPECT_EQ(values(scaled_dot_product_attention(q, k, v, {}, 0.0)), values(scaled_dot_product_attention(q, k, v)));
  // With v all ones, the output is each row's sum of kept weights / (1 - p): not 1 everywhere.
  const std::vector<double> dropped = values(scaled_dot_product_attention(q, k, v, {}, 0.5));
  int not_one = 0;
  for (double x : dropped) not_one += std::abs(x - 1) > 1e-6;
  EXPECT_GT(not_one, 0);
  testing::expect_error<ValueError>([&] { scaled_dot_product_attention(q, k, v, {}, 1.5); },
                                    "[locus::scaled_dot_product_attention] dropout_p must be between 0 and 1, got 1.500000");
}

TEST(TransformerLayers, MultiheadAttentionStateDictIsPyTorchs) {
  nn::MultiheadAttention packed(nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true));
  EXPECT_EQ(keys(*packed),
            (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"}));
  EXPECT_EQ(values(packed->in_proj_bias), std::vector<double>(24, 0.0));
  EXPECT_EQ(values(packed->out_proj->bias), std::vector<double>(8, 0.0));
  nn::MultiheadAttention separate(nn::MultiheadAttentionOptions(8, 2).kdim(6).vdim(4));
  EXPECT_EQ(keys(*separate), (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                                       "out_proj.weight", "out_proj.bias"}));
  EXPECT_EQ(separate->k_proj_weight.shape(), (Shape{8, 6}));
  EXPECT_EQ(separate->v_proj_weight.shape(), (Shape{8, 4}));
  testing::expect_error<ValueError>([] { nn::MultiheadAttention(7, 2); },
                                    "MultiheadAttention: embed_dim must be divisible by num_heads");
}

// Dropout on the attention weights acts in training mode only; the weights returned are the
// dropped ones the values were weighted with, as PyTorch's (rows no longer sum to 1).
TEST(TransformerLayers, MultiheadAttentionDropoutOnlyInTraining) {
  manual_seed(3);
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 2).dropout(0.5));
  const Tensor x = randn({5, 3, 8});
  m->eval();
  const auto [eval_out, eval_weights] = m(x, x, x);
  const auto [again, again_weights] = m(x, x, x);
  EXPECT_EQ(values(eval_out), values(again));
  m->train();
  const auto [train_out, train_weights] = m(x, x, x);
  EXPECT_NE(values(train_out), values(eval_out));
  EXPECT_EQ(train_weights.shape(), (Shape{3, 5, 5}));
  for (double w : values(sum(eval_weights, Shape{2}))) EXPECT_NEAR(w, 1.0, 1e-5);
  int off = 0;
  for (double w : values(sum(train_weights, Shape{2}))) off += std::abs(w - 1.0) > 1e-3;
  EXPECT_GT(off, 0);
}

// The fused layer_norm and rms_norm kernels (cpu) against the composition (sim configured
// without them): odd row widths, a 2-d normalized_shape, with and without the affine parameters,
// values and every gradient, float32 and float64.
TEST(TransformerLayers, FusedAndComposedNormsAgree) {
  const sim::Config original = sim::config();
  sim::Config lacking = original;
  lacking.unsupported_ops = {"layer_norm", "rms_norm"};
  struct Case {
    Shape x;
    std::vector<int64_t> normalized;
    bool affine, rms;
  };
  const std::vector<Case> cases = {{{6, 37}, {37}, true, false},  {{3, 4, 5, 6}, {5, 6}, true, false},
                                   {{9, 130}, {130}, false, false}, {{4, 7, 33}, {33}, true, true},
                                   {{2, 200}, {200}, false, true}};
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 2e-5;
    for (size_t n = 0; n < cases.size(); ++n) {
      const Case& c = cases[n];
      manual_seed(static_cast<uint64_t>(n));
      const TensorOptions o = TensorOptions().dtype(dtype);
      const Tensor x = add(mul(randn(c.x, o), 3.0), 1.5), w = randn(Shape(c.normalized), o), b = randn(Shape(c.normalized), o);
      const Tensor gout = randn(c.x, o);
      std::vector<std::vector<double>> results[2];
      for (int fused = 0; fused < 2; ++fused) {
        if (!fused) sim::configure(lacking);
        {
          const Device dev(fused ? "cpu" : "sim:0");
          const Tensor xx = x.to(dev).requires_grad_(true), ww = w.to(dev).requires_grad_(true), bb = b.to(dev).requires_grad_(true);
          Tensor y;
          if (c.rms) y = F::rms_norm(xx, F::RMSNormFuncOptions(c.normalized).weight(c.affine ? ww : Tensor()).eps(1e-5));
          else y = F::layer_norm(xx, F::LayerNormFuncOptions(c.normalized).weight(c.affine ? ww : Tensor()).bias(c.affine ? bb : Tensor()));
          mul(y, gout.to(dev)).sum().backward();
          results[fused] = {values(y), values(xx.grad())};
          if (c.affine) results[fused].push_back(values(ww.grad()));
          if (c.affine && !c.rms) results[fused].push_back(values(bb.grad()));
        }
        if (!fused) sim::configure(original);
      }
      ASSERT_EQ(results[0].size(), results[1].size());
      for (size_t r = 0; r < results[0].size(); ++r)
        for (size_t i = 0; i < results[0][r].size(); ++i)
          ASSERT_NEAR(results[1][r][i], results[0][r][i], tol * (1 + std::abs(results[0][r][i])))
              << "case " << n << " result " << r << " at " << i << " " << dtype_name(dtype);
    }
  }
}

// The stacks clone their layer with its values (PyTorch's deepcopy), in PyTorch's state_dict
// names; is_causal alone stands for the causal mask; num_layers and activation are checked.
TEST(TransformerLayers, EncoderStackClonesItsLayerAndHonoursTheCausalHint) {
  manual_seed(5);
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0).batch_first(true));
  nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(layer, 2).norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
  const std::vector<std::string> names = keys(*encoder);
  ASSERT_EQ(names.size(), 26u);
  EXPECT_EQ(names[0], "layers.0.self_attn.in_proj_weight");
  EXPECT_EQ(names[12], "layers.1.self_attn.in_proj_weight");
  EXPECT_EQ(names[25], "norm.bias");
  EXPECT_EQ(values(encoder->layers->at<nn::TransformerEncoderLayerImpl>(1).linear1->weight), values(layer->linear1->weight));
  const Tensor x = randn({2, 6, 8});
  const Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(6);
  const std::vector<double> with_mask = values(encoder(x, mask));
  const std::vector<double> with_hint = values(encoder(x, Tensor(), Tensor(), /*is_causal=*/true));
  ASSERT_EQ(with_mask.size(), with_hint.size());
  for (size_t i = 0; i < with_mask.size(); ++i) EXPECT_NEAR(with_hint[i], with_mask[i], 1e-5) << i;
  EXPECT_NE(values(encoder(x)), with_mask);  // the mask matters
  testing::expect_error<ValueError>([&] { nn::TransformerEncoder(layer, 0); }, "TransformerEncoder: num_layers must be at least 1, got 0");
  testing::expect_error<ValueError>([] { nn::TransformerEncoderLayerOptions(8, 2).activation("tanh"); },
                                    "activation should be relu/gelu, not tanh");
  EXPECT_EQ(values(nn::TransformerImpl::generate_square_subsequent_mask(3)),
            (std::vector<double>{0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0, 0}));
}

// Without need_weights, MultiheadAttention goes through scaled_dot_product_attention (the fused
// path on the CPU) and gives the weighted path's output.
TEST(TransformerLayers, MultiheadAttentionWithoutWeightsMatchesTheWeightedPath) {
  manual_seed(8);
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(12, 3).batch_first(true));
  const Tensor q = randn({2, 5, 12}), kv = randn({2, 7, 12});
  Tensor padding = zeros({2, 7}, TensorOptions().dtype(kBool));
  padding[1][6].fill_(true);
  const auto [weighted, weights] = m(q, kv, kv, padding, true);
  const auto [plain, none] = m(q, kv, kv, padding, false);
  EXPECT_FALSE(none.defined());
  EXPECT_EQ(nn::attention::last_sdpa_backend(), nn::attention::SDPBackend::FLASH_ATTENTION);
  const std::vector<double> a = values(weighted), b = values(plain);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(b[i], a[i], 1e-5) << i;
}


}  // namespace
}  // namespace locus
