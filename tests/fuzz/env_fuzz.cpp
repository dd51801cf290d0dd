// Fuzz target: the LOCUS_* environment variables read after startup: LOCUS_SIM_MEMORY and
// LOCUS_SIM_DEVICES (sim::reset_config) and LOCUS_DEVICE (best_device). The first byte picks the
// variable, the rest is its value.
#include <cstdlib>
#include <string>

#include "locus/locus.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"LOCUS_SIM_MEMORY", "LOCUS_SIM_DEVICES", "LOCUS_DEVICE"};
  const char* name = kNames[data[0] % 3];
  std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  value = value.substr(0, value.find('\0'));  // an environment value ends at its first NUL
  ::setenv(name, value.c_str(), 1);
  try {
    if (name[6] == 'S') {
      locus::sim::reset_config();
      const locus::sim::Config c = locus::sim::config();
      if (c.device_count < 1 || c.device_count > 64 || c.memory_bytes < 1) __builtin_trap();
    } else {
      (void)locus::best_device();
    }
  } catch (const locus::Error&) {
  }
  ::unsetenv(name);
  locus::sim::reset_config();
  return 0;
}
