// Differential test against PyTorch 1.13: replays the cases that tests/golden/generate.py
// recorded with PyTorch (tests/golden/<family>.txt.gz, format in tests/golden/README.md) on every
// device, one test per family. PyTorch is needed only to regenerate the files, never to run this.

#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/golden/golden_file.h"
#include "tests/golden/golden_ops.h"
#include "tests/golden/golden_values.h"
#include "tests/test_util.h"

namespace locus::golden {
namespace {

// ---- known differences ------------------------------------------------------------------------
//
// A case id pattern ('*' matches any run of characters) with its reason. kDeviations are
// differences Locus makes on purpose (docs/design.md, "Deviations from PyTorch", and the public
// headers). kFindings are differences nobody decided on: bugs to fix in Locus (or to move to
// kDeviations, with a line in docs/design.md), listed so that the suite passes meanwhile. The
// cases of both still run, and an entry none of whose cases differs any more fails the test, so
// that the entry goes with the fix. `devices` limits an entry to some devices (comma-separated,
// empty: all).

struct Known {
  const char* pattern;
  const char* reason;
  const char* devices = "";
};

const std::vector<Known> kDeviations = {
    {"softmax/dim*/uint8", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"softmax/dim*/int*", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"softmax/dim*/bool", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"log_softmax/dim*/uint8", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"log_softmax/dim*/int*", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"log_softmax/dim*/bool", "ops.h: integer and bool inputs give float32 (PyTorch CPU: not implemented)"},
    {"where/uint8_condition_error",
     "elementwise.h: the condition must be bool (PyTorch 1.13 still takes uint8 with a deprecation warning)"},
    {"*/zero_division/*",
     "elementwise.h: integer division by zero gives 0 on cuda (raising would need a device-host wait per op)", "cuda:0"},
    {"hypot/*",
     "docs/design.md: CUDA's hypot (within 2 ulp) rounds a result at the largest finite double up to inf, as "
     "PyTorch's CUDA build does (PyTorch's CPU returns the largest finite value)",
     "cuda:0"},
    {"instance_norm/affine/empty/*",
     "docs/design.md: an empty batch gives an empty result with weight and bias as without them (PyTorch 1.13 raises "
     "IndexError from inside its own kernel, select(): index 0 out of range)"},
};

const std::vector<Known> kFindings = {};

// Cases that run into undefined behaviour inside Locus (found by the UBSan build, which aborts
// on it): findings too, but they are skipped in sanitizer builds so that the rest can run. Other
// builds run them (their values happen to match PyTorch's).
const std::vector<Known> kUndefinedInLocus = {};

constexpr bool sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// ---- running a case -----------------------------------------------------------------------------

bool glob(const char* p, const char* s) {
  if (*p == 0) return *s == 0;
  if (*p == '*') return glob(p + 1, s) || (*s != 0 && glob(p, s + 1));
  return *s != 0 && *p == *s && glob(p + 1, s + 1);
}

bool applies(const Known& k, const std::string& device) {
  if (!*k.devices) return true;
  std::string list = std::string(",") + k.devices + ",";
  return list.find("," + device + ",") != std::string::npos;
}

std::string error_class(const std::exception& e) {
  if (dynamic_cast<const IndexError*>(&e)) return "IndexError";
  if (dynamic_cast<const ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const DTypeError*>(&e)) return "DTypeError";
  if (dynamic_cast<const DeviceMismatchError*>(&e)) return "DeviceMismatchError";
  if (dynamic_cast<const NotImplementedError*>(&e)) return "NotImplementedError";
  if (dynamic_cast<const Error*>(&e)) return "locus::Error";
  return "std::exception (not a locus::Error)";
}

std::string first_line(const std::string& s) { return s.substr(0, std::min(s.find('\n'), size_t{160})); }

// The optimizers update their parameters, and batch norm its running statistics, in place: an
// expanded tensor cannot hold that (one element stands for a whole column), so those inputs keep
// their recorded layout in the Expanded runs.
bool written_in_place(const Case& c, const TensorData& t) {
  static const std::set<std::string> kOptimizerOps = {"optimizer", "optimizer_groups", "sgd", "adam", "adamw",
                                                      "weight_decay"};
  return kOptimizerOps.count(c.op) || t.name == "running_mean" || t.name == "running_var";
}

// The layout input `t` of case `c` takes in the runs of `layout`.
Layout layout_of(const Case& c, const TensorData& t, Layout layout) {
  return layout == Layout::Expanded && written_in_place(c, t) ? Layout::AsRecorded : layout;
}

/// Runs one case on `device` with its inputs laid out as `layout`: empty when Locus agrees with
/// PyTorch, else the difference.
std::string run_case(const Case& c, const std::string& device, const std::string& family_name,
                     Layout layout = Layout::AsRecorded) {
  const auto& table = ops();
  auto op = table.find(c.op);
  if (op == table.end()) return "no Locus call for op '" + c.op + "' in the op table";
  const Device dev(device);
  Ctx ctx{c, {}, dev};
  Outs outs;
  try {
    for (const TensorData& t : c.ins) ctx.in.push_back(device_tensor(t, dev, layout_of(c, t, layout)));
    outs = op->second(ctx);
    if (c.gout && !c.err) outs.at(0).backward(device_tensor(*c.gout, dev, layout));
    // cuda checks indices and class targets on the device and raises at the next
    // synchronization (Note [Deferred checks]): make it happen inside this case.
    if (dev.is_cuda()) cuda::synchronize();
  } catch (const std::exception& e) {
    const std::string got = error_class(e);
    if (!c.err) return "Locus threw " + got + ": " + first_line(e.what());
    if (!dynamic_cast<const Error*>(&e))
      return "PyTorch raised " + c.err_type + "; Locus threw " + got + ": " + first_line(e.what());
    // PyTorch's IndexError must be Locus's IndexError, and its ValueError Locus's ValueError, or
    // ShapeError where PyTorch reports a shape mismatch as ValueError (the losses' batch sizes).
    const bool class_ok = c.err_type == "IndexError"   ? got == "IndexError"
                          : c.err_type == "ValueError" ? (got == "ValueError" || got == "ShapeError")
                                                       : true;
    if (!class_ok)
      return "PyTorch raised " + c.err_type + " (" + c.err_msg + "); Locus threw " + got + ": " + first_line(e.what());
    return {};
  }
  if (c.err) {
    std::ostringstream os;
    os << "PyTorch raised " << c.err_type << " (" << c.err_msg << "); Locus returned";
    for (const Tensor& t : outs)
      os << " " << (t.defined() ? std::string(dtype_name(t.dtype())) : "undefined")
         << (t.defined() ? t.shape() : Shape{});
    return os.str();
  }
  const bool exact = family_name == "elementwise" || family_name == "factories" ||
                     (family_name == "shape" && c.op != "matmul" && c.op != "mm");
  const Rounding rounding = family_name == "transformer" || family_name == "rnn" ? Rounding::Chains
                            : exact                      ? Rounding::Exact
                                                         : Rounding::Accumulates;
  // The sign of a zero result is checked where IEEE 754 defines it (maximum(0.0, -0.0) or
  // gelu(-0.0) are not: PyTorch's own vectorized and scalar paths disagree there).
  static const std::set<std::string> kSignedZeroOps = {"add",  "sub",   "mul",   "neg",  "abs",  "floor",
                                                       "ceil", "round", "trunc", "rsub", "radd", "rmul",
                                                       "rdiv", "to",    "add_",  "sub_", "mul_", "div_"};
  const bool signed_zeros =
      (kSignedZeroOps.count(c.op) || (c.op == "div" && !c.args.count("rounding"))) && family_name != "autograd";
  // Gradient cases check the first output only (max along a dim: the values).
  const size_t n_out = c.gout ? std::min<size_t>(1, outs.size()) : outs.size();
  if (n_out != c.outs.size())
    return "Locus gave " + std::to_string(outs.size()) + " outputs, PyTorch " + std::to_string(c.outs.size());
  for (size_t k = 0; k < n_out; ++k) {
    std::string diff;
    try {
      diff = compare(c.outs[k], outs[k], rounding, signed_zeros);
    } catch (const std::exception& e) {
      diff = std::string("reading the result threw: ") + e.what();
    }
    if (!diff.empty()) {
      std::string where = n_out > 1 ? "output " + std::to_string(k) + ": " : "";
      // The inputs at the first differing element, when they line up with the output.
      const size_t at = diff.rfind("element ", 0) == 0 ? std::strtoull(diff.c_str() + 8, nullptr, 10) : SIZE_MAX;
      std::ostringstream os;
      for (const TensorData& t : c.ins) {
        if (at == SIZE_MAX || t.numel() != c.outs[k].numel()) continue;
        os << (os.tellp() ? ", " : " (inputs there: ") << t.name << "="
           << (is_floating_point(t.dtype) ? fmt(t.f[at]) : std::to_string(t.i[at]));
      }
      if (os.tellp()) os << ")";
      return where + diff + os.str();
    }
  }
  for (const TensorData& g : c.grads) {
    size_t k = 0;
    while (k < c.ins.size() && c.ins[k].name != g.name) ++k;
    if (k == c.ins.size()) return "gradient of unknown input " + g.name;
    const Tensor grad = ctx.in[k].grad();
    if (!grad.defined()) return "grad of " + g.name + ": Locus left it undefined";
    const std::string diff =
        compare(g, grad, rounding == Rounding::Chains ? Rounding::Chains : Rounding::Accumulates, false);
    if (!diff.empty()) return "grad of " + g.name + ": " + diff;
  }
  return {};
}

std::string case_summary(const Case& c) {
  std::ostringstream os;
  os << "[" << c.id << "] " << c.op;
  for (const auto& [k, v] : c.args) os << " " << k << "=" << v;
  os << " (";
  for (size_t k = 0; k < c.ins.size(); ++k) os << (k ? ", " : "") << c.ins[k].name << ": " << describe(c.ins[k]);
  os << "; line " << c.line << ")";
  return os.str();
}

// A test parameter "<family>@<device>".
class FamilyOnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  std::string family_name() const { return GetParam().substr(0, GetParam().find('@')); }
  std::string device() const { return GetParam().substr(GetParam().find('@') + 1); }
};

// One test per family and device: every tests/golden/*.txt.gz is a family.
class Golden : public FamilyOnDevice {
 protected:
  void run_family() {
    const std::string name = family_name(), device = this->device();
    const std::vector<Case>* cases = nullptr;
    try {
      cases = &family(name);
    } catch (const std::exception& e) {
      FAIL() << e.what() << " (set LOCUS_GOLDEN_DIR to tests/golden if the source tree moved)";
    }
    ASSERT_FALSE(cases->empty()) << name << " has no cases";
    std::set<const Known*> reproduced, relevant;
    int deviations = 0, known = 0, failures = 0, undefined = 0;
    // LOCUS_GOLDEN_VERBOSE=1 prints every difference, known ones included, one line each.
    const bool verbose = std::getenv("LOCUS_GOLDEN_VERBOSE") != nullptr;
    // LOCUS_GOLDEN_TRACE=1 prints each case id before running it (to find a case that aborts).
    const bool trace = std::getenv("LOCUS_GOLDEN_TRACE") != nullptr;
    for (const Case& c : *cases) {
      if (trace) std::fprintf(stderr, "[ case     ] %s\n", c.id.c_str());
      if (sanitizer_build() && std::any_of(kUndefinedInLocus.begin(), kUndefinedInLocus.end(), [&](const Known& k) {
            return applies(k, device) && glob(k.pattern, c.id.c_str());
          })) {
        ++undefined;
        continue;
      }
      const Known* entry = nullptr;
      bool deviation = false;
      for (const Known& k : kDeviations)
        if (!entry && applies(k, device) && glob(k.pattern, c.id.c_str())) entry = &k, deviation = true;
      for (const Known& k : kFindings)
        if (!entry && applies(k, device) && glob(k.pattern, c.id.c_str())) entry = &k;
      if (entry) relevant.insert(entry);
      const std::string diff = run_case(c, device, name);
      if (diff.empty()) continue;
      if (verbose)
        std::printf("[ differs  ] %s on %s: %s%s\n", case_summary(c).c_str(), device.c_str(), diff.c_str(),
                    !entry      ? ""
                    : deviation ? " (deviation)"
                                : " (known finding)");
      if (entry) {
        reproduced.insert(entry);
        ++(deviation ? deviations : known);
        continue;
      }
      if (++failures <= 40 && !verbose) ADD_FAILURE() << case_summary(c) << " on " << device << ": " << diff;
    }
    if (failures > 40 || (verbose && failures))
      ADD_FAILURE() << failures - (verbose ? 0 : 40) << " more cases differ from PyTorch";
    for (const Known* k : relevant)
      if (!reproduced.count(k))
        ADD_FAILURE() << "known-difference entry '" << k->pattern << "' (" << k->reason << ") no longer differs on "
                      << device << ": delete it";
    std::printf(
        "[ golden   ] %s on %s: %zu cases, %d known findings, %d deviations%s\n", name.c_str(), device.c_str(),
        cases->size(), known, deviations,
        undefined ? (", " + std::to_string(undefined) + " skipped (undefined behaviour in Locus)").c_str() : "");
  }
};

// ---- layouts -----------------------------------------------------------------------------------
//
// Note [Golden layouts]
// A kernel sees addresses, not tensors (Note [Kernel operands] in src/ops/kernel_operand.h), so
// a kernel that assumes a layout it was not given reads the wrong elements, or freed memory, with
// no error. The layout runs replay every case of every family with tensors once per Layout, with
// the inputs (and the backward's gout) that the file gives no view of their own laid out that
// way: the values, and so PyTorch's results and gradients, stay the same. A run is made only
// where at least one tensor takes the layout. The `layouts` family adds the cases this cannot
// make from the others: inputs with equal rows (Expanded) and empty batches.

// lr_scheduler's cases hold no tensors.
bool has_layout_runs(const std::string& family_name) { return family_name != "lr_scheduler"; }

// view and view_as refuse non-contiguous inputs by definition (as PyTorch's do).
bool layout_sensitive(const std::string& op) { return op == "view" || op == "view_as"; }

bool takes_layout(const Case& c, Layout layout) {
  if (c.gout && can_lay_out(*c.gout, layout)) return true;
  return std::any_of(c.ins.begin(), c.ins.end(),
                     [&](const TensorData& t) { return can_lay_out(t, layout_of(c, t, layout)); });
}

class GoldenLayouts : public FamilyOnDevice {
 protected:
  void run_family() {
    const std::string name = family_name(), device = this->device();
    const std::vector<Case>& cases = family(name);
    constexpr Layout kLayouts[] = {Layout::Transposed, Layout::Stepped, Layout::Offset, Layout::Expanded,
                                   Layout::ChannelsLast};
    int runs[std::size(kLayouts)] = {}, failures = 0;
    for (const Case& c : cases) {
      if (layout_sensitive(c.op)) continue;
      // Known differences are counted by the Golden test; their cases differ here too.
      const auto known = [&](const Known& k) { return applies(k, device) && glob(k.pattern, c.id.c_str()); };
      if (std::any_of(kDeviations.begin(), kDeviations.end(), known) ||
          std::any_of(kFindings.begin(), kFindings.end(), known) ||
          (sanitizer_build() && std::any_of(kUndefinedInLocus.begin(), kUndefinedInLocus.end(), known)))
        continue;
      for (size_t l = 0; l < std::size(kLayouts); ++l) {
        if (!takes_layout(c, kLayouts[l])) continue;
        ++runs[l];
        const std::string diff = run_case(c, device, name, kLayouts[l]);
        if (!diff.empty() && ++failures <= 40)
          ADD_FAILURE() << case_summary(c) << " on " << device << ", inputs " << layout_name(kLayouts[l]) << ": " << diff;
      }
    }
    if (failures > 40) ADD_FAILURE() << failures - 40 << " more layout runs differ from PyTorch";
    std::printf("[ layouts  ] %s on %s: %zu cases; runs: %d transposed, %d stepped, %d offset, %d expanded, "
                "%d channels-last\n", name.c_str(), device.c_str(), cases.size(), runs[0], runs[1], runs[2], runs[3],
                runs[4]);
  }
};

std::vector<std::string> families_on_devices() {
  std::vector<std::string> params;
  for (const std::string& name : family_names())
    for (const std::string& device : testing::value_devices()) params.push_back(name + "@" + device);
  return params;
}

std::vector<std::string> layout_families_on_devices() {
  std::vector<std::string> params;
  for (const std::string& param : families_on_devices())
    if (has_layout_runs(param.substr(0, param.find('@')))) params.push_back(param);
  return params;
}

std::string family_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (c == ':' || c == '@' || c == '-') c = '_';
  return name;
}

TEST_P(Golden, Family) { run_family(); }
TEST_P(GoldenLayouts, Family) { run_family(); }

INSTANTIATE_TEST_SUITE_P(Families, Golden, ::testing::ValuesIn(families_on_devices()), family_test_name);
INSTANTIATE_TEST_SUITE_P(Families, GoldenLayouts, ::testing::ValuesIn(layout_families_on_devices()), family_test_name);

// Every known-difference entry names at least one case, and every case has a Locus call.
TEST(GoldenFiles, KnownEntriesAndOpsExist) {
  std::vector<const Known*> entries;
  for (const Known& k : kDeviations) entries.push_back(&k);
  for (const Known& k : kFindings) entries.push_back(&k);
  for (const Known& k : kUndefinedInLocus) entries.push_back(&k);
  std::set<const Known*> matched;
  ASSERT_FALSE(family_names().empty()) << "no golden files found (set LOCUS_GOLDEN_DIR to tests/golden if the source tree moved)";
  for (const std::string& name : family_names()) {
    const std::vector<Case>* cases = nullptr;
    try {
      cases = &family(name);
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    for (const Case& c : *cases) {
      EXPECT_TRUE(ops().count(c.op)) << "no Locus call for op '" << c.op << "' (" << c.id << ")";
      for (const Known* k : entries)
        if (glob(k->pattern, c.id.c_str())) matched.insert(k);
    }
  }
  for (const Known* k : entries) EXPECT_TRUE(matched.count(k)) << "'" << k->pattern << "' matches no golden case";
}

}  // namespace
}  // namespace locus::golden
