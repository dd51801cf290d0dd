// The backend-module loader (Note [Backend modules]): where it looks, what it says when a module
// is missing, needs a missing library or comes from another version; the real modules of this
// build load; and a run without an NVIDIA driver maps no CUDA library.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "locus/cuda.h"
#include "locus/distributed.h"
#include "locus/factories.h"
#include "src/runtime/backend_module.h"
#include "tests/test_util.h"

namespace locus {
namespace {

namespace fs = std::filesystem;

// Where the stand-in modules were built; scripts/gpu-check.sh points LOCUS_TEST_MODULES at the
// copies in its pack.
fs::path stand_in_modules() {
  const char* moved = getenv("LOCUS_TEST_MODULES");
  return moved ? fs::path(moved) : fs::path(LOCUS_TEST_MODULES);
}

// A fresh directory with the stand-in module `variant` copied in as module `name`, put first on
// LOCUS_BACKEND_PATH for the life of the object.
class ModuleDir {
 public:
  explicit ModuleDir(const std::string& name, const std::string& variant = "") {
    dir_ = fs::temp_directory_path() / ("locus-modules-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (!variant.empty())
      fs::copy_file(stand_in_modules() / ("liblocus_test_module_" + variant + ".so"),
                    dir_ / runtime::backend_module_file(name));
    const char* previous = getenv("LOCUS_BACKEND_PATH");
    had_previous_ = previous != nullptr;
    if (previous) previous_ = previous;
    setenv("LOCUS_BACKEND_PATH", dir_.c_str(), 1);
  }
  ~ModuleDir() {
    if (had_previous_) setenv("LOCUS_BACKEND_PATH", previous_.c_str(), 1);
    else unsetenv("LOCUS_BACKEND_PATH");
    fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / runtime::backend_module_file(name)).string(); }
  std::string dir() const { return dir_.string(); }

 private:
  fs::path dir_;
  std::string previous_;
  bool had_previous_ = false;
};

TEST(BackendModule, FileNameCarriesTheSoversion) { EXPECT_EQ(runtime::backend_module_file("cuda"), "liblocus_cuda.so.0"); }

TEST(BackendModule, LooksInBackendPathThenBesideLiblocus) {
  ModuleDir dir("probe");
  setenv("LOCUS_BACKEND_PATH", ("/nonexistent/a::" + dir.dir()).c_str(), 1);
  const auto dirs = runtime::backend_module_dirs();
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/nonexistent/a");
  EXPECT_EQ(dirs[1], dir.dir());
  // The last is where liblocus (or, linked statically, this program) was loaded from.
  EXPECT_TRUE(fs::exists(dirs[2])) << dirs[2];
}

TEST(BackendModule, MissingModuleSaysWhereItLooked) {
  ModuleDir dir("absent");
  const auto found = runtime::load_backend_module("absent");
  EXPECT_EQ(found.provides, nullptr);
  EXPECT_EQ(found.reason, "the absent backend module (liblocus_absent.so.0) is not installed: looked in " + dir.dir() + ", " +
                              runtime::backend_module_dirs().back() + " (LOCUS_BACKEND_PATH adds directories)");
}

TEST(BackendModule, LoadsAModuleOfThisVersion) {
  ModuleDir dir("current", "current");
  const auto found = runtime::load_backend_module("current");
  ASSERT_NE(found.provides, nullptr) << found.reason;
  EXPECT_EQ(found.path, dir.path("current"));
  EXPECT_EQ(*static_cast<const int*>(found.provides), 42);
}

TEST(BackendModule, NamesTheLibraryAModuleNeeds) {
  ModuleDir dir("needy", "needs_dependency");
  const auto found = runtime::load_backend_module("needy");
  EXPECT_EQ(found.provides, nullptr);
  EXPECT_EQ(found.reason, dir.path("needy") +
                              " needs liblocus_test_dependency.so, which is missing (not installed, or not on the library path)");
}

TEST(BackendModule, RefusesAModuleOfAnotherVersion) {
  ModuleDir dir("old", "other_version");
  const auto found = runtime::load_backend_module("old");
  EXPECT_EQ(found.provides, nullptr);
  EXPECT_EQ(found.reason, dir.path("old") + " was built for Locus 0.0.0-other, and this is Locus " + std::string(LOCUS_TEST_VERSION));
}

TEST(BackendModule, RefusesAModuleWithoutTheEntryPoint) {
  ModuleDir dir("other", "no_entry");
  const auto found = runtime::load_backend_module("other");
  EXPECT_EQ(found.provides, nullptr);
  EXPECT_EQ(found.reason, dir.path("other") + " is not a Locus backend module (it has no locus_module_entry)");
}

TEST(BackendModule, RefusesAFileThatIsNoLibrary) {
  ModuleDir dir("garbage");
  std::ofstream(dir.path("garbage")) << "not an ELF file";
  const auto found = runtime::load_backend_module("garbage");
  EXPECT_EQ(found.provides, nullptr);
  EXPECT_EQ(found.reason.rfind(dir.path("garbage") + " could not be loaded: ", 0), 0u) << found.reason;
}

// Where there is no driver, asking about cuda and nccl (and computing on the CPU) loads neither
// module nor any CUDA library. First in this file: the next test maps the real modules.
TEST(BackendModule, NoDriverMapsNoCudaLibrary) {
  if (testing::cuda_linked_in()) GTEST_SKIP() << "a static build with CUDA linked in maps its libraries at start-up";
  if (cuda::unavailable_reason().rfind("no NVIDIA driver", 0) != 0)
    GTEST_SKIP() << "this machine has an NVIDIA driver: " << cuda::unavailable_reason();
  EXPECT_FALSE(cuda::is_available());
  EXPECT_FALSE(distributed::is_available("nccl"));
  EXPECT_EQ(distributed::unavailable_reason("nccl"),
            "NCCL needs cuda devices, and cuda is not available: " + cuda::unavailable_reason());
  EXPECT_EQ(ones({4}).sum().item<float>(), 4.f);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    for (const char* library : {"libcuda.", "libcudart", "libcublas", "libcudnn", "libnccl", "liblocus_cuda", "liblocus_nccl"})
      EXPECT_EQ(line.find(library), std::string::npos) << line;
}

// This build's own modules load (in a child process, so that this one stays CUDA-free).
TEST(BackendModule, ThisBuildsModulesLoad) {
  for (const char* name : {"cuda", "nccl"}) {
    const std::string file = runtime::backend_module_dirs().back() + "/" + runtime::backend_module_file(name);
    if (!fs::exists(file)) continue;  // a build without the CUDA toolkit, or a static one
    EXPECT_EXIT(
        {
          const auto found = runtime::load_backend_module(name);
          if (!found.provides) fprintf(stderr, "%s\n", found.reason.c_str());
          _exit(found.provides ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "")
        << file;
  }
}

}  // namespace
}  // namespace locus
