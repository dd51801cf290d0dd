// Note [Option checks]
// Every option of `locus train` and `locus bench` is checked before anything runs, and a refusal
// is a message a shell user can act on: the valid range in plain numbers ("expected an integer
// from 1 to 100000, got '0'", where CLI11's PositiveNumber printed a 309-digit bound), the
// devices this machine has for a --device it lacks (the library's BackendUnavailableError tells a
// C++ programmer to call best_device()), the directory that is missing for an output file (so a
// long training run does not end in a failed save). CLI11 puts the option's name in front
// ("--epochs: ...") and `locus` exits with 2, a usage error. Numbers are parsed here, strictly:
// CLI11 would read "-1" as 2^64-1 for an unsigned option, "010" as octal and "0x10" as hex.

#include "tools/locus/option_checks.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "locus/locus.h"

namespace locus::cli {
namespace {

std::string plain(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "a", "a or b", "a, b or c" (`last` joins the final two).
std::string listing(const std::vector<std::string>& items, const char* last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? std::string(" ") + last + " " : ", ") + items[i];
  return out;
}

template <class T>
std::optional<T> parse_integer(const std::string& text) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::optional<double> parse_number(const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<std::string> devices_here() {
  std::vector<std::string> out{"cpu"};
  for (int i = 0; i < cuda::device_count(); ++i) out.push_back("cuda:" + std::to_string(i));
  for (int i = 0; i < sim::device_count(); ++i) out.push_back("sim:" + std::to_string(i));
  return out;
}

std::string device_problem(const std::string& text) {
  if (text == "auto") return {};
  std::optional<Device> device;
  try {
    device = Device(std::string_view(text));
  } catch (const ValueError&) {
    return "expected auto, cpu, cuda, cuda:N, sim or sim:N, got '" + text + "'";
  }
  if (device->is_cpu()) return {};
  const std::string here = "; the devices here are " + listing(devices_here(), "and") + " (--device auto picks the best)";
  const std::string display(device_type_display_name(device->type()));
  if (!is_available(device->type())) {
    const std::string reason = device->is_cuda()                    ? cuda::unavailable_reason()
                               : device->type() == DeviceType::MPS ? "Apple silicon only"
                                                                    : "see `locus info`";
    return text + " cannot be used: " + display + " is not available (" + reason + ")" + here;
  }
  const int count = device_count(device->type());
  if (device->has_index() && device->index() >= count)
    return text + " does not exist: this machine has " + std::to_string(count) + " " + display + " device" +
           (count == 1 ? "" : "s") + here;
  return {};
}

std::string write_problem(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return "expected a file name, got ''";
  std::error_code ec;
  const std::string refusal = "cannot write '" + path + "': ";
  if (fs::is_directory(path, ec)) return refusal + "it is a directory";
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(dir, ec)) return refusal + "the directory '" + dir + "' does not exist";
  // A checkpoint is written beside its name and renamed over it, so the directory must be
  // writable, not only an existing file.
  if (::access(dir.c_str(), W_OK) != 0)
    return refusal + "the directory '" + dir + "' is not writable (" + std::strerror(errno) + ")";
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) return refusal + std::strerror(errno);
  return {};
}

}  // namespace

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const std::optional<int64_t> v = parse_integer<int64_t>(text);
        if (!v || *v < lo || *v > hi) return "expected " + range + ", got '" + text + "'";
        text = std::to_string(*v);
        return {};
      },
      std::to_string(lo) + " to " + std::to_string(hi));
}

CLI::Validator unsigned_integer() {
  const std::string range = "an integer from 0 to " + std::to_string(UINT64_MAX);
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        const std::optional<uint64_t> v = parse_integer<uint64_t>(text);
        if (!v) return "expected " + range + ", got '" + text + "'";
        text = std::to_string(*v);
        return {};
      },
      "0 to " + std::to_string(UINT64_MAX));
}

CLI::Validator number_in(double lo, double hi) {
  const std::string range = plain(lo) + " to " + plain(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const std::optional<double> v = parse_number(text);
        if (!v || *v < lo || *v > hi) return "expected a number from " + range + ", got '" + text + "'";
        return {};
      },
      range);
}

CLI::Validator positive_number(const std::string& example) {
  return CLI::Validator(
      [example](std::string& text) -> std::string {
        const std::optional<double> v = parse_number(text);
        if (!v || !(*v > 0)) return "expected a number greater than 0, such as " + example + ", got '" + text + "'";
        return {};
      },
      "greater than 0");
}

CLI::Validator non_negative_number(const std::string& example) {
  return CLI::Validator(
      [example](std::string& text) -> std::string {
        const std::optional<double> v = parse_number(text);
        if (!v || !(*v >= 0)) return "expected a number of 0 or more, such as " + example + ", got '" + text + "'";
        return {};
      },
      "0 or more");
}

CLI::Validator one_of(std::vector<std::string> choices) {
  const std::string names = listing(choices, "or");
  return CLI::Validator(
      [choices, names](std::string& text) -> std::string {
        for (const std::string& c : choices)
          if (text == c) return {};
        return "expected " + names + ", got '" + text + "'";
      },
      names);
}

CLI::Validator device_on_this_machine() {
  return CLI::Validator(device_problem, "a device this machine has");
}

CLI::Validator writable_file() { return CLI::Validator(write_problem, "a file name"); }

CLI::Validator existing_directory(const std::string& hint) {
  return CLI::Validator(
      [hint](std::string& text) -> std::string {
        std::error_code ec;
        if (std::filesystem::is_directory(text, ec)) return {};
        return "the directory '" + text + "' does not exist (" + hint + ")";
      },
      "a directory");
}

CLI::Validator existing_file() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::error_code ec;
        if (std::filesystem::is_regular_file(text, ec)) return {};
        if (std::filesystem::is_directory(text, ec)) return "'" + text + "' is a directory, not a file";
        return "the file '" + text + "' does not exist";
      },
      "a file");
}

}  // namespace locus::cli
