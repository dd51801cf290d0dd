#pragma once
// Runs the ranks of a Gloo process group as threads of the test process (as Gloo's own tests
// do), each with a fresh file store, so the collectives and DDP tests need no launcher.

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace locus::testing {

/// A file:// store in a directory no other test uses.
inline std::string fresh_store() {
  static std::atomic<int> counter{0};
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("locus_store_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  return "file://" + dir.string();
}

/// Runs body(group) on `n` ranks, one thread each, joined in one group of `backend`; rethrows
/// the first rank's failure after all have finished. For nccl, rank r uses cuda:device_of(r)
/// (default: cuda:r).
inline void on_rank_threads(int n, const std::function<void(std::shared_ptr<distributed::ProcessGroup>)>& body,
                            std::chrono::milliseconds timeout = std::chrono::seconds(20),
                            const std::string& backend = "gloo", std::function<int(int)> device_of = nullptr) {
  const std::string store = fresh_store();
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        const int device = backend != "nccl" ? -1 : device_of ? device_of(r) : r;
        body(distributed::new_group(backend, distributed::GroupOptions()
                                                 .store(store)
                                                 .rank(r)
                                                 .world_size(n)
                                                 .timeout(timeout)
                                                 .name("test")
                                                 .device(device)));
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  // The first rank's error alone can be a consequence (waiting for a rank that failed): the
  // others' go to the log.
  for (int r = 0; r < n; ++r)
    if (errors[static_cast<size_t>(r)]) try {
        std::rethrow_exception(errors[static_cast<size_t>(r)]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d of %d failed: %s\n", r, n, e.what());
      } catch (...) {
        std::fprintf(stderr, "rank %d of %d failed\n", r, n);
      }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace locus::testing
