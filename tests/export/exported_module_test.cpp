// locus::load_exported against PyTorch 2.15's own run of the same exported programs
// (scripts/reference/export_models.py wrote tests/export/data: an MLP, a BatchNorm CNN exported in
// training and in eval mode, a residual block with in-place ops, a GPT with tied weights and
// causal attention, an nn.TransformerEncoder language model): outputs, the loss, every parameter
// gradient and every buffer after the forward, on cpu and sim, at the example's batch size and
// another; training steps that lower the loss; the module's names, modes and shape checks; and
// hand-made archives for each refusal.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "src/export/size_expression.h"
#include "tests/expect_error.h"
#include "tests/test_files.h"
#include "tests/distributed/rank_threads.h"
#include "tests/test_util.h"
#include "tests/zip_writer.h"

namespace locus {
namespace {

using testing::expect_error;
using testing::values;

std::string data(const std::string& name) { return std::string(LOCUS_EXPORT_DATA_DIR) + "/" + name; }

void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = values(got.cpu()), w = values(want);
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << what << " at " << i;
}

struct Reference {
  OrderedDict<std::string, Tensor> t;
  std::vector<Tensor> with_prefix(const std::string& prefix) const {
    std::vector<Tensor> out;
    for (int k = 0; t.contains(prefix + std::to_string(k)); ++k) out.push_back(t.at(prefix + std::to_string(k)));
    return out;
  }
};

std::vector<Tensor> on(const std::vector<Tensor>& ts, Device d) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(t.to(d));
  return out;
}

// `file`.pt2 against `reference`.safetensors (a core-ATen form shares its program's reference).
void check_against_pytorch(const std::string& file, const std::string& name, Device device) {
  SCOPED_TRACE(file + " on " + device.str());
  const Reference ref{load(data(name + ".safetensors"))};
  nn::ExportedModule m = load_exported(data(file + ".pt2"), device);
  EXPECT_TRUE(m->unsupported_operators().empty());
  const std::vector<Tensor> outputs = m->forward(on(ref.with_prefix("input."), device));
  const std::vector<Tensor> want = ref.with_prefix("output."), weights = ref.with_prefix("loss_weight.");
  ASSERT_EQ(outputs.size(), want.size());
  Tensor loss = zeros({}, TensorOptions().dtype(kFloat64).device(device));
  for (size_t k = 0; k < outputs.size(); ++k) {
    expect_close(outputs[k], want[k], 2e-5, "output " + std::to_string(k));
    loss = loss + mul(outputs[k], weights[k].to(device)).sum().to(kFloat64);
  }
  EXPECT_NEAR(loss.item<double>(), ref.t.at("loss").item<double>(), 1e-4 * (1 + std::abs(ref.t.at("loss").item<double>())));
  loss.backward();
  int grads = 0;
  for (const auto& [pname, p] : m->named_parameters()) {
    if (!ref.t.contains("grad." + pname)) continue;
    ++grads;
    expect_close(p.grad(), ref.t.at("grad." + pname), 1e-4, "grad of " + pname);
  }
  EXPECT_GT(grads, 0);
  for (const auto& [bname, b] : m->named_buffers())
    if (ref.t.contains("buffer." + bname)) expect_close(b, ref.t.at("buffer." + bname), 1e-5, "buffer " + bname);
  // Another batch size binds the dynamic dimension again (without grad: the buffers stay put).
  NoGradGuard no_grad;
  const std::vector<Tensor> second = ref.with_prefix("output2.");
  if (m->is_training()) m->eval();  // PyTorch ran the second batch in the exported module's mode
  if (name != "cnn_train") {
    const std::vector<Tensor> outputs2 = m->forward(on(ref.with_prefix("input2."), device));
    for (size_t k = 0; k < outputs2.size(); ++k) expect_close(outputs2[k], second[k], 2e-5, "second batch output");
  }
}

TEST(ExportedPrograms, EveryReferenceModelMatchesPyTorchOnCpuAndSim) {
  for (const char* name : {"mlp", "cnn_train", "cnn_eval", "resblock", "gpt", "charlm"})
    for (const char* device : {"cpu", "sim:0"}) check_against_pytorch(name, name, Device(device));
}

// The same programs decomposed to core ATen (run_decompositions): addmm, convolution, the
// native norms with their saved statistics, the functional batch norm whose running statistics
// come back as buffer mutations, the decomposed attention's masks and comparisons.
TEST(ExportedPrograms, TheCoreAtenFormsMatchPyTorchToo) {
  for (const char* name : {"mlp", "cnn_train", "cnn_eval", "resblock", "gpt", "charlm"})
    for (const char* device : {"cpu", "sim:0"}) check_against_pytorch(std::string(name) + "_core", name, Device(device));
}

TEST(ExportedPrograms, TrainOnAnEvalCoreExportIsRefusedWithTheReason) {
  nn::ExportedModule m = load_exported(data("cnn_eval_core.pt2"));
  m->train();
  expect_error<NotImplementedError>(
      [&] { m->forward(randn({2, 1, 8, 8})); },
      "ExportedModule: the program was exported in eval mode and decomposed to core ATen (run_decompositions), which "
      "drops its dropout and its batch norms' running-statistics updates, so train() cannot run it as the Python module "
      "would; export the model in training mode, or save the export() graph without run_decompositions()");
  m->eval();
  EXPECT_EQ(m->forward(randn({2, 1, 8, 8})).size(1), 5);
}

TEST(ExportedPrograms, NamesModesAndTiedWeightsAreTheExportedModules) {
  nn::ExportedModule gpt = load_exported(data("gpt.pt2"));
  const auto state = gpt->state_dict();
  EXPECT_TRUE(state.contains("wte.weight"));
  EXPECT_TRUE(state.contains("head.weight"));  // tied: both names in state_dict, as PyTorch's
  const auto params = gpt->named_parameters();
  EXPECT_TRUE(params.contains("wte.weight"));
  EXPECT_FALSE(params.contains("head.weight"));  // one parameter, listed under its first name
  EXPECT_TRUE(params.at("wte.weight").is_same(state.at("head.weight")) ||
              params.at("wte.weight").data_ptr() == state.at("head.weight").data_ptr());
  EXPECT_TRUE(params.contains("blocks.0.qkv.weight"));
  EXPECT_EQ(gpt->input_names(), std::vector<std::string>{"idx"});
  EXPECT_FALSE(gpt->is_training());
  EXPECT_TRUE(load_exported(data("cnn_train.pt2"))->is_training());
  EXPECT_NE(gpt->operators().size(), 0u);
}

// What `locus info model.pt2` prints: the inputs with their dynamic ranges, the state's size,
// every operator with whether Locus runs it.
TEST(ExportedPrograms, SummaryDescribesTheProgramWithoutRunningIt) {
  const ExportedSummary s = summarize_exported(data("mlp.pt2"));
  EXPECT_EQ(s.torch_version, "2.15.0+cu132");
  EXPECT_EQ(s.dialect, "TRAINING");
  EXPECT_EQ(s.inputs, std::vector<std::string>{"x: float32 [s77 in 1..64, 4]"});
  EXPECT_EQ(s.outputs, 1u);
  EXPECT_EQ(s.parameters, 4u);
  EXPECT_EQ(s.parameter_elements, 4u * 8 + 8 + 8 * 3 + 3);
  EXPECT_EQ(s.operators, (std::vector<std::pair<std::string, bool>>{{"torch.ops.aten.linear.default", true},
                                                                     {"torch.ops.aten.relu.default", true}}));
  EXPECT_EQ(summarize_exported(data("cnn_train_core.pt2")).dialect, "ATEN");
  const ExportedSummary gpt = summarize_exported(data("gpt.pt2"));
  EXPECT_EQ(gpt.parameters, load_exported(data("gpt.pt2"))->parameters().size());  // the tied weight once
}

// A replica (DataParallel's clone) computes what the module computes, with its own parameters.
TEST(ExportedPrograms, ACloneOnAnotherDeviceComputesTheSame) {
  nn::ExportedModule m = load_exported(data("gpt.pt2"));
  const Tensor idx = load(data("gpt.safetensors")).at("input.0");
  const auto copy = std::dynamic_pointer_cast<nn::ExportedModuleImpl>(m->clone(Device("sim:1")));
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->named_parameters().at("wte.weight").device(), Device("sim:1"));
  expect_close(copy->forward(idx.to(Device("sim:1"))), m->forward(idx), 1e-6, "clone");
}

// DataParallel splits the batch over two sim devices, each replica runs the program with its
// own parameters, and the gradients come back to the module's: the same as one device.
TEST(ExportedPrograms, DataParallelOverTwoDevicesGivesTheSingleDevicesGradients) {
  const Reference ref{load(data("mlp.safetensors"))};
  const Tensor x = cat({ref.t.at("input.0"), ref.t.at("input2.0")}, 0);  // 8 rows: 4 per device
  nn::ExportedModule single = load_exported(data("mlp.pt2"), Device("sim:0"));
  nn::ExportedModule replicated = load_exported(data("mlp.pt2"), Device("sim:0"));
  single->forward(x.to(Device("sim:0"))).pow(2).sum().backward();
  nn::DataParallel parallel(replicated, {Device("sim:0"), Device("sim:1")}, Device("sim:0"));
  parallel(x.to(Device("sim:0"))).pow(2).sum().backward();
  for (const auto& [name, p] : single->named_parameters())
    expect_close(replicated->named_parameters().at(name).grad(), p.grad().cpu(), 1e-5, "grad of " + name);
}

// DistributedDataParallel over two Gloo ranks (threads of this process), each with its own
// loaded module and half the batch: rank 1's parameters start elsewhere and are overwritten
// with rank 0's, the ranks end bit for bit equal, and the MLP trains as one process on the whole
// batch. The BatchNorm CNN in training mode takes its running statistics and num_batches_tracked
// from rank 0, as DDP's buffers do for any module.
TEST(ExportedPrograms, DistributedDataParallelOverTwoRanksTrainsAsOneProcess) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  manual_seed(12);
  const Tensor x = randn({8, 4});
  nn::ExportedModule single = load_exported(data("mlp.pt2"));
  optim::SGD single_opt(single->parameters(), optim::SGDOptions(0.1));
  for (int step = 0; step < 3; ++step) {
    single_opt.zero_grad();
    single->forward(x).pow(2).mean().backward();
    single_opt.step();
  }
  const std::vector<nn::ExportedModule> mlps = {load_exported(data("mlp.pt2")), load_exported(data("mlp.pt2"))};
  const std::vector<nn::ExportedModule> cnns = {load_exported(data("cnn_train.pt2")), load_exported(data("cnn_train.pt2"))};
  {
    NoGradGuard no_grad;
    for (Tensor p : mlps[1]->parameters()) p.add_(1.0);
    cnns[1]->named_buffers().at("bn1.running_mean").fill_(100.0);
  }
  const Tensor images = randn({6, 1, 8, 8});
  std::vector<std::vector<double>> params(2), cnn_params(2), means(2);
  std::vector<int64_t> counts(2);
  // `steps` SGD steps of DDP over `m` on this rank's rows of `data`; the parameters after them.
  const auto train = [](nn::ExportedModule m, const std::shared_ptr<distributed::ProcessGroup>& g, const Tensor& data,
                        int steps, double lr) {
    nn::DistributedDataParallel ddp(m, g);
    optim::SGD opt(m->parameters(), optim::SGDOptions(lr));
    const int64_t rows = data.size(0) / 2;
    for (int step = 0; step < steps; ++step) {
      opt.zero_grad();
      ddp(data.narrow(0, rows * g->rank(), rows)).pow(2).mean().backward();
      opt.step();
    }
    std::vector<double> flat;
    for (const Tensor& p : m->parameters())
      for (double v : values(p)) flat.push_back(v);
    return flat;
  };
  testing::on_rank_threads(2, [&](std::shared_ptr<distributed::ProcessGroup> g) {
    const size_t r = static_cast<size_t>(g->rank());
    params[r] = train(mlps[r], g, x, 3, 0.1);
    cnn_params[r] = train(cnns[r], g, images, 2, 0.05);
    const auto state = cnns[r]->state_dict();
    means[r] = values(state["bn1.running_mean"]);
    counts[r] = state["bn1.num_batches_tracked"].item<int64_t>();
  });
  EXPECT_EQ(params[0], params[1]);
  std::vector<double> want;
  for (const Tensor& p : single->parameters())
    for (double v : values(p)) want.push_back(v);
  ASSERT_EQ(params[0].size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(params[0][i], want[i], 1e-5) << i;
  EXPECT_EQ(cnn_params[0], cnn_params[1]);
  EXPECT_EQ(counts[0], 2);
  EXPECT_EQ(counts[1], 2);
  for (double m : means[1]) EXPECT_LT(std::abs(m), 10.0) << "rank 1 kept its own running_mean of 100";
}

// Under autocast the program's products run in bfloat16, as the Python module's would.
TEST(ExportedPrograms, AutocastRunsTheProductsInBfloat16) {
  const Reference ref{load(data("mlp.safetensors"))};
  nn::ExportedModule m = load_exported(data("mlp.pt2"));
  Tensor y;
  {
    amp::AutocastGuard autocast(DeviceType::CPU, kBFloat16);
    y = m->forward(ref.t.at("input.0"));
  }
  EXPECT_EQ(y.dtype(), kBFloat16);
  expect_close(y.to(kFloat32), ref.t.at("output.0"), 3e-2, "bfloat16 output");
}

// eval() on a training-mode export normalises with the running statistics, as PyTorch's module
// in eval mode; the counter of batches stays.
TEST(ExportedPrograms, EvalOnATrainingExportUsesTheRunningStatistics) {
  nn::ExportedModule m = load_exported(data("cnn_train.pt2"));
  const Reference ref{load(data("cnn_train.safetensors"))};
  m->eval();
  const Tensor x = ref.t.at("input.0");
  const Tensor a = m->forward(x), b = m->forward(x);
  expect_close(a, b, 0, "eval is deterministic");
  EXPECT_EQ(m->named_buffers().at("bn1.num_batches_tracked").item<int64_t>(), 0);
  m->train();
  m->forward(x);
  EXPECT_EQ(m->named_buffers().at("bn1.num_batches_tracked").item<int64_t>(), 1);
}

// Dropout and batch statistics follow the module's mode: an eval-mode export keeps its dropout
// probability for train(), and its batch norms then normalise with the batch's statistics and
// update the running ones, as the Python module in training mode.
TEST(ExportedPrograms, TrainOnAnEvalExportTurnsDropoutAndBatchStatisticsOn) {
  nn::ExportedModule m = load_exported(data("cnn_eval.pt2"));
  const Tensor x = load(data("cnn_eval.safetensors")).at("input.0");
  const Tensor running = m->named_buffers().at("bn1.running_mean").clone();
  m->train();
  manual_seed(1);
  const Tensor a = m->forward(x);
  manual_seed(2);
  const Tensor b = m->forward(x);
  EXPECT_GT(abs(sub(a, b)).max().item<double>(), 0.0);
  EXPECT_GT(abs(sub(m->named_buffers().at("bn1.running_mean"), running)).max().item<double>(), 0.0);
  m->eval();
  expect_close(m->forward(x), m->forward(x), 0, "eval is deterministic again");
}

TEST(ExportedPrograms, SgdStepsLowerTheLoss) {
  for (const char* name : {"mlp", "cnn_train", "gpt"}) {
    SCOPED_TRACE(name);
    const Reference ref{load(data(std::string(name) + ".safetensors"))};
    nn::ExportedModule m = load_exported(data(std::string(name) + ".pt2"));
    optim::SGD opt(m->parameters(), optim::SGDOptions(0.05));
    const std::vector<Tensor> inputs = ref.with_prefix("input."), weights = ref.with_prefix("loss_weight.");
    const auto loss_now = [&] {
      Tensor loss = zeros({});
      const std::vector<Tensor> out = m->forward(inputs);
      for (size_t k = 0; k < out.size(); ++k) loss = loss + mul(out[k], weights[k]).sum();
      return loss;
    };
    const double first = loss_now().item<double>();
    for (int step = 0; step < 5; ++step) {
      opt.zero_grad();
      loss_now().backward();
      opt.step();
    }
    EXPECT_LT(loss_now().item<double>(), first);
  }
}

TEST(ExportedPrograms, InputsAreCheckedAgainstTheProgram) {
  nn::ExportedModule m = load_exported(data("mlp.pt2"));
  expect_error<ShapeError>([&] { m->forward(randn({3, 5})); },
                           "ExportedModule: input 'x' has size 5 in dimension 1 but the program was exported with 4 there "
                           "(a static dimension; export with a torch.export.Dim to make it dynamic)");
  expect_error<ShapeError>([&] { m->forward(randn({65, 4})); },
                           "ExportedModule: input 'x' has size 65 in dimension 0, outside the range [1, 64] the program "
                           "allows for s77");
  expect_error<ShapeError>([&] { m->forward(randn({4})); },
                           "ExportedModule: input 'x' has 1 dimensions [4] but the program takes 2");
  expect_error<DTypeError>([&] { m->forward(randn({2, 4}, kFloat64)); },
                           "ExportedModule: input 'x' is float64 but the program takes float32");
  expect_error<ValueError>([&] { m->forward(std::vector<Tensor>{}); }, "ExportedModule: the program takes 1 input(s) (x), got 0");
}

// A derived dimension (y's batch exported as 2*b for x's batch b) is checked once x has bound b;
// the program then runs as PyTorch's: lin(cat([x, x])) + y. The size expressions themselves
// (sympy's srepr) are read with Python's floor division and modulo, and what cannot be read
// (another operation, an unbound symbol, a malformed or overflowing expression) goes unchecked.
TEST(ExportedPrograms, DerivedDimensionsAreChecked) {
  nn::ExportedModule m = load_exported(data("derived_dims.pt2"));
  const Tensor x = randn({3, 4}), y = randn({6, 4});
  const auto params = m->named_parameters();
  const Tensor want = nn::functional::linear(cat({x, x}), params["lin.weight"], params["lin.bias"]) + y;
  expect_close(m->forward(std::vector<Tensor>{x, y})[0], want, 1e-6, "derived_dims output");
  EXPECT_EQ(m->forward(std::vector<Tensor>{randn({5, 4}), randn({10, 4})})[0].shape(), (Shape{10, 4}));
  expect_error<ShapeError>([&] { m->forward(std::vector<Tensor>{x, randn({7, 4})}); },
                           "ExportedModule: input 'y' has size 7 in dimension 0, but the program's size there is 2*s77 = 6 "
                           "for the sizes the other dimensions give");
  expect_error<ShapeError>([&] { m->forward(std::vector<Tensor>{randn({1, 4}), randn({2, 4})}); },
                           "ExportedModule: input 'x' has size 1 in dimension 0, outside the range [2, 64] the program "
                           "allows for s77");

  const std::map<std::string, int64_t> bound{{"s0", 7}, {"s1", -3}};
  const auto eval = [&](const std::string& e) { return exported::evaluate_size(e, bound); };
  const auto sym = [](const char* n) { return std::string("Symbol('") + n + "', positive=True, integer=True)"; };
  ASSERT_TRUE(eval("Add(Mul(Integer(2), " + sym("s0") + "), Integer(-1))"));
  EXPECT_EQ(eval("Add(Mul(Integer(2), " + sym("s0") + "), Integer(-1))")->value, 13);
  EXPECT_EQ(eval("Add(Mul(Integer(2), " + sym("s0") + "), Integer(-1))")->text, "2*s0 + -1");
  EXPECT_EQ(eval("FloorDiv(" + sym("s0") + ", Integer(2))")->value, 3);
  EXPECT_EQ(eval("FloorDiv(" + sym("s1") + ", Integer(2))")->value, -2);  // Python: -3 // 2
  EXPECT_EQ(eval("Mod(" + sym("s1") + ", Integer(2))")->value, 1);        // Python: -3 % 2
  EXPECT_EQ(eval("Mul(" + sym("s0") + ", " + sym("s1") + ")")->value, -21);
  for (const std::string& unread :
       {"Pow(" + sym("s0") + ", Integer(2))", "Mul(Integer(2), " + sym("s9") + ")", std::string("Mul(Integer(2)"),
        std::string("Integer(3) trailing"), std::string("FloorDiv(Integer(1), Integer(0))"),
        std::string("Mul(Integer(4611686018427387904), Integer(4))"), std::string(100000, '(')})
    EXPECT_FALSE(eval(unread)) << unread;
  EXPECT_EQ(exported::size_text("FloorDiv(" + sym("s5") + ", Integer(2))"), "(s5)//(2)");
  EXPECT_EQ(exported::symbol_of("s3"), "s3");
  EXPECT_EQ(exported::symbol_of(sym("s77")), "s77");
  EXPECT_EQ(exported::symbol_of("Mul(Integer(2), " + sym("s77") + ")"), "");
  EXPECT_EQ(exported::symbol_of("Integer(3)"), "");
  EXPECT_EQ(summarize_exported(data("derived_dims.pt2")).inputs,
            (std::vector<std::string>{"x: float32 [s77 in 2..64, 4]", "y: float32 [2*s77 in 4..128, 4]"}));
  std::string deep = "Integer(1)";
  for (int k = 0; k < 10000; ++k) deep = "Add(" + deep + ")";
  EXPECT_FALSE(eval(deep));  // nested past the reader's depth: unread, not a stack overflow
}

// ---- hand-made archives: each refusal names the problem --------------------------------------

std::string program_json(const std::string& target, int major = 8) {
  return R"({"schema_version": {"major": )" + std::to_string(major) + R"(, "minor": 3}, "torch_version": "2.15.0",
    "graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}], "outputs": [{"as_tensor": {"name": "y"}}],
      "nodes": [{"target": ")" + target + R"(", "name": "y", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}}],
                 "outputs": [{"as_tensor": {"name": "y"}}], "metadata": {}}],
      "tensor_values": {"x": {"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false,
                              "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 1}],
                              "storage_offset": {"as_int": 0}, "layout": 7}},
      "sym_int_values": {}, "sym_bool_values": {}},
     "signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
                   "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "y"}}}}]},
     "module_call_graph": []},
    "range_constraints": {}})";
}

std::string write_archive(const std::string& name, std::vector<std::pair<std::string, std::string>> members) {
  const std::string path = testing::temp_path("pt2", name);
  testing::write_file(path, testing::zip(members));
  return path;
}

std::vector<std::pair<std::string, std::string>> archive_of(const std::string& program, const std::string& weights = R"({"config": {}})") {
  return {{"m/archive_format", "pt2"}, {"m/byteorder", "little"}, {"m/models/model.json", program},
          {"m/data/weights/model_weights_config.json", weights}};
}

TEST(ExportedPrograms, AHandMadeProgramRuns) {
  const std::string path = write_archive("relu", archive_of(program_json("torch.ops.aten.relu.default")));
  nn::ExportedModule m = load_exported(path);
  expect_close(m->forward(tensor({-1.0f, 2.0f})), tensor({0.0f, 2.0f}), 0, "relu");
}

// A native norm's saved statistics are computed only when something reads them: a program that
// returns native_layer_norm's mean and rstd gets them (here as outputs), one that drops them gets
// the normalised output alone (the reference models' core forms, which match PyTorch above).
TEST(ExportedPrograms, SavedStatisticsAreComputedWhenRead) {
  const std::string program = R"({"schema_version": {"major": 8, "minor": 3}, "torch_version": "2.15.0",
    "graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}],
      "outputs": [{"as_tensor": {"name": "y"}}, {"as_tensor": {"name": "mean"}}, {"as_tensor": {"name": "rstd"}}],
      "nodes": [{"target": "torch.ops.aten.native_layer_norm.default", "name": "ln",
                 "inputs": [{"name": "input", "arg": {"as_tensor": {"name": "x"}}},
                            {"name": "normalized_shape", "arg": {"as_ints": [4]}},
                            {"name": "weight", "arg": {"as_none": true}}, {"name": "bias", "arg": {"as_none": true}},
                            {"name": "eps", "arg": {"as_float": 1e-05}}],
                 "outputs": [{"as_tensor": {"name": "y"}}, {"as_tensor": {"name": "mean"}}, {"as_tensor": {"name": "rstd"}}],
                 "metadata": {}}],
      "tensor_values": {"x": {"dtype": 7, "sizes": [{"as_int": 2}, {"as_int": 4}], "requires_grad": false,
                              "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 4}, {"as_int": 1}],
                              "storage_offset": {"as_int": 0}, "layout": 7}},
      "sym_int_values": {}, "sym_bool_values": {}},
     "signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
                   "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "y"}}}},
                                    {"user_output": {"arg": {"as_tensor": {"name": "mean"}}}},
                                    {"user_output": {"arg": {"as_tensor": {"name": "rstd"}}}}]},
     "module_call_graph": []},
    "range_constraints": {}})";
  nn::ExportedModule m = load_exported(write_archive("layer_norm", archive_of(program)));
  const Tensor x = tensor({1.0f, 2.0f, 3.0f, 6.0f, -1.0f, 0.0f, 1.0f, 4.0f}).view({2, 4});
  const std::vector<Tensor> out = m->forward(std::vector<Tensor>{x});
  ASSERT_EQ(out.size(), 3u);
  expect_close(out[1], tensor({3.0f, 1.0f}).view({2, 1}), 1e-6, "mean");
  expect_close(out[2], rsqrt(tensor({3.5f, 3.5f}).add(1e-5)).view({2, 1}), 1e-5, "rstd");
  expect_close(out[0], (x - out[1]) * out[2], 1e-5, "normalised");
}

TEST(ExportedPrograms, MalformedArchivesAreTypedErrorsNamingTheProblem) {
  const std::string relu = program_json("torch.ops.aten.relu.default");
  const auto expect_io = [](const std::string& path, const std::string& problem) {
    expect_error<IOError>([&] { load_exported(path); }, "cannot load '" + path + "': " + problem);
  };
  std::string path = write_archive("schema7", archive_of(program_json("torch.ops.aten.relu.default", 7)));
  expect_io(path, "m/models/model.json: the program's serialization schema is version 7.3; Locus reads version 8.x: "
                  "re-save it with torch >= 2.5 (torch.export.save)");
  path = write_archive("not_pt2", {{"m/data.pkl", "x"}});
  expect_io(path, "a zip archive without <folder>/archive_format, so not a torch.export program (.pt2)");
  path = write_archive("format", {{"m/archive_format", "pt3"}});
  expect_io(path, "m/archive_format is 'pt3', not 'pt2'");
  path = write_archive("json", archive_of("{\"schema_version\": "));
  EXPECT_THROW(load_exported(path), IOError);
  path = write_archive("field", archive_of(R"({"schema_version": {"major": 8, "minor": 0}, "graph_module": 3})"));
  expect_io(path, "m/models/model.json: graph_module: expected an object");
  const std::string weight = R"({"config": {"w": {"path_name": "weight_0", "is_param": true, "use_pickle": false,
      "tensor_meta": {"dtype": 7, "sizes": [{"as_int": 4}], "requires_grad": true, "device": {"type": "cpu", "index": null},
                      "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7}}}})";
  auto members = archive_of(relu, weight);
  path = write_archive("missing_blob", members);
  expect_io(path, "tensor 'w' is stored in m/data/weights/weight_0, which the archive lacks");
  members.push_back({"m/data/weights/weight_0", std::string(8, '\0')});
  path = write_archive("short_blob", members);
  expect_io(path, "tensor 'w' views elements 0 to 3 of storage 'weight_0', which has only 2 elements");
  std::string pickled = weight;
  pickled.replace(pickled.find("\"use_pickle\": false"), 19, "\"use_pickle\": true");
  path = write_archive("pickle", archive_of(relu, pickled));
  expect_io(path, "m/data/weights/model_weights_config.json: config.w: a pickled payload; Locus reads raw tensor bytes "
                  "only (re-save without pickled constants)");
  path = testing::temp_path("pt2", "truncated");
  const std::string whole = testing::zip(archive_of(relu));
  testing::write_file(path, whole.substr(0, whole.size() / 2));
  EXPECT_THROW(load_exported(path), IOError);
}

TEST(ExportedPrograms, AnUnsupportedOperatorIsNamedWithItsNode) {
  const std::string path = write_archive("unsupported", archive_of(program_json("torch.ops.aten.frobnicate.default")));
  expect_error<NotImplementedError>([&] { load_exported(path); },
                                    "load_exported('" + path + "'): Locus does not support 1 of the program's operators: "
                                    "torch.ops.aten.frobnicate.default (first at node 'y')");
}

}  // namespace
}  // namespace locus
