#pragma once
/// \file arg.h
/// LOCUS_ARG: an option with a chainable setter and a getter of the same name, so option
/// structs read like keyword arguments in any order: `SGDOptions(0.1).momentum(0.9)`.

#include "locus/export.h"
LOCUS_API_BEGIN

/// Declares option `name` of type T: `o.name(v)` sets it and returns the options (to chain),
/// `o.name()` reads it. Follow it with its default: `LOCUS_ARG(double, lr) = 0.01;`.
#define LOCUS_ARG(T, name)                      \
 public:                                        \
  auto& name(const T& value) {                  \
    name##_ = value;                            \
    return *this;                               \
  }                                             \
  const T& name() const noexcept {              \
    return name##_;                             \
  }                                             \
                                                \
 private:                                       \
  T name##_

/// LOCUS_ARG in an options base that several options structs share (written as a template over
/// `Derived`, the struct that derives from it): the setter returns `Derived&`, not the base, so
/// a chain keeps the options' own type: `Conv2dOptions(1, 8, 3).stride(2).padding(1)` (padding
/// is Conv2dOptions' own). Note [Module and options bases] in docs/design.md.
#define LOCUS_DERIVED_ARG(T, name)               \
 public:                                         \
  Derived& name(const T& value) {                \
    name##_ = value;                             \
    return static_cast<Derived&>(*this);         \
  }                                              \
  const T& name() const noexcept {               \
    return name##_;                              \
  }                                              \
                                                 \
 private:                                        \
  T name##_

LOCUS_API_END
