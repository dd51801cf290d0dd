// locus::load of PyTorch's own checkpoints (torch.save's zip format): the files in
// tests/serialize/pytorch_checkpoints/ were written by PyTorch 1.13
// (tests/serialize/make_pytorch_checkpoints.py) beside the same tensors as safetensors, so every
// name, order, dtype, shape and byte is compared with PyTorch's without PyTorch here. Hostile and
// damaged checkpoints are built in the tests with a small zip writer and hand-written pickles.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "locus/locus.h"
#include "tests/serialize/torch_script.h"
#include "tests/test_files.h"
#include "tests/zip_writer.h"

namespace locus {
namespace {

using namespace std::string_literals;
using testing::read_file;
using testing::write_file;
using testing::zip;

std::string fixture(const std::string& name) {
  const auto p = testing::source_path("tests/serialize/pytorch_checkpoints/" + name);
  if (p.empty()) ADD_FAILURE() << "fixture " << name << " not found";
  return p.string();
}
std::string temp_path(const std::string& name) { return testing::temp_path("pt", name); }

// Both dicts hold the same names in the same order, and equal tensors: dtype, shape and bytes.
void expect_same(const OrderedDict<std::string, Tensor>& got, const OrderedDict<std::string, Tensor>& want) {
  std::vector<std::string> got_names, want_names;
  for (const auto& [name, t] : got) got_names.push_back(name);
  for (const auto& [name, t] : want) want_names.push_back(name);
  ASSERT_EQ(got_names, want_names);
  for (const auto& [name, w] : want) {
    const Tensor g = got.at(name).cpu();
    EXPECT_EQ(g.dtype(), w.dtype()) << name;
    EXPECT_EQ(g.shape(), w.shape()) << name;
    EXPECT_TRUE(g.is_contiguous()) << name;
    if (g.dtype() == w.dtype() && g.shape() == w.shape() && w.nbytes()) {
      EXPECT_EQ(std::memcmp(g.data_ptr(), w.data_ptr(), static_cast<size_t>(w.nbytes())), 0) << name;
    }
  }
}

TEST(PytorchCheckpoint, EveryDtypeAndViewEqualsPyTorchs) {
  const auto got = load(fixture("dtypes.pt"));
  expect_same(got, load(fixture("dtypes_expected.safetensors")));
  // The views came out as PyTorch shows them, not as their storages lie.
  EXPECT_EQ(got.at("transposed").shape(), (Shape{4, 3}));
  EXPECT_EQ(got.at("offset_view").shape(), (Shape{2, 2}));
  EXPECT_EQ(got.at("offset_view").data_ptr<float>()[0], 6.0f);
  EXPECT_EQ(got.at("scalar").dim(), 0);
  EXPECT_EQ(got.at("empty").shape(), (Shape{0, 3}));
  // Tied storages: two tensors, each its own copy of its part.
  EXPECT_EQ(got.at("shared_a").data_ptr<float>()[4], got.at("shared_b").data_ptr<float>()[0]);
  EXPECT_NE(got.at("shared_a").data_ptr(), got.at("shared_b").data_ptr());
}

TEST(PytorchCheckpoint, OntoASimDevice) {
  const auto got = load(fixture("dtypes.pt"), Device("sim:0"));
  for (const auto& [name, t] : got) EXPECT_EQ(t.device(), Device("sim:0")) << name;
  expect_same(got, load(fixture("dtypes_expected.safetensors")));
}

TEST(PytorchCheckpoint, SequentialStateDictInPyTorchsOrder) {
  const auto got = load(fixture("sequential.pt"));
  std::vector<std::string> names;
  for (const auto& [name, t] : got) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                                             "1.running_var", "1.num_batches_tracked", "3.weight", "3.bias"}));
  EXPECT_EQ(got.at("1.num_batches_tracked").dtype(), kInt64);
  EXPECT_EQ(got.at("1.num_batches_tracked").item<int64_t>(), 3);
  expect_same(got, load(fixture("sequential_expected.safetensors")));
}

TEST(PytorchCheckpoint, LoadStateDictThenForwardEqualsPyTorch) {
  nn::Sequential model{nn::Linear(4, 5), nn::BatchNorm1d(5), nn::ReLU(), nn::Linear(5, 3)};
  const auto result = model->load_state_dict(load(fixture("sequential.pt")));
  EXPECT_TRUE(result.missing_keys.empty());
  EXPECT_TRUE(result.unexpected_keys.empty());
  model->eval();
  const auto io = load(fixture("sequential_forward.safetensors"));
  NoGradGuard no_grad;
  const Tensor y = model->forward(io.at("input"));
  EXPECT_TRUE(allclose(y, io.at("output"), 1e-5, 1e-6)) << "max |diff| " << (y - io.at("output")).abs().max().item<float>();
}

// LibTorch's spelling reads the same file: torch::load(module, path) goes through locus::load.
TEST(PytorchCheckpoint, TorchLoadIntoAModuleReadsIt) {
  nn::Sequential model{nn::Linear(4, 5), nn::BatchNorm1d(5), nn::ReLU(), nn::Linear(5, 3)};
  locus::load(model, fixture("sequential.pt"));
  const auto expected = load(fixture("sequential_expected.safetensors"));
  for (const auto& [name, t] : model->state_dict()) EXPECT_TRUE(equal(t, expected.at(name))) << name;
}

TEST(PytorchCheckpoint, NestedDictsFlattenAndOtherValuesAreSkipped) {
  const auto got = load(fixture("nested.pt"));
  expect_same(got, load(fixture("nested_expected.safetensors")));
  EXPECT_TRUE(got.contains("model.weight"));
  EXPECT_EQ(got.size(), 2u);  // epoch, name, losses and best are not tensors
}

TEST(PytorchCheckpoint, DeflatedMembers) {
  expect_same(load(fixture("nested_deflated.pt")), load(fixture("nested_expected.safetensors")));
}

TEST(PytorchCheckpoint, DetectedByContentNotByName) {
  const std::string path = temp_path("model.safetensors");
  write_file(path, read_file(fixture("sequential.pt")));
  expect_same(load(path), load(fixture("sequential_expected.safetensors")));
}

// ---- hostile and damaged checkpoints ----------------------------------------------------------

// Pickle pieces, protocol 2.
std::string str(const std::string& s) {
  std::string out = "X";
  for (int b = 0; b < 4; ++b) out += static_cast<char>(s.size() >> (8 * b));
  return out + s;
}
std::string byte(int v) { return std::string("K") + static_cast<char>(v); }

// {"w": a float32 tensor of `size` elements, stride 1, at `offset` in storage `key` of `numel`}.
std::string tensor_pickle(const std::string& key, int numel, int offset, int size) {
  return std::string("\x80\x02}(") + str("w") + "ctorch._utils\n_rebuild_tensor_v2\n(" + "(" + str("storage") +
         "ctorch\nFloatStorage\n" + str(key) + str("cpu") + byte(numel) + "tQ" + byte(offset) + byte(size) + "\x85" +
         byte(1) + "\x85" + "\x89" + "ccollections\nOrderedDict\n)R" + "tR" + "u.";
}

std::string checkpoint(const std::string& pickle, const std::vector<std::pair<std::string, std::string>>& data = {}) {
  std::vector<std::pair<std::string, std::string>> members = {{"archive/data.pkl", pickle}};
  for (const auto& [key, bytes] : data) members.emplace_back("archive/data/" + key, bytes);
  members.emplace_back("archive/version", "3\n");
  return zip(members);
}

// Expects load() of `bytes` to throw IOError "cannot load '<path>': <...problem...>".
void expect_refused(const std::string& bytes, const std::string& problem) {
  const std::string path = temp_path("bad.pt");
  write_file(path, bytes);
  try {
    load(path);
    ADD_FAILURE() << "loaded; expected: " << problem;
  } catch (const IOError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cannot load '" + path + "': ", 0), 0u) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << what;
  }
}

TEST(PytorchCheckpoint, TheTestsZipWriterMakesLoadableCheckpoints) {
  const std::string path = temp_path("ok.pt");
  const float values[] = {1, 2, 3, 4};
  write_file(path, checkpoint(tensor_pickle("0", 4, 1, 3), {{"0", std::string(reinterpret_cast<const char*>(values), 16)}}));
  const auto got = load(path);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at("w").shape(), Shape{3});
  EXPECT_EQ(got.at("w").data_ptr<float>()[0], 2.0f);
  EXPECT_EQ(got.at("w").data_ptr<float>()[2], 4.0f);
}

TEST(PytorchCheckpoint, ABigEndianCheckpointIsByteSwapped) {
  // 1.0f, 2.0f, 3.0f, 4.0f as a big-endian machine's torch.save stores them.
  const std::string big("\x3f\x80\0\0\x40\0\0\0\x40\x40\0\0\x40\x80\0\0", 16);
  const std::string path = temp_path("big.pt");
  write_file(path, zip({{"archive/data.pkl", tensor_pickle("0", 4, 0, 4)}, {"archive/byteorder", "big"}, {"archive/data/0", big}}));
  const auto got = load(path);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got.at("w").data_ptr<float>()[i], static_cast<float>(i + 1));
  expect_refused(zip({{"archive/data.pkl", tensor_pickle("0", 4, 0, 4)}, {"archive/byteorder", "middle"}, {"archive/data/0", big}}),
                 "byteorder is 'middle', not 'little' or 'big'");
}

TEST(PytorchCheckpoint, ATruncatedFile) {
  const std::string whole = read_file(fixture("sequential.pt"));
  expect_refused(whole.substr(0, whole.size() / 2), "not a readable zip archive");
  expect_refused(whole.substr(0, 10), "not a readable zip archive");
}

TEST(PytorchCheckpoint, AForbiddenGlobalIsNeverCalled) {
  const std::string pickle = std::string("\x80\x02}(") + str("w") + "cos\nsystem\n(" + str("touch /tmp/pwned") + "tR" + "u.";
  expect_refused(checkpoint(pickle), "refuses global 'os.system'");
  expect_refused(checkpoint(std::string("\x80\x02") + "cbuiltins\neval\n."), "refuses global 'builtins.eval'");
}

TEST(PytorchCheckpoint, OpcodesOutsideTheListAreNamed) {
  expect_refused(checkpoint(std::string("\x80\x02") + str("os") + str("system") + "\x93."), "refuses opcode 0x93 (STACK_GLOBAL)");
  expect_refused(checkpoint(std::string("\x80\x02(ios\nsystem\n.")), "refuses opcode 0x69 (INST)");
}

TEST(PytorchCheckpoint, AMissingStorage) {
  expect_refused(checkpoint(tensor_pickle("7", 4, 0, 4)), "storage '7' of tensor 'w' is missing");
}

TEST(PytorchCheckpoint, AViewOutsideItsStorage) {
  const std::string four_floats(16, '\0');
  expect_refused(checkpoint(tensor_pickle("0", 4, 0, 5), {{"0", four_floats}}), "views elements 0 to 4 of storage '0', which has only 4");
  expect_refused(checkpoint(tensor_pickle("0", 4, 3, 2), {{"0", four_floats}}), "views elements 3 to 4");
  expect_refused(checkpoint(tensor_pickle("0", 5, 0, 4), {{"0", four_floats}}), "holds 16 bytes; its storage of 5");
}

TEST(PytorchCheckpoint, TheLegacyFormatIsRefusedWithAdvice) {
  try {
    load(fixture("legacy.pt"));
    ADD_FAILURE() << "loaded";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("PyTorch's legacy format"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("re-save it"), std::string::npos) << e.what();
  }
}

TEST(PytorchCheckpoint, MalformedPickles) {
  expect_refused(checkpoint("\x80\x02]q\x00."s), "top-level object is not a dict");
  expect_refused(checkpoint(std::string("\x80\x02}X\xff\xff\xff\x7f")), "truncated: needs 2147483647 bytes");
  expect_refused(checkpoint(std::string("\x80\x02}")), "truncated");
  expect_refused(checkpoint(std::string("\x80\x02}h\x05.")), "memo entry 5, which was never stored");
  expect_refused(checkpoint(std::string("\x80\x02}s.")), "pops an empty stack");
  expect_refused(checkpoint(std::string("\x80\x02}}.")), "STOP with 2 objects");
  expect_refused(checkpoint(std::string("\x80\x02}u.")), "needs a MARK");
  // A dict that holds itself: bounded, not an endless recursion.
  expect_refused(checkpoint("\x80\x02}q\x00"s + str("a") + "h\x00s."s), "nest deeper than 64");
  expect_refused(zip({{"archive/version", "3\n"}}), "without <folder>/data.pkl");
}

TEST(PytorchCheckpoint, AStrideZeroViewCannotInflate) {
  // One element viewed as 200 (expand()): refused, so a tiny file cannot ask for a huge tensor.
  std::string pickle = tensor_pickle("0", 1, 0, 200);
  pickle.replace(pickle.find(std::string("K\x01\x85", 3)), 3, std::string("K\x00\x85", 3));  // stride 1 -> 0
  expect_refused(checkpoint(pickle, {{"0", std::string(4, '\0')}}), "repeats elements of its storage");
}

}  // namespace
}  // namespace locus
