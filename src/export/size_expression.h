#pragma once
// The sizes a program states as expressions of its symbols (torch.export's derived dimensions,
// "y's batch is 2*b"), evaluated once the inputs have bound the symbols.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "locus/export.h"

// Exported for Locus's tests (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::exported {

/// A size expression's value for some bound symbols, and the expression as a person writes it.
struct EvaluatedSize {
  int64_t value = 0;
  std::string text;  ///< "2*s77"
};

/// The value of `expression`, a size the program records in sympy's srepr form
/// ("Mul(Integer(2), Symbol('s77', positive=True, integer=True))"), with the symbols in `bound`.
/// Integer, Symbol, Add, Mul, FloorDiv and Mod are read; nullopt where the expression uses
/// another operation or a symbol no input dimension bound, or is malformed (the size then goes
/// unchecked, as PyTorch's own module checks only what it can evaluate).
std::optional<EvaluatedSize> evaluate_size(const std::string& expression, const std::map<std::string, int64_t>& bound);

/// `expression` as a person writes it ("2*s77"), for any symbols; nullopt where it uses another
/// operation or is malformed.
std::optional<std::string> size_text(const std::string& expression);

/// The symbol `expression` is alone ("s77" from "s77", as older files write it, or from
/// "Symbol('s77', positive=True, integer=True)"); empty for a number or an expression of symbols.
std::string symbol_of(const std::string& expression);

}  // namespace locus::exported

LOCUS_API_END
