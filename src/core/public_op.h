#pragma once
// Note [Public op names]
// An error names the public function the user called (SPEC section 5), also when that function
// is built from other ops: nn::cross_entropy runs log_softmax, eq, mul and sum, and an error in
// any of them must say 'cross_entropy', not 'eq'. A composite function therefore opens a
// PublicOpScope with its own name; every error builder asks public_op_name() for the name to
// print, which is the outermost scope open on the thread, else the op's own name. Outermost
// wins because the user called the outermost function (cross_entropy calls log_softmax, which
// is public too, but the user wrote cross_entropy).
//
// The scope names the op; it cannot rename arguments (the 'other' of an inner eq is no argument
// of cross_entropy). So a composite first checks its own arguments' devices, dtypes and shapes
// under their public names (ops::PublicOp does the device part), and the inner ops only meet
// operands that pass. The scope is one thread-local pointer saved and restored: no allocation,
// no string, nothing else on the path that does not throw.

#include <string>
#include <string_view>
#include "locus/export.h"

// Exported for the backend modules and tests (Note [Export table]): t_public_op must be one variable in the whole process, not one per shared object.
LOCUS_API_BEGIN

namespace locus::detail {

/// The outermost public function running on this thread, or null. Only PublicOpScope sets it.
inline constinit thread_local const char* t_public_op = nullptr;

/// While alive, errors raised on this thread name `name` instead of the op that raised them,
/// unless an outer scope is already open (outermost wins). `name` must outlive the scope (a
/// string literal). Not copyable; noexcept; costs one thread-local read and write each way.
class PublicOpScope {
 public:
  explicit PublicOpScope(const char* name) noexcept : outer_(t_public_op) {
    if (!outer_) t_public_op = name;
  }
  ~PublicOpScope() { t_public_op = outer_; }
  PublicOpScope(const PublicOpScope&) = delete;
  PublicOpScope& operator=(const PublicOpScope&) = delete;

 private:
  const char* outer_;
};

/// The name an error raised by the op called `own` shows: the outermost open scope's, else `own`.
inline std::string_view public_op_name(std::string_view own) noexcept {
  return t_public_op ? std::string_view(t_public_op) : own;
}

/// "[locus::cross_entropy] ": the prefix of an error raised by the op called `own`.
inline std::string error_prefix(std::string_view own) {
  std::string s = "[locus::";
  s += public_op_name(own);
  s += "] ";
  return s;
}

}  // namespace locus::detail

LOCUS_API_END
