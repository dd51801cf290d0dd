// MPI process groups. MpiBackend runs in every build: whether mpi is there, and why not. The
// MpiGroup tests run as the ranks of an MPI job (ctest starts them under `locus run --backend
// mpi` and under a plain mpirun, with LOCUS_MPI_TEST=1): every collective and dtype against values
// computed here, Avg, the flat forms, long tensors split into several MPI calls, the volume
// counts, argument errors, the debug check's names, the ranks MPI gives, the default group and
// DDP. The MpiFailure tests end their job on purpose (tests/locus_run.sh, case mpi, checks how).
// Run any other way, both skip.

#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "locus/distributed.h"
#include "tests/distributed/collective_cases.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using distributed::ProcessGroup;
using distributed::ReduceOp;
using testing::expect_error;
using testing::values;

bool in_mpi_job(const char* marker) { return std::getenv(marker) != nullptr && distributed::is_available("mpi"); }

#define SKIP_OUTSIDE_MPI_JOB()                                                                                  \
  if (!in_mpi_job("LOCUS_MPI_TEST"))                                                                            \
  GTEST_SKIP() << "a rank of an MPI job with LOCUS_MPI_TEST=1 (ctest: mpi.*), in a build with MPI"

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::shared_ptr<ProcessGroup> mpi_group(const std::string& name) {
  return distributed::new_group("mpi", distributed::GroupOptions().name(name).timeout(std::chrono::minutes(2)));
}

TEST(MpiBackend, AvailabilitySaysWhy) {
  if (distributed::is_available("mpi")) {
    EXPECT_EQ(distributed::unavailable_reason("mpi"), "");
    return;
  }
  const std::string reason =
      "built without MPI (install libopenmpi-dev and openmpi-bin, and rebuild; gloo carries the same tensors without MPI)";
  EXPECT_EQ(distributed::unavailable_reason("mpi"), reason);
  expect_error<BackendUnavailableError>([] { distributed::new_group("mpi", distributed::GroupOptions().name("absent")); },
                                        "the distributed backend 'mpi' is not available: " + reason);
}

TEST(MpiBackend, LauncherBackendReadsLocusDistBackend) {
  {
    ScopedEnv unset("LOCUS_DIST_BACKEND", nullptr);
    EXPECT_EQ(distributed::launcher_backend(), "gloo");
  }
  {
    ScopedEnv empty("LOCUS_DIST_BACKEND", "");
    EXPECT_EQ(distributed::launcher_backend(), "gloo");
  }
  {
    ScopedEnv mpi("LOCUS_DIST_BACKEND", "mpi");
    EXPECT_EQ(distributed::launcher_backend(), "mpi");
  }
  ScopedEnv nccl("LOCUS_DIST_BACKEND", "nccl");
  expect_error<ValueError>([] { distributed::launcher_backend(); },
                           "LOCUS_DIST_BACKEND='nccl' is not a launch backend: use gloo (`locus run`) or mpi "
                           "(`locus run --backend mpi`, which sets it)");
}

TEST(MpiGroup, RanksAreMpis) {
  SKIP_OUTSIDE_MPI_JOB();
  auto g = mpi_group("ranks");
  EXPECT_EQ(g->backend(), "mpi");
  EXPECT_EQ(g->rank(), std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")));
  EXPECT_EQ(g->size(), std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")));
  const int r = g->rank(), n = g->size();
  // A rank or size that disagrees with MPI's is named beside MPI's (every rank makes the group,
  // then each finds its own disagreement).
  const std::string mpi = "MPI started this process as rank " + std::to_string(r) + " of " + std::to_string(n);
  expect_error<ValueError>(
      [&] { distributed::new_group("mpi", distributed::GroupOptions().name("wrong").rank((r + 1) % n + n)); },
      "init_process_group: GroupOptions().rank(" + std::to_string((r + 1) % n + n) + "), but " + mpi +
          " (process group 'wrong'); under mpirun the ranks are MPI's: leave the rank out or make it agree");
  expect_error<ValueError>(
      [&] { distributed::new_group("mpi", distributed::GroupOptions().name("wrong_size").world_size(n + 1)); },
      "init_process_group: GroupOptions().world_size(" + std::to_string(n + 1) + "), but " + mpi +
          " (process group 'wrong_size'); under mpirun the ranks are MPI's: leave the world_size out or make it agree");
  {
    ScopedEnv rank("RANK", std::to_string(r + n).c_str());
    expect_error<ValueError>([&] { mpi_group("wrong_env"); },
                             "init_process_group: RANK=" + std::to_string(r + n) + ", but " + mpi +
                                 " (process group 'wrong_env'); under mpirun the ranks are MPI's: leave the rank out or "
                                 "make it agree");
  }
  {
    // Agreeing values are fine; a store is never needed.
    ScopedEnv no_store("LOCUS_STORE", nullptr);
    ScopedEnv rank("RANK", std::to_string(r).c_str());
    auto agreeing = distributed::new_group("mpi", distributed::GroupOptions().name("agreeing").world_size(n));
    EXPECT_EQ(agreeing->rank(), r);
  }
  g->barrier()->wait();
}

TEST(MpiGroup, AllReduceEveryOpAndDtype) {
  SKIP_OUTSIDE_MPI_JOB();
  auto group = mpi_group("all_reduce");
  testing::expect_all_reduce_every_op_and_dtype(*group);
}

TEST(MpiGroup, BroadcastGatherScatterOnDevicesAndViews) {
  SKIP_OUTSIDE_MPI_JOB();
  auto group = mpi_group("collectives");
  ProcessGroup& g = *group;
  const int n = g.size(), r = g.rank();
  // Device tensors go through the host: sim on odd ranks.
  const Device dev(r % 2 == 1 ? "sim:1" : "cpu");
  for (int root = 0; root < n; ++root) {
    Tensor b = full({2, 2}, static_cast<double>(r + 10), TensorOptions().device(dev));
    g.broadcast(b, root)->wait();
    EXPECT_EQ(values(b), std::vector<double>(4, root + 10.0));
    EXPECT_EQ(b.device(), dev);
  }
  // A strided view takes part in place.
  Tensor base = zeros({3, 2}, TensorOptions().device(dev));
  Tensor column = base.select(1, 1);
  column.fill_(static_cast<double>(r));
  g.all_reduce(column)->wait();
  const double ranks = n * (n - 1) / 2.0;
  EXPECT_EQ(values(base), (std::vector<double>{0, ranks, 0, ranks, 0, ranks}));
  for (DType dt : {kBool, kUInt8, kInt16, kInt64, kFloat16, kBFloat16, kFloat64}) {
    std::vector<Tensor> gathered;
    for (int k = 0; k < n; ++k) gathered.push_back(empty({2}, TensorOptions().dtype(dt).device(dev)));
    g.all_gather(gathered, tensor({r % 2, 1}).to(dt).to(dev))->wait();
    for (int k = 0; k < n; ++k)
      EXPECT_EQ(values(gathered[static_cast<size_t>(k)]), (std::vector<double>{k % 2 * 1.0, 1.0})) << dtype_name(dt);
  }
  std::vector<Tensor> parts;
  for (int k = 0; k < n; ++k) parts.push_back(full({2}, static_cast<double>(k + r), TensorOptions().device(dev)));
  Tensor mine = empty({2}, TensorOptions().device(dev));
  g.reduce_scatter(mine, parts)->wait();
  EXPECT_EQ(values(mine), std::vector<double>(2, n * r + ranks));  // sum over ranks q of (r + q)
  g.reduce_scatter(mine, parts, ReduceOp::Avg)->wait();
  EXPECT_EQ(values(mine), std::vector<double>(2, r + ranks / n));
  g.reduce_scatter(mine, parts, ReduceOp::Max)->wait();
  EXPECT_EQ(values(mine), std::vector<double>(2, r + n - 1.0));
  // Asynchronous: several in flight, completed in order.
  std::vector<Tensor> ts;
  std::vector<std::shared_ptr<distributed::Work>> works;
  for (int i = 0; i < 5; ++i) {
    ts.push_back(full({1000}, static_cast<double>(i)));
    works.push_back(g.all_reduce(ts.back()));
  }
  works.push_back(g.barrier());
  for (auto& w : works) w->wait();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(values(ts[static_cast<size_t>(i)])[999], n * i * 1.0);
  EXPECT_TRUE(works.front()->is_completed());
}

// The flat forms (torch's all_gather_into_tensor and reduce_scatter_tensor), MPI's own collectives.
void check_flat_forms(ProcessGroup& g, int64_t part) {
  const int n = g.size(), r = g.rank();
  const Tensor mine = arange(0, part, 1, TensorOptions().dtype(kInt64)) + 1000 * r;
  Tensor out = empty({n * part}, TensorOptions().dtype(kInt64));
  g.all_gather_into_tensor(out, mine)->wait();
  std::vector<double> want;
  for (int q = 0; q < n; ++q)
    for (int64_t i = 0; i < part; ++i) want.push_back(1000.0 * q + static_cast<double>(i));
  EXPECT_EQ(values(out), want);
  // [n, part] works too, and so does an input that is this rank's own slot of the output.
  Tensor stacked = zeros({n, part}, TensorOptions().dtype(kInt64));
  Tensor slot = stacked.select(0, r);
  slot.copy_(mine);
  g.all_gather_into_tensor(stacked, slot)->wait();
  EXPECT_EQ(values(stacked), want);
  // reduce_scatter_tensor: rank q's input holds q + 10 * p + i in part p; rank r gets part r summed.
  Tensor input = empty({n * part});
  for (int p = 0; p < n; ++p) input.narrow(0, p * part, part).copy_(arange(0, part) + (r + 10.0 * p));
  Tensor reduced = empty({part});
  g.reduce_scatter_tensor(reduced, input)->wait();
  std::vector<double> want_sum;
  for (int64_t i = 0; i < part; ++i) want_sum.push_back(n * (10.0 * r + static_cast<double>(i)) + n * (n - 1) / 2.0);
  EXPECT_EQ(values(reduced), want_sum);
  g.reduce_scatter_tensor(reduced, input, ReduceOp::Min)->wait();
  for (int64_t i = 0; i < part; ++i) EXPECT_EQ(values(reduced)[static_cast<size_t>(i)], 10.0 * r + static_cast<double>(i));
  // all_reduce and broadcast of the same length.
  Tensor summed = arange(0, n * part) + r;
  g.all_reduce(summed)->wait();
  const std::vector<double> got = values(summed);
  for (int64_t i = 0; i < n * part; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], n * static_cast<double>(i) + n * (n - 1) / 2.0);
  Tensor sent = arange(0, n * part) * (r == n - 1 ? 1.0 : 0.0);
  g.broadcast(sent, n - 1)->wait();
  EXPECT_EQ(values(sent), values(arange(0, n * part)));
}

TEST(MpiGroup, FlatForms) {
  SKIP_OUTSIDE_MPI_JOB();
  auto g = mpi_group("flat");
  check_flat_forms(*g, 5);
}

TEST(MpiGroup, EmptyTensors) {
  SKIP_OUTSIDE_MPI_JOB();
  // A rank's shard may be empty (fully_shard of a small parameter over many ranks).
  auto g = mpi_group("empty");
  const int n = g->size();
  Tensor none = empty({0});
  g->all_reduce(none)->wait();
  g->broadcast(none, 0)->wait();
  Tensor flat = empty({0});
  g->all_gather_into_tensor(flat, none)->wait();
  g->reduce_scatter_tensor(none, flat)->wait();
  std::vector<Tensor> outs;
  for (int k = 0; k < n; ++k) outs.push_back(empty({0, 3}));
  g->all_gather(outs, empty({0, 3}))->wait();
  Tensor mine = empty({0, 3});
  g->reduce_scatter(mine, outs)->wait();
  EXPECT_EQ(g->stats().collectives, 6);
  EXPECT_EQ(g->stats().bytes, 0);
  Tensor after = ones({2});
  g->all_reduce(after)->wait();
  EXPECT_EQ(values(after), std::vector<double>(2, n));
}

TEST(MpiGroup, TensorsLongerThanAnMpiCountGoInPieces) {
  SKIP_OUTSIDE_MPI_JOB();
  // The group splits at 3 elements as it splits at 2^31 - 1: 7 and 14 element parts take
  // several calls, all-gather and reduce-scatter through their staging buffer.
  std::shared_ptr<ProcessGroup> g;
  {
    ScopedEnv small("LOCUS_MPI_MAX_COUNT", "3");
    g = mpi_group("split");
  }
  check_flat_forms(*g, 7);
  check_flat_forms(*g, 3);
  const int n = g->size(), r = g->rank();
  std::vector<Tensor> outs;
  for (int k = 0; k < n; ++k) outs.push_back(empty({2, 4}));
  g->all_gather(outs, full({2, 4}, static_cast<double>(r)))->wait();
  for (int k = 0; k < n; ++k) EXPECT_EQ(values(outs[static_cast<size_t>(k)]), std::vector<double>(8, k));
  ScopedEnv zero("LOCUS_MPI_MAX_COUNT", "0");
  expect_error<ValueError>([] { mpi_group("zero"); }, "init_process_group: LOCUS_MPI_MAX_COUNT must be at least 1, got 0");
}

TEST(MpiGroup, CountsVolumeAsTheOtherEngines) {
  SKIP_OUTSIDE_MPI_JOB();
  auto g = mpi_group("volume");
  const int n = g->size();
  g->reset_stats();
  Tensor t = ones({4});  // 16 bytes
  g->all_reduce(t)->wait();
  EXPECT_EQ(g->stats().bytes, 32);  // a reduce-scatter and an all-gather of the tensor
  g->broadcast(t, 0)->wait();
  EXPECT_EQ(g->stats().bytes, 48);
  std::vector<Tensor> outs;
  for (int k = 0; k < n; ++k) outs.push_back(empty({4}));
  g->all_gather(outs, t)->wait();
  EXPECT_EQ(g->stats().bytes, 48 + 16 * n);
  Tensor mine = empty({4});
  g->reduce_scatter(mine, outs)->wait();
  EXPECT_EQ(g->stats().bytes, 48 + 32 * n);
  Tensor flat = empty({n * 4});
  g->all_gather_into_tensor(flat, t)->wait();
  g->reduce_scatter_tensor(mine, flat)->wait();
  EXPECT_EQ(g->stats().bytes, 48 + 64 * n);
  g->barrier()->wait();
  EXPECT_EQ(g->stats().collectives, 7);
  EXPECT_EQ(g->stats().bytes, 48 + 64 * n);
  g->reset_stats();
  EXPECT_EQ(g->stats().collectives, 0);
  EXPECT_EQ(g->stats().bytes, 0);
}

TEST(MpiGroup, ArgumentErrorsAreRaisedBeforeAnythingIsSent) {
  SKIP_OUTSIDE_MPI_JOB();
  auto group = mpi_group("arguments");
  ProcessGroup& g = *group;
  const int n = g.size();
  const std::string size = std::to_string(n);
  Tensor ints = tensor({1, 2});
  expect_error<DTypeError>([&] { g.all_reduce(ints, ReduceOp::Avg); },
                           "all_reduce: ReduceOp::Avg needs a floating tensor, got int64");
  Tensor undefined;
  expect_error<ValueError>([&] { g.all_reduce(undefined); }, "all_reduce: the tensor is undefined");
  Tensor x = ones({3});
  expect_error<ValueError>([&] { g.broadcast(x, n); }, "broadcast: root " + size + " is not a rank of a group of " + size);
  std::vector<Tensor> wrong(static_cast<size_t>(n));
  for (auto& w : wrong) w = ones({3});
  wrong.back() = ones({4});
  expect_error<ShapeError>([&] { g.all_gather(wrong, x); },
                           "all_gather: outputs[" + std::to_string(n - 1) + "] must be float32 [3], got float32 [4]");
  std::vector<Tensor> one = {ones({3})};
  expect_error<ValueError>([&] { g.all_gather(one, x); }, "all_gather: outputs has 1 tensors for a group of " + size);
  Tensor five = empty({5});
  expect_error<ShapeError>([&] { g.all_gather_into_tensor(five, x); },
                           "all_gather_into_tensor: output must be a contiguous float32 tensor of " + size +
                               " x 3 elements, got float32 [5]");
  expect_error<ShapeError>([&] { g.reduce_scatter_tensor(x, five); },
                           "reduce_scatter_tensor: input must be a contiguous float32 tensor of " + size +
                               " x 3 elements, got float32 [5]");
  EXPECT_EQ(g.stats().collectives, 0);  // nothing was issued
  Tensor y = ones({2});
  g.all_reduce(y)->wait();  // the group is still in step
  EXPECT_EQ(values(y), std::vector<double>(2, n));
}

TEST(MpiGroup, DebugModeNamesMismatchedCalls) {
  SKIP_OUTSIDE_MPI_JOB();
  std::shared_ptr<ProcessGroup> g;
  {
    ScopedEnv detail("LOCUS_DISTRIBUTED_DEBUG", "detail");
    g = mpi_group("debug");
  }
  const int n = g->size(), r = g->rank();
  Tensor same = ones({2});
  g->all_reduce(same)->wait();  // calls that agree pass the check
  EXPECT_EQ(values(same), std::vector<double>(2, n));
  Tensor x = ones({r == 0 ? 4 : 5});
  std::string others = n == 2 ? "rank 1" : "ranks 1";
  for (int k = 2; k < n; ++k) others += ", " + std::to_string(k);
  const std::string mismatch = "collective #1: the ranks called different collectives: rank 0 called all_reduce(float32 [4], "
                               "sum); " + others + " called broadcast(float32 [5], root 0)";
  expect_error<DistributedError>(
      [&] {
        if (r == 0) g->all_reduce(x)->wait();
        else g->broadcast(x, 0)->wait();
      },
      mismatch);
  // As on Gloo, the group refuses to go on.
  expect_error<DistributedError>([&] { g->barrier()->wait(); },
                                              "process group unusable: " + mismatch + "; create a new group");
}

TEST(MpiGroup, CollectivesOfTwoGroupsMayStartInEitherOrder) {
  SKIP_OUTSIDE_MPI_JOB();
  // Every rank issues A's all-reduce (asynchronous) and then B's barrier, but rank 0 runs the
  // barrier first, on its own thread, while A's waits for the worker; the other ranks run A's
  // first. Neither may wait for the other to let go of MPI.
  auto a = mpi_group("order_a"), b = mpi_group("order_b");
  const int n = a->size(), r = a->rank();
  for (int round = 0; round < 3; ++round) {
    Tensor t = full({1000}, static_cast<double>(r));
    auto work = a->all_reduce(t);
    if (r != 0) work->wait();
    b->barrier()->wait();
    work->wait();
    EXPECT_EQ(values(t)[999], n * (n - 1) / 2.0);
  }
}

TEST(MpiGroup, DefaultGroupWithoutAStore) {
  SKIP_OUTSIDE_MPI_JOB();
  ScopedEnv no_store("LOCUS_STORE", nullptr);
  distributed::init_process_group("mpi");
  const int n = distributed::get_world_size();
  EXPECT_EQ(distributed::default_group().backend(), "mpi");
  Tensor t = full({2}, distributed::get_rank() + 1.0);
  distributed::all_reduce(t);
  EXPECT_EQ(values(t), std::vector<double>(2, n * (n + 1) / 2.0));
  Tensor out = empty({n * 2});
  auto work = distributed::all_gather_into_tensor(out, t, /*async_op=*/true);
  work->wait();
  EXPECT_EQ(values(out), std::vector<double>(static_cast<size_t>(n) * 2, n * (n + 1) / 2.0));
  distributed::destroy_process_group();
}

TEST(MpiGroup, DistributedDataParallelTrainsAsOneProcess) {
  SKIP_OUTSIDE_MPI_JOB();
  auto g = mpi_group("ddp");
  const int n = g->size(), r = g->rank();
  manual_seed(99);
  const Tensor x = randn({8 * n, 10}), y = randint(0, 4, {8 * n});
  const auto make_model = [](uint64_t seed) {
    manual_seed(seed);
    return nn::Sequential{nn::Linear(10, 16), nn::ReLU(), nn::Linear(16, 4)};
  };
  auto single = make_model(1);
  optim::SGD single_opt(single->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  auto model = make_model(1 + static_cast<uint64_t>(r));  // DDP starts every rank from rank 0's values
  nn::DistributedDataParallel ddp(model, g, nn::DistributedDataParallelOptions().bucket_cap_mb(0.0005));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < 3; ++step) {
    single_opt.zero_grad();
    nn::functional::cross_entropy(single(x), y).backward();
    single_opt.step();
    opt.zero_grad();
    nn::functional::cross_entropy(ddp(x.narrow(0, 8 * r, 8)), y.narrow(0, 8 * r, 8)).backward();
    opt.step();
  }
  const auto mine = model->parameters(), reference = single->parameters();
  for (size_t i = 0; i < mine.size(); ++i) testing::expect_close(mine[i], values(reference[i]), 1e-5, 1e-5);
}

// The failures that end an MPI job (tests/locus_run.sh, case mpi, runs each as a job of its own
// and checks how it ended). Rank size - 1 misbehaves; the others wait in an all-reduce.
bool failure_case(const char* name) {
  const char* which = std::getenv("LOCUS_MPI_FAILURE_TEST");
  return which != nullptr && std::string(which) == name && distributed::is_available("mpi");
}

TEST(MpiFailure, ATimeoutEndsTheJob) {
  if (!failure_case("timeout")) GTEST_SKIP() << "tests/locus_run.sh mpi";
  auto g = distributed::new_group("mpi", distributed::GroupOptions().name("timeout").timeout(std::chrono::seconds(2)));
  if (g->rank() == g->size() - 1) std::this_thread::sleep_for(std::chrono::seconds(60));  // never arrives
  Tensor t = ones({4});
  g->all_reduce(t)->wait();
  FAIL() << "the all-reduce returned without rank " << g->size() - 1;
}

TEST(MpiFailure, ARankThatExitsWithAnErrorEndsTheJob) {
  if (!failure_case("exit")) GTEST_SKIP() << "tests/locus_run.sh mpi";
  auto g = mpi_group("exit");
  if (g->rank() == g->size() - 1) std::exit(3);
  Tensor t = ones({4});
  g->all_reduce(t)->wait();  // the default timeout is minutes: only mpirun ends this
  FAIL() << "the all-reduce returned without rank " << g->size() - 1;
}

TEST(MpiFailure, ARankThatThrowsEndsTheJob) {
  if (!failure_case("throw")) GTEST_SKIP() << "tests/locus_run.sh mpi";
  auto g = mpi_group("throw");
  if (g->rank() == g->size() - 1) throw ValueError("the last rank gives up");
  Tensor t = ones({4});
  g->all_reduce(t)->wait();
  FAIL() << "the all-reduce returned without rank " << g->size() - 1;
}

}  // namespace
}  // namespace locus
