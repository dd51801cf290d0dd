// Reading and parsing the golden files (tests/golden/README.md).

#include "tests/golden/golden_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace locus::golden {

namespace {

std::filesystem::path golden_dir() {
  if (const char* env = std::getenv("LOCUS_GOLDEN_DIR")) return env;
  std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
  if (here.is_absolute() || std::filesystem::exists(here / "elementwise.txt.gz")) return here;
  // A relative __FILE__ (a compiler cache rewriting paths): look upward from the working dir.
  for (auto dir = std::filesystem::current_path(); !dir.empty(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / "tests/golden/elementwise.txt.gz")) return dir / "tests/golden";
    if (dir == dir.parent_path()) break;
  }
  return here;
}

std::string read_gz(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return {};
  std::string data;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) data.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return data;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

DType parse_dtype(const std::string& s) {
  static const std::map<std::string, DType> m = {
      {"bool", kBool},   {"uint8", kUInt8},     {"int8", kInt8},         {"int16", kInt16},     {"int32", kInt32},
      {"int64", kInt64}, {"float16", kFloat16}, {"bfloat16", kBFloat16}, {"float32", kFloat32}, {"float64", kFloat64}};
  auto it = m.find(s);
  if (it == m.end()) throw std::runtime_error("unknown dtype " + s);
  return it->second;
}

Shape parse_list(const std::string& s) {  // "2,3" or "[2,3]"; "" and "[]" are empty
  Shape out;
  std::string body = s;
  if (!body.empty() && body.front() == '[') body = body.substr(1, body.size() - 2);
  size_t i = 0;
  while (i < body.size()) {
    size_t j = body.find(',', i);
    if (j == std::string::npos) j = body.size();
    out.push_back(std::strtoll(body.substr(i, j - i).c_str(), nullptr, 10));
    i = j + 1;
  }
  return out;
}

namespace {

// "in|out|grad [name] dtype shape [key=value ...] values..."
TensorData parse_tensor(const std::vector<std::string>& tok, bool named) {
  TensorData t;
  size_t k = 1;
  if (named) t.name = tok[k++];
  t.dtype = parse_dtype(tok[k++]);
  t.shape = parse_list(tok[k++]);
  for (; k < tok.size() && tok[k].find('=') != std::string::npos; ++k) {
    const std::string& kv = tok[k];
    const std::string key = kv.substr(0, kv.find('=')), value = kv.substr(kv.find('=') + 1);
    if (key == "view") t.view = value;
    if (key == "rg") t.rg = value == "1";
  }
  for (; k < tok.size(); ++k) {
    if (is_floating_point(t.dtype))
      t.f.push_back(std::strtod(tok[k].c_str(), nullptr));
    else
      t.i.push_back(std::strtoll(tok[k].c_str(), nullptr, 10));
  }
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  if (n != t.numel()) throw std::runtime_error("value count does not match the shape");
  return t;
}

std::vector<Case> parse_family(const std::string& text) {
  std::vector<Case> cases;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> tok = split(line);
    try {
      if (tok[0] == "case") {
        Case c;
        c.line = number;
        c.id = tok.at(1);
        c.op = tok.at(2);
        for (size_t k = 3; k < tok.size(); ++k) {
          const size_t eq = tok[k].find('=');
          c.args[tok[k].substr(0, eq)] = eq == std::string::npos ? "" : tok[k].substr(eq + 1);
        }
        cases.push_back(std::move(c));
        continue;
      }
      if (cases.empty()) throw std::runtime_error("data before the first case");
      Case& c = cases.back();
      if (tok[0] == "in") {
        TensorData t = parse_tensor(tok, true);
        if (t.name == "gout")
          c.gout = std::move(t);
        else
          c.ins.push_back(std::move(t));
      } else if (tok[0] == "out") {
        c.outs.push_back(parse_tensor(tok, false));
      } else if (tok[0] == "grad") {
        c.grads.push_back(parse_tensor(tok, true));
      } else if (tok[0] == "err") {
        c.err = true;
        c.err_type = tok.at(1);
        const size_t at = line.find(c.err_type) + c.err_type.size();
        c.err_msg = at < line.size() ? line.substr(at + 1) : "";
      } else {
        throw std::runtime_error("unknown line kind");
      }
    } catch (const std::exception& e) {
      throw std::runtime_error("golden file line " + std::to_string(number) + ": " + e.what());
    }
  }
  return cases;
}

}  // namespace

const std::vector<std::string>& family_names() {
  // Every <family>.txt.gz of the directory, so that a new family is a new file (from a
  // tests/golden/gen_<family>.py) and nothing else.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> found;
    // No throw here: tests are registered from this list in every run of the test binary, also
    // from a directory where the files are not (the launcher's ranks); GoldenFiles.KnownEntries...
    // fails when the list is empty.
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(golden_dir(), error)) {
      const std::string file = entry.path().filename().string();
      const std::string suffix = ".txt.gz";
      if (file.size() > suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
        found.push_back(file.substr(0, file.size() - suffix.size()));
    }
    std::sort(found.begin(), found.end());
    return found;
  }();
  return names;
}

/// The parsed cases of one family, read once per process.
const std::vector<Case>& family(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<Case>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(name);
  if (it == cache.end()) {
    const auto path = golden_dir() / (name + ".txt.gz");
    const std::string text = read_gz(path);
    if (text.empty()) throw std::runtime_error("cannot read " + path.string());
    it = cache.emplace(name, parse_family(text)).first;
  }
  return it->second;
}

}  // namespace locus::golden
