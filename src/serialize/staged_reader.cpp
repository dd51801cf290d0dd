// Note [Loading without a host copy]
// load(path, device) used to read every tensor whole into host memory and then copy it over, so a
// checkpoint cost host memory of its own size, and a tensor too large for the device failed only
// after the host had paid for it (or failed on the host, naming cpu, when the host lacked the
// room). Now load() allocates every tensor on the target device before reading a byte (the
// allocator's OutOfMemoryError names that device), and this reader moves the bytes through two
// staging buffers of kStagingBytes: while the device copies one chunk (asynchronously on CUDA,
// from pinned memory) the file fills the other. The checksum is taken from the staging buffer,
// so the device's bytes are never read back. On the CPU the file is read straight into the
// tensor. Copies go through the device's runtime (DeviceRuntime::copy_bytes), like every
// host-to-device transfer.

#include "src/serialize/staged_reader.h"

#include <algorithm>
#include <cstring>

#include "locus/factories.h"
#include "src/runtime/device_runtime.h"
#include "src/serialize/checksum.h"
#include "src/serialize/safetensors_header.h"

namespace locus::serialize {

StagedReader::StagedReader(std::FILE* file, std::string path, Device target, uint64_t largest)
    : file_(file), path_(std::move(path)), target_(target), capacity_(std::min(kStagingBytes, largest)) {
  if (!target_.is_cpu()) asynchronous_ = runtime::runtime(target_.type()).capabilities().asynchronous;
}

StagedReader::~StagedReader() { finish(); }

void StagedReader::finish() {
  for (const Tensor& s : staging_)
    if (s.defined()) s.impl()->storage()->wait_for_pending_work();
}

void StagedReader::read_exactly(void* dst, uint64_t n) {
  if (n && std::fread(dst, 1, n, file_) != n) fail(path_, "truncated: the file ended while reading");
}

void StagedReader::read_into(const Tensor& t, uint32_t& crc) {
  const uint64_t n = t.nbytes();
  if (n == 0) return;
  auto* dst = static_cast<char*>(t.data_ptr());
  if (target_.is_cpu()) {
    read_exactly(dst, n);
    crc = add_bytes(crc, dst, n);
    return;
  }
  runtime::DeviceRuntime& rt = runtime::runtime(target_.type());
  for (uint64_t done = 0; done < n;) {
    Tensor& buffer = staging_[next_];
    next_ ^= 1;
    if (!buffer.defined())
      buffer = empty({static_cast<int64_t>(capacity_)}, TensorOptions().dtype(kUInt8).pinned_memory(asynchronous_));
    detail::Storage* storage = buffer.impl()->storage().get();
    storage->wait_for_pending_work();  // the copy that last read this buffer has finished
    const uint64_t m = std::min(capacity_, n - done);
    read_exactly(buffer.data_ptr(), m);
    crc = add_bytes(crc, buffer.data_ptr(), m);
    runtime::CopyRequest request;
    request.dst = dst + done, request.dst_device = t.device();
    request.src = buffer.data_ptr(), request.src_device = buffer.device();
    request.n = m, request.non_blocking = asynchronous_;
    if (storage->pinned()) request.pinned_block = &storage->data_ptr();
    if (auto pending = rt.copy_bytes(request)) storage->set_pending_work(std::move(pending));
    done += m;
  }
}

}  // namespace locus::serialize
