// DLPack on the CPU: what the exported structs say, round trips of both struct kinds in every
// dtype and layout, imports from a hand-made producer (byte offsets, null strides), and the
// lifetimes: each deleter runs exactly once, and memory returns to its baseline.

#include <thread>

#include "tests/interop/dlpack_test_util.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::counting;
using testing::counting_up;
using testing::dlpack_dtypes;
using testing::MemoryBaseline;
using testing::Producer;
using testing::values;

const Device kCpu("cpu");

std::vector<int64_t> dims(const int64_t* p, int n) { return std::vector<int64_t>(p, p + n); }
std::vector<int64_t> dims(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

TEST(DLPackExport, VersionedStructDescribesTheTensor) {
  const Tensor x = counting_up(6, kFloat32).reshape({2, 3});
  DLManagedTensorVersioned* m = to_dlpack_versioned(x);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->version.minor, static_cast<uint32_t>(DLPACK_MINOR_VERSION));
  EXPECT_EQ(m->flags, 0u);
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.device.device_id, 0);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, kDLFloat);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(dims(dl.shape, 2), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(dims(dl.strides, 2), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(dl.byte_offset, 0u);
  EXPECT_EQ(dl.data, x.data_ptr());
  EXPECT_EQ(static_cast<const float*>(dl.data)[4], 4.f);
  m->deleter(m);
}

TEST(DLPackExport, LegacyStructDescribesTheTensor) {
  const Tensor x = counting_up(6, kInt64).reshape({3, 2});
  DLManagedTensor* m = to_dlpack(x);
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, kDLInt);
  EXPECT_EQ(dl.dtype.bits, 64);
  EXPECT_EQ(dims(dl.shape, 2), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(dims(dl.strides, 2), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(dl.data, x.data_ptr());
  m->deleter(m);
}

TEST(DLPackExport, PinnedMemoryIsPlainCpu) {
  const Tensor x = counting_up(8, kFloat32).pin_memory();
  DLManagedTensorVersioned* m = to_dlpack_versioned(x);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(m->dl_tensor.data, x.data_ptr());
  m->deleter(m);
}

TEST(DLPackRoundTrip, EveryDTypeThroughBothStructs) {
  for (const auto& d : dlpack_dtypes()) {
    SCOPED_TRACE(dtype_name(d.dtype));
    const Tensor x = counting_up(6, d.dtype).reshape({2, 3});
    DLManagedTensorVersioned* mv = to_dlpack_versioned(x);
    EXPECT_EQ(mv->dl_tensor.dtype.code, d.code);
    EXPECT_EQ(mv->dl_tensor.dtype.bits, d.bits);
    EXPECT_EQ(mv->dl_tensor.dtype.lanes, 1);
    const Tensor a = from_dlpack(mv);
    DLManagedTensor* ml = to_dlpack(x);
    EXPECT_EQ(ml->dl_tensor.dtype.code, d.code);
    const Tensor b = from_dlpack(ml);
    for (const Tensor& y : {a, b}) {
      EXPECT_EQ(y.dtype(), d.dtype);
      EXPECT_TRUE(y.is_cpu());
      EXPECT_EQ(dims(y.shape()), (std::vector<int64_t>{2, 3}));
      EXPECT_EQ(y.data_ptr(), x.data_ptr());
      EXPECT_EQ(values(y), values(x));
      EXPECT_FALSE(y.requires_grad());
    }
  }
}

TEST(DLPackRoundTrip, WritesOnEitherSideAreSeenOnTheOther) {
  Tensor x = zeros({4});
  Tensor y = from_dlpack(to_dlpack_versioned(x));
  y.fill_(7);
  EXPECT_EQ(values(x), (std::vector<double>{7, 7, 7, 7}));
  x.add_(1);
  EXPECT_EQ(values(y), (std::vector<double>{8, 8, 8, 8}));
  Tensor z = from_dlpack(to_dlpack(x));
  z.narrow(0, 1, 2).zero_();
  EXPECT_EQ(values(x), (std::vector<double>{8, 0, 0, 8}));
}

TEST(DLPackRoundTrip, NonContiguousViewsKeepTheirStrides) {
  const Tensor base = counting_up(60, kFloat32).reshape({3, 4, 5});
  const std::vector<Tensor> views{base.permute({2, 0, 1}), base.transpose(0, 2), base.slice(2, 1, std::nullopt, 2),
                                  base.select(1, 2), base.expand({2, 3, 4, 5}), base.select(0, 1).narrow(0, 1, 2).t().narrow(0, 3, 2)};
  for (const Tensor& x : views) {
    SCOPED_TRACE(::testing::PrintToString(dims(x.shape())));
    DLManagedTensorVersioned* m = to_dlpack_versioned(x);
    EXPECT_EQ(dims(m->dl_tensor.shape, m->dl_tensor.ndim), dims(x.shape()));
    EXPECT_EQ(dims(m->dl_tensor.strides, m->dl_tensor.ndim), dims(x.strides()));
    EXPECT_EQ(m->dl_tensor.data, x.data_ptr());
    const Tensor y = from_dlpack(m);
    EXPECT_EQ(dims(y.strides()), dims(x.strides()));
    EXPECT_EQ(y.data_ptr(), x.data_ptr());
    EXPECT_EQ(values(y), values(x));
  }
}

TEST(DLPackRoundTrip, StorageOffsetBecomesTheDataPointer) {
  const Tensor base = counting_up(10, kInt32);
  const Tensor x = base.narrow(0, 3, 4);
  ASSERT_EQ(x.storage_offset(), 3);
  DLManagedTensor* m = to_dlpack(x);
  EXPECT_EQ(m->dl_tensor.data, static_cast<int32_t*>(base.data_ptr()) + 3);
  EXPECT_EQ(m->dl_tensor.byte_offset, 0u);
  const Tensor y = from_dlpack(m);
  EXPECT_EQ(y.storage_offset(), 0);
  EXPECT_EQ(values(y), (std::vector<double>{3, 4, 5, 6}));
}

TEST(DLPackRoundTrip, ZeroDimAndEmptyTensors) {
  const Tensor scalar = tensor(2.5);
  DLManagedTensorVersioned* m = to_dlpack_versioned(scalar);
  EXPECT_EQ(m->dl_tensor.ndim, 0);
  EXPECT_NE(m->dl_tensor.data, nullptr);
  const Tensor s = from_dlpack(m);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);

  for (const Shape& shape : {Shape{0}, Shape{0, 3}, Shape{2, 0, 4}}) {
    const Tensor e = zeros(shape, kInt16);
    DLManagedTensor* me = to_dlpack(e);
    EXPECT_EQ(me->dl_tensor.data, nullptr) << "DLPack asks for a null pointer without elements";
    const Tensor y = from_dlpack(me);
    EXPECT_EQ(dims(y.shape()), dims(shape));
    EXPECT_EQ(y.numel(), 0);
    EXPECT_EQ(y.dtype(), kInt16);
    EXPECT_EQ(y.sum().item<int64_t>(), 0);
  }
}

TEST(DLPackImport, ByteOffsetInWholeElementsIsTheStorageOffset) {
  Producer p;
  p.fill_floats();
  p.shape = {2, 2};
  const Tensor y = from_dlpack(p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}, /*byte_offset=*/8));
  EXPECT_EQ(y.storage_offset(), 2);
  EXPECT_EQ(y.data_ptr(), p.bytes + 8);
  EXPECT_EQ(values(y), (std::vector<double>{2, 3, 4, 5}));
}

TEST(DLPackImport, ByteOffsetInPartElementsMovesTheStorage) {
  Producer p;
  p.shape = {3};
  const int16_t v[3] = {-1, 300, 7};
  std::memcpy(p.bytes + 2, v, sizeof v);
  // data one byte in, byte_offset one more: the first element is aligned, the base is not.
  const Tensor y = from_dlpack(p.lend<DLManagedTensor>({kDLInt, 16, 1}, /*byte_offset=*/1, {kDLCPU, 0}, /*data_offset=*/1));
  EXPECT_EQ(y.storage_offset(), 0);
  EXPECT_EQ(y.data_ptr(), p.bytes + 2);
  EXPECT_EQ(values(y), (std::vector<double>{-1, 300, 7}));
}

TEST(DLPackImport, StridesAsGivenNullOrOnDimsOfOne) {
  Producer p;
  p.fill_floats();
  p.shape = {2, 3};
  const Tensor rows = from_dlpack(p.lend<DLManagedTensor>({kDLFloat, 32, 1}));
  EXPECT_EQ(dims(rows.strides()), (std::vector<int64_t>{3, 1})) << "null strides are row-major";
  EXPECT_EQ(values(rows), (std::vector<double>{0, 1, 2, 3, 4, 5}));

  p.strides = {1, 2};  // column-major
  const Tensor cols = from_dlpack(p.lend<DLManagedTensor>({kDLFloat, 32, 1}));
  EXPECT_EQ(dims(cols.strides()), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values(cols), (std::vector<double>{0, 2, 4, 1, 3, 5}));

  p.shape = {3, 1};
  p.strides = {2, -9};  // a dim of one element steps nowhere, whatever its stride
  const Tensor one = from_dlpack(p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}));
  EXPECT_EQ(values(one), (std::vector<double>{0, 2, 4}));
  EXPECT_GE(one.stride(1), 0);

  p.shape = {4};
  p.strides = {0};  // a broadcast: every element is the first
  EXPECT_EQ(values(from_dlpack(p.lend<DLManagedTensor>({kDLFloat, 32, 1}))), (std::vector<double>{0, 0, 0, 0}));
}

TEST(DLPackImport, EmptyTensorsMayHaveNullData) {
  Producer p;
  p.shape = {2, 0};
  DLManagedTensorVersioned* m = p.lend<DLManagedTensorVersioned>({kDLFloat, 64, 1});
  m->dl_tensor.data = nullptr;
  m->dl_tensor.byte_offset = 16;
  const Tensor y = from_dlpack(m);
  EXPECT_EQ(dims(y.shape()), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(y.dtype(), kFloat64);
  EXPECT_EQ(y.clone().numel(), 0);
}

TEST(DLPackImport, CudaHostMemoryIsAnOrdinaryCpuTensor) {
  // Page-locked memory of another library is not a block of Locus's pinned pool, so Locus does
  // not treat it as one (an asynchronous copy would record the pool's stream use on it).
  Producer p;
  p.fill_floats();
  p.shape = {3};
  const Tensor y = from_dlpack(p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}, 0, {kDLCUDAHost, 0}));
  EXPECT_TRUE(y.is_cpu());
  EXPECT_FALSE(y.is_pinned());
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 2}));
}

TEST(DLPackLifetime, ImportDeleterRunsOnceWhenTheLastViewDies) {
  Producer p;
  p.fill_floats();
  p.shape = {4, 4};
  {
    Tensor y = from_dlpack(p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}));
    Tensor view = y.narrow(0, 1, 2);
    Tensor detached = y.detach();
    Tensor handle = y;
    y = Tensor();
    handle = Tensor();
    EXPECT_EQ(p.deleter_calls, 0);
    view = Tensor();
    EXPECT_EQ(p.deleter_calls, 0);
    EXPECT_EQ(values(detached.sum()), (std::vector<double>{120}));
  }
  EXPECT_EQ(p.deleter_calls, 1);

  // The legacy struct, and a result computed from the import, which owns its own memory.
  Tensor sum;
  {
    const Tensor y = from_dlpack(p.lend<DLManagedTensor>({kDLFloat, 32, 1}));
    sum = y * 2;
  }
  EXPECT_EQ(p.deleter_calls, 2);
  EXPECT_EQ(values(sum.sum()), (std::vector<double>{240}));
}

TEST(DLPackLifetime, ReExportedImportWaitsForBothConsumers) {
  Producer p;
  p.fill_floats();
  p.shape = {8};
  Tensor y = from_dlpack(p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}));
  DLManagedTensor* again = to_dlpack(y.narrow(0, 2, 3));
  EXPECT_EQ(again->dl_tensor.data, p.bytes + 8);
  y = Tensor();
  EXPECT_EQ(p.deleter_calls, 0) << "the second consumer still holds the memory";
  again->deleter(again);
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST(DLPackLifetime, ExportKeepsLocusMemoryUntilTheDeleter) {
  MemoryBaseline baseline(kCpu);
  const int64_t before = memory::memory_allocated(kCpu);
  Tensor x = full({512, 512}, 3.f);
  const int64_t held = memory::memory_allocated(kCpu);
  EXPECT_GE(held - before, 512 * 512 * 4);
  DLManagedTensorVersioned* m = to_dlpack_versioned(x);
  x = Tensor();
  EXPECT_EQ(memory::memory_allocated(kCpu), held) << "the consumer still holds the memory";
  EXPECT_EQ(static_cast<const float*>(m->dl_tensor.data)[512 * 512 - 1], 3.f);
  m->deleter(m);
  EXPECT_EQ(memory::memory_allocated(kCpu), before);
}

TEST(DLPackLifetime, ExportDeleterRunsExactlyOnceFromAnyThread) {
  MemoryBaseline baseline(kCpu);
  int calls = 0;
  {
    Tensor x = ones({1000});
    DLManagedTensor* m = counting(to_dlpack(x), &calls);
    Tensor y = from_dlpack(counting(to_dlpack_versioned(x), &calls));
    x = Tensor();
    std::thread consumer([m] { m->deleter(m); });
    consumer.join();
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(values(y.sum()), (std::vector<double>{1000}));
  }
  EXPECT_EQ(calls, 2);
}

TEST(DLPackLifetime, ImportedMemoryIsNotCountedAsLocus) {
  Producer p;
  p.fill_floats();
  p.shape = {256};
  const int64_t before = memory::memory_allocated(kCpu);
  Tensor y = from_dlpack(p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}));
  EXPECT_EQ(memory::memory_allocated(kCpu), before) << "the producer's memory is the producer's";
  y = Tensor();
  EXPECT_EQ(memory::memory_allocated(kCpu), before);
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST(DLPackLifetime, RoundTripsReturnToTheBaseline) {
  MemoryBaseline baseline(kCpu);
  for (const auto& d : dlpack_dtypes()) {
    Tensor x = counting_up(1 << 12, d.dtype);
    Tensor a = from_dlpack(to_dlpack_versioned(x));
    Tensor b = from_dlpack(to_dlpack(a.narrow(0, 1, 100)));
    x = Tensor();
    a = Tensor();
    EXPECT_EQ(b.numel(), 100);
  }
}

}  // namespace
}  // namespace locus
