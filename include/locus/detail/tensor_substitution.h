#pragma once
/// \file tensor_substitution.h
/// A thread's map from tensors to the tensors that copies of them should refer to instead,
/// which module replication installs while it copy-constructs a module (Note [Replicating
/// modules], src/nn/replicate.cpp). Tensor's copy constructor consults it.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <atomic>
#include <unordered_map>

#include "locus/detail/intrusive_ptr.h"
#include "locus/detail/tensor_impl.h"

namespace locus::detail {

/// Original tensor -> the tensor its copies refer to while the map is active.
using TensorSubstitution = std::unordered_map<const TensorImpl*, intrusive_ptr<TensorImpl>>;

/// How many threads have a substitution map active. Tensor's copy constructor reads it first
/// (relaxed), so a copy pays one load and a predictable branch when nobody is replicating.
extern std::atomic<int> substituting_threads;

/// Makes `map` this thread's substitution map for the scope's lifetime (the previous one, if
/// any, comes back after). The map must outlive the scope.
class TensorSubstitutionScope {
 public:
  explicit TensorSubstitutionScope(const TensorSubstitution& map) noexcept;
  ~TensorSubstitutionScope();
  TensorSubstitutionScope(const TensorSubstitutionScope&) = delete;
  TensorSubstitutionScope& operator=(const TensorSubstitutionScope&) = delete;

 private:
  const TensorSubstitution* previous_;
};

/// Replaces `impl` by its substitute when this thread's active map has one (the slow path of
/// Tensor's copy constructor, taken only while some thread is substituting).
void substitute_tensor(intrusive_ptr<TensorImpl>& impl);

}  // namespace locus::detail

LOCUS_API_END
