// IValue's kind names and its error (include/locus/ivalue.h).

#include "locus/ivalue.h"

#include "locus/errors.h"

namespace locus {

std::string IValue::tagKind() const {
  static const char* const kKinds[] = {"None", "Bool", "Int", "Double", "String", "Tensor", "IntList", "DoubleList", "TensorList"};
  return kKinds[value_.index()];
}

void IValue::wrong_kind(const char* expected) const {
  throw ValueError("[locus::IValue] expected " + std::string(expected) + " but got " + tagKind());
}

}  // namespace locus
