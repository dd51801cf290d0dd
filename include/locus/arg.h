#pragma once
/// \file arg.h
/// LOCUS_ARG: an option with a chainable setter and a getter of the same name, so option
/// structs read like keyword arguments in any order: `SGDOptions(0.1).momentum(0.9)`.

#include "locus/export.h"
LOCUS_API_BEGIN

/// The one definition of an option: its setter, returning `Self` (to chain) as `self`, its getter
/// and its member. LOCUS_ARG and LOCUS_DERIVED_ARG differ only in what the setter returns.
#define LOCUS_OPTION_FIELD(T, name, Self, self) \
 public:                                        \
  Self name(const T& value) {                   \
    name##_ = value;                            \
    return self;                                \
  }                                             \
  const T& name() const noexcept {              \
    return name##_;                             \
  }                                             \
                                                \
 private:                                       \
  T name##_

/// Declares option `name` of type T: `o.name(v)` sets it and returns the options (to chain),
/// `o.name()` reads it. Follow it with its default: `LOCUS_ARG(double, lr) = 0.01;`.
#define LOCUS_ARG(T, name) LOCUS_OPTION_FIELD(T, name, auto&, *this)

/// LOCUS_ARG in an options base that several options structs share (written as a template over
/// `Derived`, the struct that derives from it): the setter returns `Derived&`, not the base, so
/// a chain keeps the options' own type: `Conv2dOptions(1, 8, 3).stride(2).padding(1)` (padding
/// is Conv2dOptions' own). Note [Module and options bases] in docs/design.md.
#define LOCUS_DERIVED_ARG(T, name) LOCUS_OPTION_FIELD(T, name, Derived&, static_cast<Derived&>(*this))

LOCUS_API_END
