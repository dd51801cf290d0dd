// The Locus calls of the `nn` golden family (gen_nn.py): the losses of nn::functional, Unflatten,
// the containers' state_dict names and nn::init's gains and fans.

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

namespace F = locus::nn::functional;


// A comma-separated list of integers (negative ones included).
std::vector<int64_t> ints(const std::string& s) {
  std::vector<int64_t> out;
  std::istringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::strtoll(item.c_str(), nullptr, 10));
  return out;
}

nn::KLDivReduction kl_reduction(const Ctx& c) {
  if (c.has("reduction") && c.str("reduction") == "batchmean") return nn::KLDivReduction::BatchMean;
  return c.reduction();
}

// The models gen_nn.py builds, built the same way with Locus's containers.
struct ListsImpl : nn::Module {
  ListsImpl() {
    stem = register_module("stem", nn::Identity());
    layers = register_module("layers", nn::ModuleList(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)));
    layers->insert(1, nn::Linear(4, 4));
    layers->extend(std::vector<nn::AnyModule>{nn::Linear(2, 2)});
  }
  nn::Identity stem{nullptr};
  nn::ModuleList layers{nullptr};
};

struct DictsImpl : nn::Module {
  DictsImpl() {
    heads = register_module("heads", nn::ModuleDict(std::vector<std::pair<std::string, nn::AnyModule>>{
                                         {"cls", nn::Linear(4, 3)}, {"box", nn::Linear(4, 2)}, {"aux", nn::Linear(4, 1)}}));
    heads->update(std::vector<std::pair<std::string, nn::AnyModule>>{{"cls", nn::Linear(4, 5)}, {"mask", nn::Linear(4, 6)}});
    heads->pop("box");
  }
  nn::ModuleDict heads{nullptr};
};

struct ParamsImpl : nn::Module {
  ParamsImpl() {
    scales = register_module("scales", nn::ParameterList(std::vector<Tensor>{zeros({3}), zeros({2, 2})}));
    scales->append(zeros({1}));
    register_buffer("running", zeros({2}));
    register_buffer("scratch", zeros({5}), /*persistent=*/false);
    fc = register_module("fc", nn::Linear(2, 2));
  }
  nn::ParameterList scales{nullptr};
  nn::Linear fc{nullptr};
};

// The numel of each state_dict entry, after checking the keys against PyTorch's (the `keys`
// argument): a difference is a failure of the case, reported as an unexpected error.
Outs state_dict_sizes(const Ctx& c) {
  const std::string& model = c.str("model");
  std::shared_ptr<nn::Module> m;
  if (model == "lists") m = std::make_shared<ListsImpl>();
  else if (model == "dicts") m = std::make_shared<DictsImpl>();
  else m = std::make_shared<ParamsImpl>();
  std::string keys;
  std::vector<int64_t> sizes;
  for (const auto& [key, t] : m->state_dict()) {
    keys += (keys.empty() ? "" : ",") + key;
    sizes.push_back(t.numel());
  }
  if (keys != c.str("keys")) throw std::runtime_error("state_dict keys " + keys + ", PyTorch's " + c.str("keys"));
  return {tensor(sizes, Shape{static_cast<int64_t>(sizes.size())}).to(c.dev)};
}

const OpRegistrar registered{
    {"l1_loss", [](const Ctx& c) -> Outs { return {F::l1_loss(c.x(0), c.x(1), F::L1LossFuncOptions(c.reduction()))}; }},
    {"smooth_l1_loss",
     [](const Ctx& c) -> Outs {
       return {F::smooth_l1_loss(c.x(0), c.x(1), F::SmoothL1LossFuncOptions(c.reduction()).beta(c.f64("beta", 1.0)))};
     }},
    {"huber_loss",
     [](const Ctx& c) -> Outs {
       return {F::huber_loss(c.x(0), c.x(1), F::HuberLossFuncOptions(c.reduction()).delta(c.f64("delta", 1.0)))};
     }},
    {"kl_div",
     [](const Ctx& c) -> Outs {
       return {F::kl_div(c.x(0), c.x(1), F::KLDivFuncOptions(kl_reduction(c)).log_target(c.flag("log_target")))};
     }},
    {"binary_cross_entropy",
     [](const Ctx& c) -> Outs {
       return {F::binary_cross_entropy(
           c.x(0), c.x(1), F::BinaryCrossEntropyFuncOptions().weight(c.named("weight")).reduction(c.reduction()))};
     }},
    {"binary_cross_entropy_with_logits",
     [](const Ctx& c) -> Outs {
       return {F::binary_cross_entropy_with_logits(c.x(0), c.x(1),
                                                   F::BinaryCrossEntropyWithLogitsFuncOptions()
                                                       .weight(c.named("weight"))
                                                       .pos_weight(c.named("pos_weight"))
                                                       .reduction(c.reduction()))};
     }},
    {"F.cross_entropy",
     [](const Ctx& c) -> Outs {
       return {F::cross_entropy(c.x(0), c.x(1),
                                F::CrossEntropyFuncOptions()
                                    .weight(c.named("weight"))
                                    .reduction(c.reduction())
                                    .ignore_index(c.i64("ignore_index", -100))
                                    .label_smoothing(c.f64("label_smoothing", 0.0)))};
     }},
    {"F.nll_loss",
     [](const Ctx& c) -> Outs {
       return {F::nll_loss(c.x(0), c.x(1),
                           F::NLLLossFuncOptions().weight(c.named("weight")).reduction(c.reduction()).ignore_index(
                               c.i64("ignore_index", -100)))};
     }},
    {"margin_ranking_loss",
     [](const Ctx& c) -> Outs {
       return {F::margin_ranking_loss(c.x(0), c.x(1), c.x(2),
                                      F::MarginRankingLossFuncOptions().margin(c.f64("margin", 0.0)).reduction(c.reduction()))};
     }},
    {"cosine_embedding_loss",
     [](const Ctx& c) -> Outs {
       return {F::cosine_embedding_loss(
           c.x(0), c.x(1), c.x(2), F::CosineEmbeddingLossFuncOptions().margin(c.f64("margin", 0.0)).reduction(c.reduction()))};
     }},
    {"cosine_similarity",
     [](const Ctx& c) -> Outs {
       return {F::cosine_similarity(c.x(0), c.x(1), F::CosineSimilarityFuncOptions().dim(c.i64("dim", 1)))};
     }},
    {"normalize",
     [](const Ctx& c) -> Outs {
       return {F::normalize(c.x(0), F::NormalizeFuncOptions().p(c.f64("p", 2.0)).dim(c.i64("dim", 1)))};
     }},
    {"Unflatten",
     [](const Ctx& c) -> Outs { return {nn::Unflatten(c.i64("dim"), ints(c.str("sizes")))(c.x(0))}; }},
    {"state_dict", state_dict_sizes},
    {"calculate_gain",
     [](const Ctx& c) -> Outs {
       const double gain = nn::init::calculate_gain(c.str("nonlinearity"), c.f64("param", 0.01));
       return {full({}, gain, TensorOptions().dtype(kFloat64).device(c.dev))};
     }},
    {"fan_in_and_fan_out",
     [](const Ctx& c) -> Outs {
       const auto [fan_in, fan_out] = nn::init::_calculate_fan_in_and_fan_out(c.x(0));
       return {tensor(std::vector<int64_t>{fan_in, fan_out}, Shape{2}).to(c.dev)};
     }},
};

}  // namespace
}  // namespace locus::golden
