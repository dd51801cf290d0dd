#pragma once
/// \file cloneable.h
/// nn::Cloneable<Derived>: a module that can deep-copy itself (LibTorch's Cloneable), which is
/// what DataParallel needs to put a replica on each device.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <memory>
#include <optional>
#include <typeinfo>

#include "locus/autograd.h"
#include "locus/factories.h"
#include "locus/nn/module.h"

namespace locus::nn {

/// Base of a module class that builds its parameters, buffers and submodules in reset() (and
/// calls reset() from its constructor), LibTorch's way to make a module cloneable. Any module
/// can be cloned without it (Module::clone); this one's clone() copies the object, runs reset()
/// on the copy to give it its own tensors and submodules, then copies the values in. The global
/// random generator is left where it was, so cloning does not change later random draws.
template <class Derived>
class Cloneable : public Module {
 public:
  /// (Re)builds every parameter, buffer and submodule, assigning the members that hold them.
  virtual void reset() = 0;

  std::shared_ptr<Module> clone(std::optional<Device> device = std::nullopt) const override {
    // A class derived from Derived (a user's subclass of nn::LinearImpl) would be sliced to a
    // Derived here; Module::clone copies its own class.
    if (typeid(*this) != typeid(Derived)) return Module::clone(device);
    NoGradGuard no_grad;
    const RngState rng = get_rng_state();
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    copy->clear_registrations();
    copy->reset();
    set_rng_state(rng);
    copy->copy_state_from(*this, device);
    return copy;
  }
};

}  // namespace locus::nn

LOCUS_API_END
