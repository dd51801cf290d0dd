// The thread's tensor substitution map (tensor_substitution.h).

#include "locus/detail/tensor_substitution.h"

namespace locus::detail {

std::atomic<int> substituting_threads{0};

namespace {
thread_local const TensorSubstitution* active_map = nullptr;
}  // namespace

TensorSubstitutionScope::TensorSubstitutionScope(const TensorSubstitution& map) noexcept : previous_(active_map) {
  active_map = &map;
  if (!previous_) substituting_threads.fetch_add(1, std::memory_order_relaxed);
}

TensorSubstitutionScope::~TensorSubstitutionScope() {
  active_map = previous_;
  if (!previous_) substituting_threads.fetch_sub(1, std::memory_order_relaxed);
}

void substitute_tensor(intrusive_ptr<TensorImpl>& impl) {
  if (!active_map || !impl) return;
  if (const auto it = active_map->find(impl.get()); it != active_map->end()) impl = it->second;
}

}  // namespace locus::detail
