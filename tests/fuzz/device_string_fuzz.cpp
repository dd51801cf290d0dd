// Fuzz target: device strings ("cuda:1", "sim:0") as Device's parser and to() take them.
#include <string>

#include "locus/device.h"
#include "locus/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string spec(reinterpret_cast<const char*>(data), size);
  try {
    const locus::Device d(spec);
    // What parses must print back as itself, and parse again to the same device.
    if (locus::Device(d.str()) != d) __builtin_trap();
  } catch (const locus::Error&) {
  }
  return 0;
}
