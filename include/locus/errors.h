#pragma once
/// \file errors.h
/// The typed errors every Locus call throws. All derive from locus::Error, a std::runtime_error,
/// and their messages say what went wrong, on which device, and what to do about it.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "locus/device.h"

namespace locus {

/// Base of every Locus error.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A malformed argument: a bad device string, an out-of-range value, a wrong option.
class ValueError : public Error {
 public:
  using Error::Error;
};

/// Operands of one operation live on different devices.
class DeviceMismatchError : public Error {
 public:
  /// `op` is the public name ("add"), `argument` the operand found on the second device.
  DeviceMismatchError(Device first, Device second, std::string argument, std::string op);
  /// The error as a layer of nn::Sequential reports it, with its whole `message`: `module` is
  /// the layer's path in the model ("0", "1.2"), `argument` what reached it on the wrong device
  /// ("input"), `op` the op that found the mismatch.
  DeviceMismatchError(Device first, Device second, std::string argument, std::string op, std::string module,
                      const std::string& message);
  Device first() const noexcept { return first_; }
  Device second() const noexcept { return second_; }
  const std::string& argument() const noexcept { return argument_; }
  const std::string& op() const noexcept { return op_; }
  /// The path of the layer where the mismatch was found ("0", "1.2"); empty when the error did
  /// not pass through an nn::Sequential.
  const std::string& module() const noexcept { return module_; }

 private:
  Device first_, second_;
  std::string argument_, op_, module_;
};

/// Shapes that cannot be combined (broadcasting, matmul, view).
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// A dtype an operation cannot take (e.g. `sub` of two bool tensors).
class DTypeError : public Error {
 public:
  using Error::Error;
};

/// The operation has no kernel for this device and dtype, and the CPU fallback is off.
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

/// An allocation failed even after the allocator released its cached blocks.
class OutOfMemoryError : public Error {
 public:
  /// All sizes in bytes. `capacity`/`free_bytes` describe the device as a whole,
  /// `allocated`/`reserved` what this process's allocator holds on it, `segment` what the
  /// allocator asked the device for to serve the request (a whole segment, Note [Caching
  /// allocator]); 0 when it asked for the request itself.
  OutOfMemoryError(Device device, uint64_t requested, uint64_t capacity, uint64_t free_bytes,
                   uint64_t allocated, uint64_t reserved, uint64_t segment = 0);
  Device device() const noexcept { return device_; }
  uint64_t requested() const noexcept { return requested_; }
  uint64_t capacity() const noexcept { return capacity_; }
  uint64_t free_bytes() const noexcept { return free_; }
  uint64_t allocated() const noexcept { return allocated_; }
  uint64_t reserved() const noexcept { return reserved_; }
  /// The segment the allocator needed for the request (0: the request itself).
  uint64_t segment() const noexcept { return segment_; }

 private:
  Device device_;
  uint64_t requested_, capacity_, free_, allocated_, reserved_, segment_;
};

/// The device type is not usable in this build or on this machine (with the reason).
class BackendUnavailableError : public Error {
 public:
  using Error::Error;
};

/// An index outside its range: a dimension, an element, or a device that does not exist.
class IndexError : public Error {
 public:
  using Error::Error;
};

/// Reading or writing a file failed; the message names the file and the problem.
class IOError : public Error {
 public:
  using Error::Error;
};

/// A collective or process-group failure.
class DistributedError : public Error {
 public:
  using Error::Error;
};

/// "2.00 GiB", "512 bytes": the human form used in memory messages.
std::string format_bytes(uint64_t bytes);

}  // namespace locus

LOCUS_API_END
