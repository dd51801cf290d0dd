// Faults survived (issue 14): out of memory again and again without drift, long training with
// flat memory, threads on several devices at once, and checkpoints that are never torn.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "locus/locus.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::SmallSim;

// GCC's macros, or clang's features (the sanitizer presets build with clang).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The process's resident memory (/proc/self/statm), in bytes.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}


TEST(Faults, OutOfMemoryAHundredTimesWithoutDrift) {
  const SmallSim sim(uint64_t{64} << 20);
  const Device d("sim:0");
  const Tensor keep = ones({1 << 20}, d);  // 4 MiB held throughout
  const int64_t allocated = memory::memory_allocated(d);
  int64_t reserved = -1;
  for (int i = 0; i < 100; ++i) {
    try {
      empty({int64_t{20} << 20}, d);  // 80 MiB
      FAIL() << "no OutOfMemoryError at round " << i;
    } catch (const OutOfMemoryError& e) {
      ASSERT_EQ(e.requested(), uint64_t{80} << 20) << i;
      ASSERT_EQ(e.capacity(), uint64_t{64} << 20) << i;
      ASSERT_EQ(e.allocated(), static_cast<uint64_t>(allocated)) << i;
    }
    const Tensor work = ones({1 << 20}, d) + keep;  // normal work after each failure
    ASSERT_EQ(work.sum().item<float>(), float(2 << 20)) << i;
    ASSERT_EQ(memory::memory_allocated(d), allocated + (int64_t{4} << 20)) << i;  // `work`
    // The failed allocation releases the cache (the OOM ladder), the work reserves again: every
    // round ends with the same reservation, so nothing drifts.
    if (i == 0) reserved = memory::memory_reserved(d);
    ASSERT_EQ(memory::memory_reserved(d), reserved) << i;
  }
  EXPECT_EQ(memory::memory_allocated(d), allocated);
  EXPECT_EQ(memory::memory_stats(d).num_ooms, 100);
}

TEST(Faults, TenThousandTrainingStepsKeepMemoryFlat) {
  const Device d("sim:0");
  manual_seed(0);
  nn::Linear model(16, 4);
  model->to(d);
  optim::Adam opt(model->parameters(), 1e-3);
  const Tensor x = randn({8, 16}, d);
  const Tensor y = randint(0, 4, {8}, TensorOptions().device(d));
  auto step = [&] {
    opt.zero_grad();
    nn::functional::cross_entropy(model(x), y).backward();
    opt.step();
  };
  step();
  const int64_t after_first = memory::memory_allocated(d);
  int64_t rss_early = 0;
  for (int i = 1; i < 10000; ++i) {
    step();
    if (i == 1000) rss_early = resident_bytes();
  }
  EXPECT_EQ(memory::memory_allocated(d), after_first);
  // The process too: no host memory grows with the steps (sanitizers hold freed memory in a
  // quarantine, so only the plain build checks this).
  if (!kSanitized) EXPECT_LT(resident_bytes() - rss_early, int64_t{8} << 20);
}

// Four threads, each with its own current sim device, moving tensors between cpu, sim:0 and
// sim:1 and computing; every value checked, memory back to where it started.
TEST(Faults, FourThreadsAcrossDevices) {
  const int64_t base0 = memory::memory_allocated(Device("sim:0")), base1 = memory::memory_allocated(Device("sim:1"));
  std::atomic<int> wrong{0}, errors{0}, rounds{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        sim::set_device(t % 2);
        const Device mine = current_device(DeviceType::Sim), other(DeviceType::Sim, 1 - t % 2);
        int64_t k = 0;
        while (std::chrono::steady_clock::now() < deadline) {
          const double v = static_cast<double>(t * 1000 + k++ % 1000);
          const Tensor a = full({257}, v, TensorOptions().dtype(kFloat64).device(mine));
          const Tensor b = (a.to(other) * 2.0).cpu() + 1.0;
          const Tensor c = b.to(mine).sum();
          if (c.item<double>() != 257 * (2 * v + 1)) ++wrong;
          if (current_device(DeviceType::Sim) != mine) ++wrong;
          ++rounds;
        }
      } catch (...) {
        ++errors;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(rounds.load(), 100);
  EXPECT_EQ(memory::memory_allocated(Device("sim:0")), base0);
  EXPECT_EQ(memory::memory_allocated(Device("sim:1")), base1);
}

// The files in `dir` whose names start with `prefix`.
int files_named(const std::string& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) n += entry.path().filename().string().rfind(prefix, 0) == 0;
  return n;
}

// The saves' temporary files in `dir` (model.safetensors.tmp.<pid>.<n>).
int temporaries(const std::string& dir) { return files_named(dir, "model.safetensors.tmp."); }

// Whether the save of process `pid` has its temporary file in `dir`.
bool writing_now(const std::string& dir, pid_t pid) {
  return files_named(dir, "model.safetensors.tmp." + std::to_string(pid) + ".") > 0;
}

// Threads saving to one path at once: every save succeeds and the file holds one of them whole.
TEST(Faults, ConcurrentSavesToOnePath) {
  const std::string path = ::testing::TempDir() + "/locus_concurrent_" + std::to_string(::getpid()) + ".safetensors";
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        try {
          save({{"w", full({4096}, static_cast<float>(t))}}, path);
        } catch (...) {
          ++errors;
        }
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  const std::vector<double> w = testing::values(load(path).at("w"));
  EXPECT_EQ(std::count(w.begin(), w.end(), w[0]), static_cast<long>(w.size()));
  std::filesystem::remove(path);
}

// A child saving a large checkpoint over a valid one, killed with SIGKILL at random moments:
// the path always loads and holds the old or the new contents, and no temporary file but the
// one the next save overwrites is ever left.
TEST(Faults, CheckpointsSurviveSIGKILL) {
  const std::string dir = ::testing::TempDir() + "/locus_kill_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/model.safetensors";
  const Tensor old_value = full({1 << 20}, 1.0f), new_value = full({1 << 20}, 2.0f);
  save({{"w", old_value}}, path);
  std::mt19937 rng(7);
  // 16 tensors of 4 MiB: long enough to be killed in the middle of.
  std::map<std::string, Tensor> big;
  for (int i = 0; i < 16; ++i) big["w" + (i ? std::to_string(i) : std::string())] = new_value;
  // Even rounds kill at a random time within two saves' length, as this build on this machine
  // saves; odd rounds wait for the temporary file to appear and kill within 2 ms of it, so that
  // some kills land mid-write wherever the time of a save goes. (A fixed window of up to 62 ms
  // missed every write under ASan on a loaded machine: the checksum before the file is opened
  // outlasted it.)
  const auto t0 = std::chrono::steady_clock::now();
  save(big, dir + "/timing.safetensors");
  const auto save_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  int killed_mid_write = 0;
  for (int round = 0; round < 30; ++round) {
    // The child says when it starts writing, and the wait starts then.
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(ready[0]);
      const char go = 1;
      if (::write(ready[1], &go, 1) != 1) ::_exit(1);
      for (;;) save(big, path);
    }
    ::close(ready[1]);
    char go = 0;
    ASSERT_EQ(::read(ready[0], &go, 1), 1) << "the writer died before writing (round " << round << ")";
    ::close(ready[0]);
    if (round % 2 == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % (2 * save_us + 1)));
    } else {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!writing_now(dir, child)) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the writer never opened its file (round " << round << ")";
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    const auto loaded = load(path);  // never torn: throws (and fails the test) if it were
    const float w = loaded.at("w")[0].item<float>();
    ASSERT_TRUE(w == 1.0f || w == 2.0f) << "round " << round;
    ASSERT_EQ(loaded.size(), w == 1.0f ? 1u : 16u) << "round " << round;
    const int leftovers = temporaries(dir);
    killed_mid_write += leftovers;
    ASSERT_LE(leftovers, 1) << "temporary files accumulate (round " << round << ")";
  }
  save({{"w", old_value}}, path);  // the next save removes the killed one's leftover
  EXPECT_EQ(temporaries(dir), 0);
  EXPECT_GT(killed_mid_write, 0) << "no kill landed during a write: the test did not test";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace locus
