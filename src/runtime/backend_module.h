#pragma once
// Backend modules: the parts of Locus that need a GPU's libraries (the CUDA backend, the NCCL
// process group) live in their own shared objects, loaded at run time (Note [Backend modules]).

#include <string>
#include <string_view>
#include <vector>

#include "locus/export.h"

// Exported for Locus's tests (tests/runtime/backend_module_test.cpp); not public API.
LOCUS_API_BEGIN

namespace locus::runtime {

/// What looking for a backend module found: its entry point, or why there is none.
struct ModuleLookup {
  /// The module's entry function (`extern "C"`, named by the caller); null when not loaded.
  void* entry = nullptr;
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
/// built with this Locus and returns its function `entry_symbol`. Never throws; repeated calls
/// return the same entry (the loader keeps the module mapped).
ModuleLookup load_backend_module(std::string_view name, const char* entry_symbol) noexcept;

}  // namespace locus::runtime

LOCUS_API_END

/// Every module defines this and answers LOCUS_VERSION_STRING of the build it came from.
#define LOCUS_MODULE_VERSION_SYMBOL "locus_module_version"
