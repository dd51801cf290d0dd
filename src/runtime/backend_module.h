#pragma once
// Backend modules: the parts of Locus that need a GPU's libraries or MPI's (the CUDA backend,
// the NCCL and MPI process groups) live in their own shared objects, loaded at run time (Note
// [Backend modules]).

#include <string>
#include <string_view>
#include <vector>

#include "locus/export.h"

// Exported for Locus's tests (tests/runtime/backend_module_test.cpp); not public API.
LOCUS_API_BEGIN

namespace locus::runtime {

/// What every backend module's one entry point, `locus_module_entry` (LOCUS_BACKEND_MODULE
/// defines it), returns. `version` stays the first field in every release, so that the loader
/// can read a module of another version far enough to refuse it.
struct ModuleExports {
  /// LOCUS_VERSION_STRING of the build the module came from; the core loads only its own.
  const char* version = nullptr;
  /// What the module plugs in, a struct its registration and the module agree on (the CUDA
  /// module: cuda_backend::ModuleEntry; the NCCL and MPI modules: their NcclGroupFactory and
  /// MpiGroupFactory). A function, so that nothing of the module runs before its version was
  /// checked.
  const void* (*provide)() = nullptr;
};

/// What looking for a backend module found: what it provides, or why there is none.
struct ModuleLookup {
  /// What ModuleExports::provide returned for the loaded module; null when none was loaded.
  const void* provides = nullptr;
  /// Where the module was found (empty when it was not).
  std::string path;
  /// Why the module is not loaded, in words for `locus info` and BackendUnavailableError.
  std::string reason;
};

/// The file name of module `name` for this version, e.g. "liblocus_cuda.so.0".
std::string backend_module_file(std::string_view name);
/// Where modules are looked for, in order: each directory of LOCUS_BACKEND_PATH (colon
/// separated), then the directory liblocus itself was loaded from.
std::vector<std::string> backend_module_dirs();
/// Loads module `name` from the first of backend_module_dirs() that has it, checks that it was
/// built with this Locus and returns what it provides. Never throws; repeated calls return the
/// same (the loader keeps the module mapped).
ModuleLookup load_backend_module(std::string_view name) noexcept;

}  // namespace locus::runtime

LOCUS_API_END

/// The one symbol every backend module exports (Note [Backend modules]).
#define LOCUS_MODULE_ENTRY_SYMBOL "locus_module_entry"

/// Defines the module's entry point, in the module's one `*_module.cpp`:
/// `LOCUS_BACKEND_MODULE(provide)`, where `const void* provide()` returns a static object of the
/// type the module's registration reads. Needs LOCUS_VERSION_STRING (src/core/build_info.h).
#define LOCUS_BACKEND_MODULE(provide)                                                        \
  extern "C" LOCUS_API const ::locus::runtime::ModuleExports* locus_module_entry() {        \
    static const ::locus::runtime::ModuleExports exports{LOCUS_VERSION_STRING, &(provide)}; \
    return &exports;                                                                         \
  }
