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

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (const char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

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
    const bool sum = head == "Add", product = head == "Mul", floor_div = head == "FloorDiv", mod = head == "Mod";
    if (!sum && !product && !((floor_div || mod) && a.size() == 2)) return std::nullopt;
    EvaluatedSize r;
    if (sum || product) {
      r.text = a[0].text;
      for (size_t k = 1; k < a.size(); ++k) r.text += (sum ? " + " : "*") + a[k].text;
    } else {
      r.text = "(" + a[0].text + (floor_div ? ")//(" : ") % (") + a[1].text + ")";
    }
    if (!bound_) return r;  // the text alone
    if (sum || product) {
      r.value = a[0].value;
      for (size_t k = 1; k < a.size(); ++k)
        if (sum ? __builtin_add_overflow(r.value, a[k].value, &r.value) : __builtin_mul_overflow(r.value, a[k].value, &r.value))
          return std::nullopt;
      return r;
    }
    const int64_t x = a[0].value, y = a[1].value;
    if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt;
    // Python's rounding: toward -inf, and a remainder with the divisor's sign.
    const int64_t q = x / y, m = x % y;
    const bool adjust = m != 0 && ((m < 0) != (y < 0));
    r.value = floor_div ? q - adjust : m + (adjust ? y : 0);
    return r;
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

std::string symbol_of(const std::string& expression) {
  if (is_identifier(expression)) return expression;
  // A Symbol reads as its name; a number, a sum or a product never reads as an identifier.
  const std::optional<std::string> text = size_text(expression);
  return text && is_identifier(*text) ? *text : std::string();
}

}  // namespace locus::exported
