// DLPack's refusals, each with its exact type and message: read-only memory refuses every write,
// exports refuse what a consumer must not get, and imports refuse what Locus cannot hold while
// leaving the struct (and the duty to call its deleter) with the caller.

#include <functional>

#include "tests/interop/dlpack_test_util.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_error;
using testing::Producer;
using testing::values;

const std::string kReadOnlyTail =
    "] cannot write into read-only memory (a tensor imported through DLPack with the read-only flag, which its "
    "producer does not allow writing); write into a copy: t.clone()";

std::string read_only_message(const std::string& op) { return "[locus::" + op + kReadOnlyTail; }

Tensor read_only_import(Producer& p) {
  p.fill_floats();
  p.shape = {2, 3};
  return from_dlpack(p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}, 0, {kDLCPU, 0}, 0, DLPACK_FLAG_BITMASK_READ_ONLY));
}

TEST(DLPackReadOnly, EveryWriteIsRefusedBeforeItHappens) {
  Producer p;
  Tensor y = read_only_import(p);
  const std::vector<double> original{0, 1, 2, 3, 4, 5};
  expect_error<ValueError>([&] { y.add_(1); }, read_only_message("add"));
  expect_error<ValueError>([&] { y.mul_(y); }, read_only_message("mul"));
  expect_error<ValueError>([&] { y.relu_(); }, read_only_message("relu"));
  expect_error<ValueError>([&] { y.clamp_(1, 2); }, read_only_message("clamp"));
  expect_error<ValueError>([&] { y.copy_(zeros({2, 3})); }, read_only_message("copy_"));
  expect_error<ValueError>([&] { y.fill_(2); }, read_only_message("fill_"));
  expect_error<ValueError>([&] { y.zero_(); }, read_only_message("fill_"));
  expect_error<ValueError>([&] { add_out(y, ones({2, 3}), ones({2, 3})); }, read_only_message("add"));
  Tensor square = y.narrow(1, 0, 2);
  expect_error<ValueError>([&] { mm_out(square, ones({2, 2}), ones({2, 2})); }, read_only_message("mm"));
  // Views share the memory, and so the mark.
  expect_error<ValueError>([&] { y.select(0, 1).sub_(1); }, read_only_message("sub"));
  expect_error<ValueError>([&] { y.detach().neg_(); }, read_only_message("neg"));
  EXPECT_EQ(values(y), original) << "nothing was written";
  EXPECT_EQ(p.deleter_calls, 0);
}

TEST(DLPackReadOnly, ReadsViewsAndCopiesWork) {
  Producer p;
  const Tensor y = read_only_import(p);
  EXPECT_EQ(values(y.sum()), (std::vector<double>{15}));
  EXPECT_EQ(values(y.t() * 2), (std::vector<double>{0, 6, 2, 8, 4, 10}));
  Tensor c = y.clone();
  c.add_(1);
  EXPECT_EQ(values(c), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  Tensor dst = zeros({2, 3});
  dst.copy_(y);
  EXPECT_EQ(values(dst), values(y));
  EXPECT_EQ(values(y.to(kFloat64)), values(y));
}

TEST(DLPackReadOnly, ReExportCarriesTheFlagOrRefuses) {
  Producer p;
  const Tensor y = read_only_import(p);
  DLManagedTensorVersioned* m = to_dlpack_versioned(y);
  EXPECT_EQ(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  const Tensor again = from_dlpack(m);
  expect_error<ValueError>([&] { Tensor(again).fill_(0); }, read_only_message("fill_"));
  expect_error<ValueError>(
      [&] { to_dlpack(y); },
      "[locus::to_dlpack] the tensor's memory is read-only (imported through DLPack with the read-only flag), and the "
      "legacy DLManagedTensor cannot say so; use to_dlpack_versioned(), which carries the flag, or export a writable "
      "copy: to_dlpack(t.clone())");
  DLManagedTensor* copy = to_dlpack(y.clone());
  from_dlpack(copy).fill_(1);  // writable
}

TEST(DLPackExportErrors, WhatAConsumerMustNotGet) {
  expect_error<ValueError>([] { to_dlpack_versioned(Tensor()); },
                           "[locus::to_dlpack_versioned] the tensor is undefined (default-constructed); nothing to export");
  const Tensor w = ones({3}).requires_grad_();
  expect_error<ValueError>([&] { to_dlpack(w); },
                           "[locus::to_dlpack] can't export a tensor that requires grad, since the consumer's reads and "
                           "writes would bypass autograd; export t.detach() instead");
  DLManagedTensor* m = to_dlpack(w.detach());
  EXPECT_EQ(m->dl_tensor.data, w.data_ptr());
  m->deleter(m);
  const Tensor s = ones({3}, Device("sim:0"));
  const std::string sim_message =
      "cannot export a tensor on sim:0: DLPack has no device for the simulated accelerator, and handing its memory out "
      "as host memory would let code pass on sim that fails on cuda; copy it to the host first: t.cpu()";
  expect_error<ValueError>([&] { to_dlpack_versioned(s); }, "[locus::to_dlpack_versioned] " + sim_message);
  expect_error<ValueError>([&] { to_dlpack(s); }, "[locus::to_dlpack] " + sim_message);
  DLManagedTensor* host = to_dlpack(s.cpu());
  host->deleter(host);
}

// Imports that fail leave the struct with the caller: its deleter has not run, and runs once
// when the caller calls it.
template <class Managed>
void expect_refused_and_left(Producer& p, Managed* m, const std::function<void()>& check) {
  check();
  EXPECT_EQ(p.deleter_calls, 0) << "a refused struct stays the caller's";
  m->deleter(m);
  EXPECT_EQ(p.deleter_calls, 1);
  p.deleter_calls = 0;
}

TEST(DLPackImportErrors, NullStructsAndOtherMajorVersions) {
  expect_error<ValueError>([] { from_dlpack(static_cast<DLManagedTensorVersioned*>(nullptr)); },
                           "[locus::from_dlpack] the DLManagedTensorVersioned pointer is null");
  expect_error<ValueError>([] { from_dlpack(static_cast<DLManagedTensor*>(nullptr)); },
                           "[locus::from_dlpack] the DLManagedTensor pointer is null");
  Producer p;
  p.shape = {2};
  auto* m = p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1});
  m->version = DLPackVersion{2, 0};
  expect_refused_and_left(p, m, [&] {
    expect_error<ValueError>([&] { from_dlpack(m); },
                             "[locus::from_dlpack] the tensor is DLPack 2.0, and Locus reads DLPack 1.x; the caller "
                             "keeps the struct and must call its deleter");
  });
}

TEST(DLPackImportErrors, DTypesLocusLacks) {
  const std::string tail =
      " has no Locus dtype; Locus has bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, one "
      "lane each: convert on the producer's side first";
  const std::vector<std::pair<DLDataType, std::string>> cases{
      {{kDLComplex, 64, 1}, "complex64 (code 5, 64 bits, 1 lane)"},
      {{kDLUInt, 16, 1}, "uint16 (code 1, 16 bits, 1 lane)"},
      {{kDLUInt, 64, 1}, "uint64 (code 1, 64 bits, 1 lane)"},
      {{kDLFloat, 32, 4}, "float32x4 (code 2, 32 bits, 4 lanes)"},
      {{kDLFloat, 8, 1}, "float8 (code 2, 8 bits, 1 lane)"},
      {{kDLFloat8_e4m3fn, 8, 1}, "float8_e4m3fn (code 10, 8 bits, 1 lane)"},
      {{kDLBool, 1, 1}, "bool1 (code 6, 1 bits, 1 lane)"},
      {{kDLOpaqueHandle, 64, 1}, "opaque_handle64 (code 3, 64 bits, 1 lane)"},
      {{200, 32, 1}, "unknown (code 200, 32 bits, 1 lane)"},
  };
  Producer p;
  p.shape = {2};
  for (const auto& [dtype, dtype_text] : cases) {
    const std::string& name = dtype_text;  // clang 14: a lambda cannot capture a structured binding
    auto* m = p.lend<DLManagedTensorVersioned>(dtype);
    expect_refused_and_left(p, m, [&] {
      expect_error<DTypeError>([&] { from_dlpack(m); }, "[locus::from_dlpack] DLPack dtype " + name + tail);
    });
  }
}

TEST(DLPackImportErrors, DevicesLocusLacks) {
  Producer p;
  p.shape = {2};
  const std::string tail =
      " has no Locus device; Locus imports kDLCPU and kDLCUDAHost (as cpu) and kDLCUDA (as cuda:N): copy the tensor "
      "to one of those on the producer's side first";
  for (const auto& [type, device_text] : std::vector<std::pair<DLDeviceType, std::string>>{
           {kDLROCM, "kDLROCM (10)"}, {kDLMetal, "kDLMetal (8)"}, {kDLCUDAManaged, "kDLCUDAManaged (13)"},
           {kDLExtDev, "kDLExtDev (12)"}, {static_cast<DLDeviceType>(99), "type 99"}}) {
    const std::string& name = device_text;  // as above
    auto* m = p.lend<DLManagedTensor>({kDLFloat, 32, 1}, 0, {type, 0});
    expect_refused_and_left(p, m, [&] {
      expect_error<ValueError>([&] { from_dlpack(m); }, "[locus::from_dlpack] DLPack device " + name + tail);
    });
  }
  auto* bad_id = p.lend<DLManagedTensor>({kDLFloat, 32, 1}, 0, {kDLCUDA, -1});
  expect_refused_and_left(p, bad_id, [&] {
    expect_error<ValueError>([&] { from_dlpack(bad_id); },
                             "[locus::from_dlpack] DLPack device kDLCUDA has device_id -1, which names no CUDA device");
  });
  auto* cuda = p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}, 0, {kDLCUDA, 0});
  expect_refused_and_left(p, cuda, [&] {
    if (cuda::is_available()) {
      cuda->dl_tensor.device.device_id = cuda::device_count();
      EXPECT_THROW(from_dlpack(cuda), IndexError);
    } else {
      try {
        from_dlpack(cuda);
        ADD_FAILURE() << "a CUDA import without a GPU must fail";
      } catch (const BackendUnavailableError& e) {
        EXPECT_NE(std::string(e.what()).find(cuda::unavailable_reason()), std::string::npos) << e.what();
      }
    }
  });
}

TEST(DLPackImportErrors, LayoutsLocusCannotHold) {
  Producer p;
  p.shape = {2, 3};
  auto refuse = [&](auto* m, auto expect) { expect_refused_and_left(p, m, [&] { expect(m); }); };
  auto* negative_ndim = p.lend<DLManagedTensor>({kDLFloat, 32, 1});
  negative_ndim->dl_tensor.ndim = -1;
  refuse(negative_ndim, [](DLManagedTensor* m) {
    expect_error<ValueError>([&] { from_dlpack(m); }, "[locus::from_dlpack] ndim is -1; it must be 0 or more");
  });
  auto* null_shape = p.lend<DLManagedTensor>({kDLFloat, 32, 1});
  null_shape->dl_tensor.shape = nullptr;
  refuse(null_shape, [](DLManagedTensor* m) {
    expect_error<ValueError>([&] { from_dlpack(m); }, "[locus::from_dlpack] shape is null for a tensor of 2 dims");
  });
  auto* null_data = p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1});
  null_data->dl_tensor.data = nullptr;
  refuse(null_data, [](DLManagedTensorVersioned* m) {
    expect_error<ValueError>([&] { from_dlpack(m); }, "[locus::from_dlpack] data is null for a tensor of 6 elements");
  });
  auto* misaligned = p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}, /*byte_offset=*/2);
  refuse(misaligned, [](DLManagedTensorVersioned* m) {
    expect_error<ValueError>([&] { from_dlpack(m); },
                             "[locus::from_dlpack] the first element (data + byte_offset) is not aligned to its 4-byte "
                             "elements; Locus kernels read whole elements: import an aligned copy");
  });
  auto* far = p.lend<DLManagedTensorVersioned>({kDLFloat, 32, 1}, /*byte_offset=*/uint64_t{1} << 63);
  refuse(far, [](DLManagedTensorVersioned* m) {
    expect_error<ShapeError>([&] { from_dlpack(m); },
                             "[locus::from_dlpack] byte_offset 9223372036854775808 is past what int64 can address");
  });
  p.strides = {3, -1};
  auto* backwards = p.lend<DLManagedTensor>({kDLFloat, 32, 1});
  refuse(backwards, [](DLManagedTensor* m) {
    expect_error<ShapeError>([&] { from_dlpack(m); },
                             "[locus::from_dlpack] stride -1 of dim 1 is negative, and Locus tensors have non-negative "
                             "strides; import a copy in the producer's order (numpy.ascontiguousarray, say)");
  });
  p.strides = {int64_t{1} << 62, 1};
  auto* huge = p.lend<DLManagedTensor>({kDLFloat, 32, 1});
  refuse(huge, [](DLManagedTensor* m) {
    expect_error<ShapeError>([&] { from_dlpack(m); },
                             "[locus::from_dlpack] byte_offset 0 plus the strides reach past what int64 can address");
  });
  p.strides = {INT64_MAX, 1};
  auto* overflow = p.lend<DLManagedTensor>({kDLFloat, 32, 1});
  refuse(overflow, [](DLManagedTensor* m) {
    expect_error<ShapeError>([&] { from_dlpack(m); }, "[locus::from_dlpack] the strides reach past what int64 can address");
  });
  p.strides = {};
  p.shape = {2, -3};
  auto* negative_size = p.lend<DLManagedTensor>({kDLFloat, 32, 1});
  refuse(negative_size, [](DLManagedTensor* m) {
    expect_error<ShapeError>([&] { from_dlpack(m); },
                             "[locus::from_dlpack] negative dimension -3 at index 1 in shape [2, -3]");
  });
}

}  // namespace
}  // namespace locus
