// Finding and loading the backend modules.
//
// Note [Backend modules]
// ~~~~~~~~~~~~~~~~~~~~~~
// liblocus itself needs nothing of CUDA or MPI: a program that only uses the CPU maps no CUDA or
// MPI library and runs where none is installed. What does need them is built as modules beside
// it:
//   liblocus_cuda.so.N  the CUDA backend (runtime, kernels, cuBLAS), src/backends/cuda
//   liblocus_nccl.so.N  the NCCL process group, src/distributed/nccl
//   liblocus_mpi.so.N   the MPI process group (Open MPI, 7 libraries), src/distributed/mpi
// Each links against liblocus (one copy of the core's state, shared with the program) and
// exports one C function, locus_module_entry() (LOCUS_BACKEND_MODULE): the LOCUS_VERSION_STRING
// it was built with and what it plugs in (the CUDA module: a DeviceRuntime and a KernelTable,
// src/backends/register_backends.cpp; the NCCL and MPI modules: the factory of their process
// group, src/distributed/process_group.cpp). One loader, load_backend_module, serves every
// module. The core loads a module the first time its device type or backend is asked for, never
// at start-up, and the CUDA one only where a driver is present; everything above src/backends reaches CUDA through DeviceRuntime and the kernel
// table, so nothing else changes when the backend comes from a module. A static liblocus.a
// (BUILD_SHARED_LIBS=OFF) links the same code in and calls the same entry points directly.
// Why a module is missing, in the words locus info prints, is the loader's job: not installed
// (where it looked), a library it needs missing (which one), or built for another version.

#include "src/runtime/backend_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "src/core/build_info.h"

namespace locus::runtime {
namespace {

std::string directory_of(const std::string& file) {
  const auto slash = file.rfind('/');
  return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
}

// The directory of the object this function is linked into: liblocus.so, or the program when
// Locus is linked statically.
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) && info.dli_fname && *info.dli_fname)
    return directory_of(info.dli_fname);
  return {};
}

// dlopen's message for a missing dependency is "<lib>: cannot open shared object file: ...";
// name the library first, which is what the user has to install.
std::string explain_dlopen_failure(const std::string& path, const std::string& error) {
  const auto colon = error.find(": cannot open shared object file");
  if (colon != std::string::npos) {
    const auto before = colon == 0 ? std::string::npos : error.rfind(": ", colon - 1);
    const auto begin = before == std::string::npos ? 0 : before + 2;
    const std::string library = error.substr(begin, colon - begin);
    return path + " needs " + library + ", which is missing (not installed, or not on the library path)";
  }
  return path + " could not be loaded: " + error;
}

}  // namespace

std::string backend_module_file(std::string_view name) {
  return "liblocus_" + std::string(name) + ".so." LOCUS_SOVERSION_STRING;
}

std::vector<std::string> backend_module_dirs() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("LOCUS_BACKEND_PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  if (std::string own = own_directory(); !own.empty()) dirs.push_back(std::move(own));
  return dirs;
}

ModuleLookup load_backend_module(std::string_view name) noexcept {
  ModuleLookup found;
  try {
    const std::string file = backend_module_file(name);
    const std::vector<std::string> dirs = backend_module_dirs();
    for (const std::string& dir : dirs) {
      const std::string path = dir + "/" + file;
      if (access(path.c_str(), F_OK) != 0) continue;
      found.path = path;
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char* error = dlerror();
        found.reason = explain_dlopen_failure(path, error ? error : "unknown error");
        return found;
      }
      auto entry = reinterpret_cast<const ModuleExports* (*)()>(dlsym(handle, LOCUS_MODULE_ENTRY_SYMBOL));
      const ModuleExports* exports = entry ? entry() : nullptr;
      if (!exports || !exports->version || !exports->provide) {
        found.reason = path + " is not a Locus backend module (it has no " LOCUS_MODULE_ENTRY_SYMBOL ")";
      } else if (std::strcmp(exports->version, LOCUS_VERSION_STRING) != 0) {
        found.reason = path + " was built for Locus " + exports->version + ", and this is Locus " LOCUS_VERSION_STRING;
      } else {
        found.provides = exports->provide();
        return found;
      }
      dlclose(handle);
      return found;
    }
    std::string looked;
    for (const std::string& dir : dirs) looked += (looked.empty() ? "" : ", ") + dir;
    found.reason = "the " + std::string(name) + " backend module (" + file + ") is not installed: looked in " +
                   (looked.empty() ? std::string("no directory") : looked) + " (LOCUS_BACKEND_PATH adds directories)";
  } catch (...) {
    found.reason = "looking for the " + std::string(name) + " backend module ran out of memory";
  }
  return found;
}

}  // namespace locus::runtime
