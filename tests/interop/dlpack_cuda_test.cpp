// DLPack on CUDA: cuda:N tensors travel as kDLCUDA without a copy, a non-blocking copy still in
// flight lands before its host buffer is exported, and an imported tensor's release waits for
// the work queued on it. Every test skips with the driver's reason where there is no GPU.

#include "tests/interop/dlpack_test_util.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::counting;
using testing::counting_up;
using testing::dlpack_dtypes;
using testing::MemoryBaseline;
using testing::values;

const Device kCuda("cuda:0");

TEST(DLPackCuda, EveryDTypeRoundTripsWithoutACopy) {
  REQUIRE_CUDA();
  MemoryBaseline baseline(kCuda);
  for (const auto& d : dlpack_dtypes()) {
    SCOPED_TRACE(dtype_name(d.dtype));
    const Tensor x = counting_up(12, d.dtype, kCuda).reshape({3, 4});
    DLManagedTensorVersioned* m = to_dlpack_versioned(x);
    EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
    EXPECT_EQ(m->dl_tensor.device.device_id, 0);
    EXPECT_EQ(m->dl_tensor.data, x.data_ptr());
    EXPECT_EQ(m->dl_tensor.dtype.code, d.code);
    const Tensor a = from_dlpack(m);
    const Tensor b = from_dlpack(to_dlpack(x.t()));
    EXPECT_EQ(a.device(), kCuda);
    EXPECT_EQ(a.data_ptr(), x.data_ptr());
    EXPECT_EQ(values(a), values(x));
    EXPECT_EQ(b.strides()[0], 1);
    EXPECT_EQ(values(b), values(x.t()));
  }
}

TEST(DLPackCuda, WritesAndOffsetsAreShared) {
  REQUIRE_CUDA();
  Tensor x = zeros({10}, kCuda);
  Tensor y = from_dlpack(to_dlpack(x.narrow(0, 4, 3)));
  EXPECT_EQ(y.data_ptr(), static_cast<float*>(x.data_ptr()) + 4);
  y.fill_(5);
  EXPECT_EQ(values(x), (std::vector<double>{0, 0, 0, 0, 5, 5, 5, 0, 0, 0}));
  x.add_(1);
  EXPECT_EQ(values(y), (std::vector<double>{6, 6, 6}));
}

TEST(DLPackCuda, ExportWaitsForANonBlockingCopyIntoPinnedMemory) {
  REQUIRE_CUDA();
  const Tensor src = counting_up(1 << 22, kFloat32, kCuda).mul(3);
  Tensor host = empty({1 << 22}, TensorOptions().pinned_memory(true));
  host.copy_(src, /*non_blocking=*/true);
  DLManagedTensor* m = to_dlpack(host);
  const auto* p = static_cast<const float*>(m->dl_tensor.data);
  EXPECT_EQ(p[0], 0.f);
  EXPECT_EQ(p[(1 << 22) - 1], 3.f * ((1 << 22) - 1));
  m->deleter(m);
}

TEST(DLPackCuda, ExportWaitsForTheCurrentStream) {
  REQUIRE_CUDA();
  const cuda::Stream side;
  Tensor x = zeros({1 << 24}, kCuda);
  DLManagedTensorVersioned* m = nullptr;
  {
    cuda::StreamGuard guard(side);
    for (int i = 0; i < 20; ++i) x.add_(1);  // queued on `side`
    m = to_dlpack_versioned(x);
    EXPECT_TRUE(side.query()) << "the consumer may use any stream: the export waited for this one";
  }
  m->deleter(m);
}

TEST(DLPackCuda, ReleaseWaitsForQueuedWorkAndCallsTheDeleterOnce) {
  REQUIRE_CUDA();
  MemoryBaseline baseline(kCuda);
  Tensor x = zeros({1 << 24}, kCuda);
  // A producer whose deleter notes whether Locus's work on the memory had finished by then.
  static int calls;
  static bool idle;
  calls = 0;
  idle = false;
  struct Noting {
    DLManagedTensor managed;
    DLManagedTensor* inner;
  };
  DLManagedTensor* inner = to_dlpack(x);
  auto* noting = new Noting{*inner, inner};
  noting->managed.manager_ctx = noting;
  noting->managed.deleter = [](DLManagedTensor* self) {
    auto* n = static_cast<Noting*>(self->manager_ctx);
    ++calls;
    idle = cuda::current_stream().query();
    n->inner->deleter(n->inner);
    delete n;
  };
  {
    Tensor y = from_dlpack(&noting->managed);
    for (int i = 0; i < 50; ++i) y.add_(1);  // queued; still running when y dies
  }
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(idle) << "the producer got its memory back while Locus still used it";
  EXPECT_EQ(values(x.narrow(0, 0, 2)), (std::vector<double>{50, 50}));
}

TEST(DLPackCuda, ImportedMemoryIgnoresRecordStreamAndIsNotCounted) {
  REQUIRE_CUDA();
  Tensor x = ones({1024}, kCuda);
  const int64_t before = memory::memory_allocated(kCuda);
  int calls = 0;
  {
    const Tensor y = from_dlpack(counting(to_dlpack(x), &calls));
    EXPECT_EQ(memory::memory_allocated(kCuda), before);
    const cuda::Stream side;
    y.record_stream(side);  // lent memory is no block of the pool: nothing to hold back
    EXPECT_EQ(values(y.sum()), (std::vector<double>{1024}));
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(memory::memory_allocated(kCuda), before);
}

TEST(DLPackCuda, DeviceIdsBeyondTheMachineAreRefused) {
  REQUIRE_CUDA();
  testing::Producer p;
  p.shape = {2};
  auto* m = p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}, 0, {kDLCUDA, cuda::device_count()});
  EXPECT_THROW(from_dlpack(m), IndexError);
  EXPECT_EQ(p.deleter_calls, 0);
  m->deleter(m);
}

TEST(DLPackCuda, SecondDeviceKeepsItsIndex) {
  REQUIRE_CUDA();
  if (cuda::device_count() < 2) GTEST_SKIP() << "one GPU: the multi-device part needs two";
  const Tensor x = counting_up(5, kFloat32, Device("cuda:1"));
  DLManagedTensor* m = to_dlpack(x);
  EXPECT_EQ(m->dl_tensor.device.device_id, 1);
  const Tensor y = from_dlpack(m);
  EXPECT_EQ(y.device(), Device("cuda:1"));
  EXPECT_EQ(values(y), values(x));
}

}  // namespace
}  // namespace locus
