#include "src/autograd/leaf_accumulations.h"

#include <unordered_set>

#include "src/autograd/node.h"

namespace locus::autograd {

std::unordered_map<const locus::detail::TensorImpl*, size_t> leaf_accumulations(const std::vector<Tensor>& outputs) {
  std::unordered_map<const locus::detail::TensorImpl*, size_t> uses;
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> stack;
  for (const Tensor& out : outputs)
    if (out.defined() && out.impl()->grad_fn()) stack.push_back(out.impl()->grad_fn().get());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (auto* acc = dynamic_cast<const AccumulateGrad*>(n)) ++uses[acc->leaf()];
    for (const auto& next : n->next_functions())
      if (next.is_valid()) stack.push_back(next.function.get());
  }
  return uses;
}

}  // namespace locus::autograd
