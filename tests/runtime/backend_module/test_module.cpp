// A stand-in backend module for tests/runtime/backend_module_test.cpp, built four times: with
// this version (loads), another version (refused), a dependency that will be missing, and
// without the entry point. It writes its entry by hand rather than with LOCUS_BACKEND_MODULE, to
// claim the version it is told to.
#include "src/runtime/backend_module.h"

#ifdef NEEDS_DEPENDENCY
int locus_test_dependency_value();
#endif

namespace {
// What the module provides: the number 42 (or the dependency's number).
const void* provide_number() {
#ifdef NEEDS_DEPENDENCY
  static const int number = locus_test_dependency_value();
#else
  static const int number = 42;
#endif
  return &number;
}
}  // namespace

extern "C" {

#ifdef NO_ENTRY
__attribute__((visibility("default"))) const void* locus_other_entry() { return provide_number(); }
#else
__attribute__((visibility("default"))) const locus::runtime::ModuleExports* locus_module_entry() {
  static const locus::runtime::ModuleExports exports{TEST_MODULE_VERSION, &provide_number};
  return &exports;
}
#endif

}  // extern "C"
