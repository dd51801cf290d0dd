// A reader of sympy's srepr for the sizes of torch.export programs (size_expression.h): a
// recursive descent over Head(argument, ...) calls, whose arguments are calls, integers, quoted
// names or keyword flags (`positive=True`, skipped). Nothing here throws: a size it cannot read
// is a size it does not check.

#include "src/export/size_expression.h"

#include <cctype>
#include <cstdint>
#include <vector>

namespace locus::exported {
namespace {

class Reader {
 public:
  // With `bound` null the reader gives the text alone (every value 0) and takes any symbol.
  Reader(const std::string& s, const std::map<std::string, int64_t>* bound) : s_(s), bound_(bound) {}

  std::optional<EvaluatedSize> expression() {
    // A file's expression nests a few levels; a fuzzed one must not exhaust the stack.
    if (++depth_ > kMaxDepth) return std::nullopt;
    std::optional<EvaluatedSize> r = call();
    --depth_;
    return r;
  }

  bool at_end() {
    skip_spaces();
    return pos_ == s_.size();
  }

 private:
  static constexpr int kMaxDepth = 64;

  std::optional<EvaluatedSize> call() {
    skip_spaces();
    const std::string head = name();
    if (head.empty() || !take('(')) return std::nullopt;
    if (head == "Integer") {
      const std::optional<int64_t> v = integer();
      if (!v || !close()) return std::nullopt;
      return EvaluatedSize{*v, std::to_string(*v)};
    }
    if (head == "Symbol") {
      skip_spaces();
      if (!take('\'')) return std::nullopt;
      const std::string symbol = name();
      if (symbol.empty() || !take('\'') || !skip_flags()) return std::nullopt;
      if (!bound_) return EvaluatedSize{0, symbol};
      const auto it = bound_->find(symbol);
      if (it == bound_->end()) return std::nullopt;
      return EvaluatedSize{it->second, symbol};
    }
    std::vector<EvaluatedSize> args;
    for (bool first = true;; first = false) {
      skip_spaces();
      if (take(')')) break;
      if (!first && !take(',')) return std::nullopt;
      std::optional<EvaluatedSize> a = expression();
      if (!a) return std::nullopt;
      args.push_back(std::move(*a));
    }
    if (args.empty()) return std::nullopt;
    return combine(head, args);
  }

  std::optional<EvaluatedSize> combine(const std::string& head, const std::vector<EvaluatedSize>& a) const {
    if (!bound_) {  // the text alone
      if ((head == "Add" || head == "Mul")) {
        std::string text = a[0].text;
        for (size_t k = 1; k < a.size(); ++k) text += (head == "Add" ? " + " : "*") + a[k].text;
        return EvaluatedSize{0, text};
      }
      if ((head == "FloorDiv" || head == "Mod") && a.size() == 2)
        return EvaluatedSize{0, "(" + a[0].text + (head == "FloorDiv" ? ")//(" : ") % (") + a[1].text + ")"};
      return std::nullopt;
    }
    if (head == "Add" || head == "Mul") {
      EvaluatedSize r = a[0];
      for (size_t k = 1; k < a.size(); ++k) {
        const bool overflow = head == "Add" ? __builtin_add_overflow(r.value, a[k].value, &r.value)
                                            : __builtin_mul_overflow(r.value, a[k].value, &r.value);
        if (overflow) return std::nullopt;
        r.text += (head == "Add" ? " + " : "*") + a[k].text;
      }
      return r;
    }
    if ((head == "FloorDiv" || head == "Mod") && a.size() == 2 && a[1].value != 0 &&
        !(a[0].value == INT64_MIN && a[1].value == -1)) {
      const int64_t q = a[0].value / a[1].value, m = a[0].value % a[1].value;
      // Python's rounding: toward -inf, and a remainder with the divisor's sign.
      const bool adjust = m != 0 && ((m < 0) != (a[1].value < 0));
      const int64_t value = head == "FloorDiv" ? q - adjust : m + (adjust ? a[1].value : 0);
      return EvaluatedSize{value, "(" + a[0].text + (head == "FloorDiv" ? ")//(" : ") % (") + a[1].text + ")"};
    }
    return std::nullopt;
  }

  void skip_spaces() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool take(char c) {
    skip_spaces();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  std::string name() {
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  std::optional<int64_t> integer() {
    skip_spaces();
    const bool negative = take('-');
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      if (v > (INT64_MAX - 9) / 10) return std::nullopt;
      v = v * 10 + (s_[pos_++] - '0');
    }
    if (pos_ == start) return std::nullopt;
    return negative ? -v : v;
  }
  bool close() { return take(')'); }
  // The rest of a Symbol's arguments: `, name=Value` pairs, then ')'.
  bool skip_flags() {
    while (take(',')) {
      skip_spaces();
      if (name().empty() || !take('=')) return false;
      skip_spaces();
      if (name().empty()) return false;
    }
    return close();
  }

  const std::string& s_;
  const std::map<std::string, int64_t>* bound_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::optional<EvaluatedSize> evaluate_size(const std::string& expression, const std::map<std::string, int64_t>& bound) {
  Reader r(expression, &bound);
  std::optional<EvaluatedSize> v = r.expression();
  if (!v || !r.at_end()) return std::nullopt;
  return v;
}

std::optional<std::string> size_text(const std::string& expression) {
  Reader r(expression, nullptr);
  std::optional<EvaluatedSize> v = r.expression();
  if (!v || !r.at_end()) return std::nullopt;
  return v->text;
}

}  // namespace locus::exported
