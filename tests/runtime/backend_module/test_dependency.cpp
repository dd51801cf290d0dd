// The library one stand-in module needs and will not find (tests/runtime/backend_module_test.cpp).
__attribute__((visibility("default"))) int locus_test_dependency_value() { return 7; }
