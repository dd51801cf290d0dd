#pragma once
// How DLPack names Locus's dtypes and devices, both ways, and how messages spell DLPack's.
// One table each, shared by the export and the import.

#include <dlpack/dlpack.h>

#include <string>
#include <string_view>

#include "locus/device.h"
#include "locus/dtype.h"

namespace locus::interop {

/// DLPack's code, bits and lanes for `dtype`; every Locus dtype has one.
DLDataType to_dl_dtype(DType dtype) noexcept;
/// The Locus dtype of a DLPack dtype. DTypeError naming it, and the dtypes Locus has, when
/// there is none (complex, uint16, the float8 family, lanes != 1, ...). `op` prefixes messages.
DType from_dl_dtype(DLDataType dtype, std::string_view op);

/// DLPack's device for a cpu or cuda device. ValueError for the others: sim has no DLPack
/// device, and handing its memory out as host memory would let code pass on sim that fails on
/// cuda (docs/interop.md).
DLDevice to_dl_device(Device device, std::string_view op);
/// The Locus device of a DLPack device, checked to exist in this process: kDLCPU and
/// kDLCUDAHost are cpu, kDLCUDA N is cuda:N (BackendUnavailableError or IndexError when this
/// process cannot use it). ValueError for every other device type and a bad device_id.
Device from_dl_device(DLDevice device, std::string_view op);

/// "uint16", "complex64", "float32x4", "float8_e4m3fn": a DLPack dtype as messages name it.
std::string describe(DLDataType dtype);
/// "kDLROCM (10)": a DLPack device type as messages name it.
std::string describe(DLDeviceType type);

}  // namespace locus::interop
