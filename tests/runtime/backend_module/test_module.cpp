// A stand-in backend module for tests/runtime/backend_module_test.cpp: built three times, with
// this version (loads), another version (refused) and a dependency that will be missing.
#ifdef NEEDS_DEPENDENCY
int locus_test_dependency_value();
#endif

extern "C" {

__attribute__((visibility("default"))) const char* locus_module_version() { return TEST_MODULE_VERSION; }

__attribute__((visibility("default"))) int locus_test_module_entry() {
#ifdef NEEDS_DEPENDENCY
  return locus_test_dependency_value();
#else
  return 42;
#endif
}

}  // extern "C"
