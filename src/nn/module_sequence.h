#pragma once
// What nn::Sequential and nn::ModuleList share: a list of submodules registered under their
// positions ("0", "1", ...; Note [Container names] in containers.cpp).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "locus/device.h"
#include "locus/errors.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/module.h"

namespace locus::nn::detail {

/// Appends `module` to a container's list `modules`, registered under its position by
/// `register_as(name, module)` (the container's register_module, which only it may call).
/// ValueError naming `container` ("Sequential") for an empty module.
template <class Register>
void append_indexed(std::vector<std::shared_ptr<Module>>& modules, const AnyModule& module, const char* container,
                    Register&& register_as) {
  if (!module.ptr()) throw ValueError(std::string(container) + ": module " + std::to_string(modules.size()) + " is empty");
  register_as(std::to_string(modules.size()), module.ptr());
  modules.push_back(module.ptr());
}

/// A new `Container` (SequentialImpl or ModuleListImpl) holding a clone of each of `modules`
/// (on `device` when given), in order, in `training` mode.
template <class Container>
std::shared_ptr<Module> clone_indexed(const std::vector<std::shared_ptr<Module>>& modules, bool training,
                                      std::optional<Device> device) {
  auto copy = std::make_shared<Container>();
  for (const auto& m : modules) copy->push_back(AnyModule(m->clone(device)));
  copy->train(training);
  return copy;
}

}  // namespace locus::nn::detail
