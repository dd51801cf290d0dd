#pragma once
// The measuring method of ../shared/bench (calibrated repeat count, two warm-up calls, median
// of samples) and its JSON layout, shared by the CPU and GPU benchmarks, so compare.py sets
// Locus's figures beside PyTorch's. A small harness rather than Google Benchmark, whose
// statistics differ from the PyTorch side's.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace bench {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// One benchmark row.
struct Result {
  std::string name, unit;
  double median, min, max;
  int n;
  std::string note;
};

/// Runs bodies, keeps the rows, writes the JSON. `sync` (default: nothing) runs before each
/// clock reading, so asynchronous device work is inside the measured time.
class Harness {
 public:
  explicit Harness(std::function<void()> sync = [] {}) : sync_(std::move(sync)) {}

  /// body(n) performs the op n times; conv turns seconds per op into the reported unit.
  void run(const std::string& name, const std::function<void(long)>& body, const std::string& unit,
           const std::function<double(double)>& conv, int samples = 15, double target = 0.02,
           const std::string& note = "") {
    body(1);
    body(1);
    sync_();
    long n = 1;
    for (;;) {
      const double dt = time(body, n);
      if (dt >= target || n >= (1L << 24)) break;
      n = dt > 1e-4 ? std::max(n * 2, static_cast<long>(n * target / dt * 1.1)) : n * 10;
    }
    std::vector<double> v;
    for (int s = 0; s < samples; ++s) v.push_back(conv(time(body, n) / static_cast<double>(n)));
    std::sort(v.begin(), v.end());
    const double med = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    results_.push_back({name, unit, med, v.front(), v.back(), samples, note});
    std::printf("%-34s %12.3f %-8s (min %.3f, max %.3f)\n", name.c_str(), med, unit.c_str(), v.front(), v.back());
    std::fflush(stdout);
  }

  /// Adds a row measured by the caller (for calls that cannot simply be repeated).
  void record(const std::string& name, const std::string& unit, std::vector<double> samples, const std::string& note) {
    std::sort(samples.begin(), samples.end());
    const size_t m = samples.size() / 2;
    const double med = samples.size() % 2 ? samples[m] : 0.5 * (samples[m - 1] + samples[m]);
    results_.push_back({name, unit, med, samples.front(), samples.back(), static_cast<int>(samples.size()), note});
    std::printf("%-34s %12.3f %-8s (min %.3f, max %.3f)\n", name.c_str(), med, unit.c_str(), samples.front(), samples.back());
  }

  /// `text` as a JSON string's contents (notes quote code: `einsum("bi,oi->bo")`).
  static std::string json_escaped(const std::string& text) {
    std::string out;
    for (const char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out;
  }

  /// Writes {"impl", "meta", "results"}; `meta_json` is a JSON object's text.
  void write_json(const std::string& path, const std::string& impl, const std::string& meta_json) const {
    std::ofstream os(path);
    os << "{\"impl\": \"" << impl << "\", \"meta\": " << meta_json << ", \"results\": [";
    for (size_t i = 0; i < results_.size(); ++i) {
      const Result& r = results_[i];
      os << (i ? ", " : "") << "{\"name\": \"" << json_escaped(r.name) << "\", \"unit\": \"" << r.unit << "\", \"median\": " << r.median
         << ", \"min\": " << r.min << ", \"max\": " << r.max << ", \"n\": " << r.n << ", \"note\": \"" << json_escaped(r.note) << "\"}";
    }
    os << "]}\n";
  }

 private:
  double time(const std::function<void(long)>& body, long n) {
    sync_();
    const double t0 = now();
    body(n);
    sync_();
    return now() - t0;
  }
  std::function<void()> sync_;
  std::vector<Result> results_;
};

inline double us(double s) { return s * 1e6; }
inline double ms(double s) { return s * 1e3; }
inline std::function<double(double)> gbps(double bytes) { return [bytes](double s) { return bytes / s / 1e9; }; }
inline std::function<double(double)> flops(double flop, double scale) {
  return [flop, scale](double s) { return flop / s / scale; };
}
inline std::function<double(double)> gflops(double flop) { return flops(flop, 1e9); }

/// Command line: --json PATH and --only a,b,c (groups; all of `groups` when absent).
struct Options {
  std::string json;
  std::set<std::string> only;
  Options(int argc, char** argv, std::set<std::string> groups) : only(std::move(groups)) {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--json" && i + 1 < argc) {
        json = argv[++i];
      } else if (arg == "--only" && i + 1 < argc) {
        only.clear();
        const std::string list = argv[++i];
        for (size_t p = 0; p != std::string::npos;) {
          const size_t q = list.find(',', p);
          only.insert(list.substr(p, q == std::string::npos ? q : q - p));
          p = q == std::string::npos ? q : q + 1;
        }
      }
    }
  }
  bool wants(const std::string& group) const { return only.count(group) != 0; }
};

}  // namespace bench
