// Sort and top-k along the last dim of a contiguous [rows, n] input (Note in SortArgs), and the
// scans. See Note [CPU sort keys].
//
// Note [CPU sort keys]
// Each element becomes an unsigned integer key that orders as the element does: a float's bits
// with the sign bit flipped for positives and every bit flipped for negatives, after every NaN
// is made the one positive NaN (which then ranks above +inf, as PyTorch ranks NaN) and -0.0 is
// made +0.0 (which then ties with 0.0); a signed integer with its sign bit flipped; descending
// order complements the key. Ties go to the earlier position, so (key, position) is a total
// order: the full sort is the stable sort, and top-k is its first k on every device.
// Keys of at most 32 bits (float, float16, bfloat16, integers up to int32, bool) are packed with
// the position into one uint64, key high, position low, and a row is sorted by an LSD radix sort
// of the four key bytes: the positions start in order and each pass is stable, so ties stay in
// position order with no comparison at all; 64-bit keys (float64, int64) sort (key, position)
// pairs. A top-k at most an eighth of its row keeps a max-heap of k over one pass (a long single
// row: a heap per thread over its part, then merged); a larger one partially sorts the row. The
// values are then read from the row by position, so they come out bit for bit.

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

/// Element types whose key fits 32 bits.
template <class T>
constexpr bool kNarrowKey = sizeof(T) <= 4;

// Without branches: on random data a branch on the sign is a coin toss, and this runs once per
// element (a top-k's whole cost).
template <class U, class F>
U ordered_float_bits(F f) {
  constexpr U sign = U(1) << (8 * sizeof(U) - 1);
  const auto bits_of = [](F x) {
    U bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
  };
  const U bits = bits_of(f);
  const U negative = U(0) - (bits >> (8 * sizeof(U) - 1));  // all ones for a negative
  U key = bits ^ (negative | sign);
  key = f == F(0) ? sign : key;  // -0.0 takes +0.0's key
  return f != f ? (bits_of(std::numeric_limits<F>::quiet_NaN()) | sign) : key;  // every NaN the positive NaN's
}

/// The key of Note [CPU sort keys], before descending order complements it.
template <class T>
auto sort_key(T x) {
  using C = compute_t<T>;
  if constexpr (kNarrowKey<T>) {
    if constexpr (std::is_floating_point_v<C>) return ordered_float_bits<uint32_t>(static_cast<float>(C(x)));
    else if constexpr (std::is_signed_v<C>) return static_cast<uint32_t>(static_cast<int32_t>(x)) ^ 0x80000000u;
    else return static_cast<uint32_t>(x);
  } else {
    if constexpr (std::is_floating_point_v<C>) return ordered_float_bits<uint64_t>(static_cast<double>(x));
    else return static_cast<uint64_t>(x) ^ (uint64_t{1} << 63);
  }
}

/// Sorts packed (key << 32 | position) values by their key: four stable byte passes.
void radix_sort_by_high_half(std::vector<uint64_t>& v, std::vector<uint64_t>& scratch) {
  scratch.resize(v.size());
  for (int shift = 32; shift < 64; shift += 8) {
    size_t start[257] = {};
    for (const uint64_t x : v) ++start[((x >> shift) & 255) + 1];
    if (std::find(start + 1, start + 257, v.size()) != start + 257) continue;  // one bucket: nothing moves
    for (int b = 0; b < 256; ++b) start[b + 1] += start[b];
    for (const uint64_t x : v) scratch[start[(x >> shift) & 255]++] = x;
    v.swap(scratch);
  }
}

// Below this many elements a comparison sort of the packed values is faster than four passes.
constexpr int64_t kRadixMin = 512;

/// A (key, position) pair of a 64-bit key, ordered by key, then position.
struct Keyed {
  uint64_t key;
  int64_t position;
  bool operator<(const Keyed& o) const { return key != o.key ? key < o.key : position < o.position; }
};

int64_t position_of(uint64_t packed) { return static_cast<int64_t>(packed & 0xffffffffu); }
int64_t position_of(const Keyed& k) { return k.position; }

/// The k smallest of make(j) for j in [from, to), in a max-heap of k: one pass, no array of n.
/// An element can only enter when its value is not strictly beyond the heap's worst one's
/// (value_at(j), the element as the compute type; NaN and ±0 always pass), so most of the row is
/// only screened, 32 values at a time in a loop the compiler vectorizes, and a block with a
/// candidate is walked element by element with the exact (key, position) order.
template <class E, class Make, class ValueAt>
void smallest_k(int64_t from, int64_t to, int64_t k, bool descending, const Make& make, const ValueAt& value_at,
                std::vector<E>& heap) {
  heap.clear();
  if (k == 0 || from >= to) return;
  const int64_t fill = std::min(to, from + k);
  for (int64_t j = from; j < fill; ++j) heap.push_back(make(j));
  std::make_heap(heap.begin(), heap.end());
  auto worst = value_at(position_of(heap.front()));
  const auto consider = [&](int64_t j) {
    const E e = make(j);
    if (!(e < heap.front())) return;
    std::pop_heap(heap.begin(), heap.end());
    heap.back() = e;
    std::push_heap(heap.begin(), heap.end());
    worst = value_at(position_of(heap.front()));
  };
  constexpr int64_t kBlock = 32;
  int64_t j = fill;
  for (; j + kBlock <= to; j += kBlock) {
    int candidate = 0;
    if (descending) {
      for (int64_t c = 0; c < kBlock; ++c) candidate |= !(value_at(j + c) < worst);
    } else {
      for (int64_t c = 0; c < kBlock; ++c) candidate |= !(worst < value_at(j + c));
    }
    if (!candidate) continue;
    for (int64_t c = 0; c < kBlock; ++c) consider(j + c);
  }
  for (; j < to; ++j) consider(j);
}

// A top-k this much smaller than its row keeps a heap of k instead of ordering the row.
bool heap_pays(int64_t k, int64_t n) { return k * 8 <= n; }

/// Sorts or selects every row with elements E made by make(row, j) (Note [CPU sort keys]).
template <class T, class E, class Make>
void sort_rows(const ops::SortArgs& a, const Make& make) {
  const T* in = reinterpret_cast<const T*>(a.in);
  T* values = reinterpret_cast<T*>(a.values);
  const auto emit = [&](int64_t r, const std::vector<E>& sorted) {
    const T* row = in + r * a.n;
    for (int64_t j = 0; j < a.k; ++j) {
      const int64_t p = position_of(sorted[static_cast<size_t>(j)]);
      values[r * a.k + j] = row[p];
      a.indices[r * a.k + j] = p;
    }
  };
  // One long row's top-k: each thread a heap over its part of the row, then the parts' heaps merged.
  if (a.rows == 1 && a.k < a.n && heap_pays(a.k, a.n) && a.n * static_cast<int64_t>(sizeof(T)) >= kParallelBytes) {
    const int parts = max_threads();
    std::vector<std::vector<E>> heaps(static_cast<size_t>(parts));
    const int64_t span = (a.n + parts - 1) / parts;
    parallel_for(parts, true, [&](int64_t b, int64_t e) {
      for (int64_t part = b; part < e; ++part)
        smallest_k(std::min(a.n, part * span), std::min(a.n, (part + 1) * span), a.k,
                   a.descending, [&](int64_t j) { return make(in, j); }, [&](int64_t j) { return compute_t<T>(in[j]); },
                   heaps[static_cast<size_t>(part)]);
    }, 1);
    std::vector<E> merged;
    for (const auto& h : heaps) merged.insert(merged.end(), h.begin(), h.end());
    std::sort(merged.begin(), merged.end());
    return emit(0, merged);
  }
  const bool parallel = a.rows > 1 && a.rows * a.n * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.rows, parallel, [&](int64_t begin, int64_t end) {
    std::vector<E> elements, scratch;
    for (int64_t r = begin; r < end; ++r) {
      const T* row = in + r * a.n;
      const auto element = [&](int64_t j) { return make(row, j); };
      if (a.k < a.n && heap_pays(a.k, a.n)) {
        smallest_k(0, a.n, a.k, a.descending, element, [&](int64_t j) { return compute_t<T>(row[j]); }, elements);
        std::sort_heap(elements.begin(), elements.end());
      } else {
        elements.resize(static_cast<size_t>(a.n));
        for (int64_t j = 0; j < a.n; ++j) elements[static_cast<size_t>(j)] = element(j);
        if (a.k < a.n) std::partial_sort(elements.begin(), elements.begin() + a.k, elements.end());
        else if constexpr (std::is_same_v<E, uint64_t>) {
          if (a.n >= kRadixMin) radix_sort_by_high_half(elements, scratch);
          else std::sort(elements.begin(), elements.end());
        } else {
          std::sort(elements.begin(), elements.end());
        }
      }
      emit(r, elements);
    }
  }, 1);
}

template <class T>
void sort_typed(const ops::SortArgs& a) {
  if constexpr (kNarrowKey<T>) {
    if (a.n <= (int64_t{1} << 32)) {  // a position fits the packed value's 32 bits
      const uint32_t flip = a.descending ? 0xffffffffu : 0u;
      return sort_rows<T, uint64_t>(a, [flip](const T* row, int64_t j) {
        return (uint64_t{static_cast<uint32_t>(sort_key(row[j]) ^ flip)} << 32) | static_cast<uint64_t>(j);
      });
    }
  }
  const uint64_t flip = a.descending ? ~uint64_t{0} : 0;
  sort_rows<T, Keyed>(a, [flip](const T* row, int64_t j) { return Keyed{uint64_t{sort_key(row[j])} ^ flip, j}; });
}

template <class T>
void scan_typed(const ops::ScanArgs& a) {
  using A = std::conditional_t<is_float_v<T>, double, T>;  // as PyTorch's CPU accumulation type
  const T* in = reinterpret_cast<const T*>(a.in);
  T* out = reinterpret_cast<T*>(a.out);
  const bool prod = a.op == ops::OpId::Cumprod;
  const bool parallel = a.rows > 1 && a.rows * a.n * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.rows, parallel, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      A acc = prod ? A(1) : A(0);
      for (int64_t j = 0; j < a.n; ++j) {
        const A x = static_cast<A>(compute_t<T>(in[r * a.n + j]));
        acc = prod ? static_cast<A>(acc * x) : static_cast<A>(acc + x);
        out[r * a.n + j] = static_cast<T>(static_cast<compute_t<T>>(acc));
      }
    }
  }, 1);
}

}  // namespace

void sort_kernel(const ops::SortArgs& args) { LOCUS_DISPATCH_ALL(args.dtype, sort_typed<scalar_t>(args)); }

void scan_kernel(const ops::ScanArgs& args) {
  switch (args.dtype) {
    LOCUS_CASE(Int64, int64_t, scan_typed<scalar_t>(args))
    LOCUS_CASE(Float16, ::locus::Half, scan_typed<scalar_t>(args))
    LOCUS_CASE(BFloat16, ::locus::BFloat16, scan_typed<scalar_t>(args))
    LOCUS_CASE(Float32, float, scan_typed<scalar_t>(args))
    LOCUS_CASE(Float64, double, scan_typed<scalar_t>(args))
    default: throw DTypeError("internal: scan kernel called with dtype " + std::string(dtype_name(args.dtype)));
  }
}

}  // namespace locus::cpu
