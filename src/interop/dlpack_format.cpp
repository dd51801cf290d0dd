#include "src/interop/dlpack_format.h"

#include "locus/errors.h"
#include "src/runtime/device_runtime.h"

namespace locus::interop {
namespace {

struct DTypeEntry {
  DType dtype;
  uint8_t code;
  uint8_t bits;
};

// bool is one byte per element in Locus, which is DLPack's kDLBool with 8 bits.
constexpr DTypeEntry kDTypes[] = {
    {DType::Bool, kDLBool, 8},       {DType::UInt8, kDLUInt, 8},       {DType::Int8, kDLInt, 8},
    {DType::Int16, kDLInt, 16},      {DType::Int32, kDLInt, 32},       {DType::Int64, kDLInt, 64},
    {DType::Float16, kDLFloat, 16},  {DType::BFloat16, kDLBfloat, 16}, {DType::Float32, kDLFloat, 32},
    {DType::Float64, kDLFloat, 64},
};
static_assert(std::size(kDTypes) == kNumDTypes, "every Locus dtype has its DLPack name");

// DLDataTypeCode's names, by code; the float8/6/4 names carry their width already.
constexpr std::string_view kCodeNames[] = {
    "int",           "uint",          "float",         "opaque_handle",      "bfloat",
    "complex",       "bool",          "float8_e3m4",   "float8_e4m3",        "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",    "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
};
constexpr uint8_t kFirstSizedCode = kDLFloat8_e3m4;  // from here on the name includes the width

struct DeviceName {
  DLDeviceType type;
  std::string_view name;
};
constexpr DeviceName kDeviceNames[] = {
    {kDLCPU, "kDLCPU"},           {kDLCUDA, "kDLCUDA"},         {kDLCUDAHost, "kDLCUDAHost"},
    {kDLOpenCL, "kDLOpenCL"},     {kDLVulkan, "kDLVulkan"},     {kDLMetal, "kDLMetal"},
    {kDLVPI, "kDLVPI"},           {kDLROCM, "kDLROCM"},         {kDLROCMHost, "kDLROCMHost"},
    {kDLExtDev, "kDLExtDev"},     {kDLCUDAManaged, "kDLCUDAManaged"}, {kDLOneAPI, "kDLOneAPI"},
    {kDLWebGPU, "kDLWebGPU"},     {kDLHexagon, "kDLHexagon"},   {kDLMAIA, "kDLMAIA"},
};

std::string prefix(std::string_view op) { return "[locus::" + std::string(op) + "] "; }

}  // namespace

DLDataType to_dl_dtype(DType dtype) noexcept {
  for (const DTypeEntry& e : kDTypes)
    if (e.dtype == dtype) return DLDataType{e.code, e.bits, 1};
  return DLDataType{kDLOpaqueHandle, 0, 0};  // unreachable: the table covers every dtype
}

DType from_dl_dtype(DLDataType dtype, std::string_view op) {
  if (dtype.lanes == 1)
    for (const DTypeEntry& e : kDTypes)
      if (e.code == dtype.code && e.bits == dtype.bits) return e.dtype;
  std::string known;
  for (const DTypeEntry& e : kDTypes) known += (known.empty() ? "" : ", ") + std::string(dtype_name(e.dtype));
  throw DTypeError(prefix(op) + "DLPack dtype " + describe(dtype) + " (code " + std::to_string(dtype.code) + ", " +
                   std::to_string(dtype.bits) + " bits, " + std::to_string(dtype.lanes) +
                   (dtype.lanes == 1 ? " lane" : " lanes") + ") has no Locus dtype; Locus has " + known +
                   ", one lane each: convert on the producer's side first");
}

DLDevice to_dl_device(Device device, std::string_view op) {
  if (device.is_cpu()) return DLDevice{kDLCPU, 0};
  if (device.is_cuda()) return DLDevice{kDLCUDA, device.index()};
  if (device.is_sim())
    throw ValueError(prefix(op) + "cannot export a tensor on " + device.str() +
                     ": DLPack has no device for the simulated accelerator, and handing its memory out as host "
                     "memory would let code pass on sim that fails on cuda; copy it to the host first: t.cpu()");
  throw ValueError(prefix(op) + "cannot export a tensor on " + device.str() + ": Locus exports cpu and cuda tensors; " +
                   "copy it to the host first: t.cpu()");
}

Device from_dl_device(DLDevice device, std::string_view op) {
  switch (device.device_type) {
    case kDLCPU:
    case kDLCUDAHost: return Device(DeviceType::CPU);
    case kDLCUDA:
      if (device.device_id < 0 || device.device_id > 127)
        throw ValueError(prefix(op) + "DLPack device kDLCUDA has device_id " + std::to_string(device.device_id) +
                         ", which names no CUDA device");
      return runtime::resolve_device(Device(DeviceType::CUDA, device.device_id));
    default:
      throw ValueError(prefix(op) + "DLPack device " + describe(device.device_type) +
                       " has no Locus device; Locus imports kDLCPU and kDLCUDAHost (as cpu) and kDLCUDA (as cuda:N): "
                       "copy the tensor to one of those on the producer's side first");
  }
}

std::string describe(DLDataType dtype) {
  if (dtype.code >= std::size(kCodeNames)) return "unknown";
  std::string name(kCodeNames[dtype.code]);
  if (dtype.code < kFirstSizedCode) name += std::to_string(dtype.bits);
  if (dtype.lanes != 1) {
    name += 'x';
    name += std::to_string(dtype.lanes);
  }
  return name;
}

std::string describe(DLDeviceType type) {
  for (const DeviceName& d : kDeviceNames)
    if (d.type == type) return std::string(d.name) + " (" + std::to_string(static_cast<int>(type)) + ")";
  return "type " + std::to_string(static_cast<int>(type));
}

}  // namespace locus::interop
