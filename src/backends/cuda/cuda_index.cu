// index_select and gather on CUDA, and the scatters (scatter, scatter_add, index_add). The
// indices are checked on the device by the front end (Note [Deferred checks]); an index out of
// range reads element 0 here, and a scatter skips it.
//
// Note [Deterministic index_add on CUDA]
// index_add, which is also the embedding's backward, adds row j of `in` into row index[j] of
// `out`. With atomics, repeated indices would add up in an order that changes from run to run, so
// float results would differ in their last bits. Instead the indices are sorted with their
// positions by a stable radix sort (equal indices keep their positions in ascending order), and
// one thread per element of `out` finds its row's run of sorted indices by binary search and adds
// the rows of that run in that order, rounding at each step as the CPU's loop does (Note
// [Deterministic scatters], cpu_index.cpp): the same sums on every run, bit for bit the CPU's.
// The sort costs O(J) scratch and one pass over the J indices, where J is the number of rows
// taken (index.numel()); a thread whose row no index names writes nothing. scatter_add, whose
// index has an entry per element, keeps atomics, as in PyTorch.

#include <cub/device/device_radix_sort.cuh>

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {
namespace {

// Element r of a contiguous [outer, dim, inner] block, as its three coordinates.
struct Coords {
  int64_t o, j, i;
};
__device__ __forceinline__ Coords coords_of(int64_t r, int64_t dim, int64_t inner) {
  return {r / (inner * dim), (r / inner) % dim, r % inner};
}

// Calls f(r) for every r in [0, n), the grid's threads taking turns (a grid-stride loop).
template <class F>
__device__ __forceinline__ void for_each_element(int64_t n, F f) {
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < n;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x)
    f(r);
}

// Elements move as raw words of their size: the dtype does not matter to a gather.
template <class W>
__global__ void __launch_bounds__(kBlock) index_kernel(ops::IndexArgs p) {
  for_each_element(p.outer * p.out_dim * p.inner, [&](int64_t r) {
    const Coords c = coords_of(r, p.out_dim, p.inner);
    int64_t k = p.op == ops::OpId::Gather ? p.index[r] : p.index[c.j];
    if (k < 0 || k >= p.in_dim) k = 0;  // reported by the deferred check; never read out of bounds
    reinterpret_cast<W*>(p.out)[r] = reinterpret_cast<const W*>(p.in)[(c.o * p.in_dim + k) * p.inner + c.i];
  });
}

// Adds v to *p atomically. float, double, the 16-bit floats (sm_70/sm_80 and up; the build
// targets sm_90), int32 and int64 have hardware atomics; the 1- and 2-byte integers and bool
// update their aligned 32-bit word by compare-and-swap.
template <class T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, __half> ||
                std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, int32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: an unsigned add of the same bits is the signed add, wrapping alike.
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    static_assert(sizeof(T) <= 2, "wider types have hardware atomics above");
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    auto* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    const unsigned mask = ((1u << (sizeof(T) * 8)) - 1u) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      T cur;
      const auto bits = static_cast<unsigned short>((assumed & mask) >> shift);
      memcpy(&cur, &bits, sizeof(T));  // little-endian: the low bytes of `bits` are the element
      T sum;
      if constexpr (std::is_same_v<T, bool>) sum = cur || v;
      else sum = static_cast<T>(cur + v);
      unsigned short out_bits = 0;
      memcpy(&out_bits, &sum, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | ((static_cast<unsigned>(out_bits) << shift) & mask));
    } while (old != assumed);
  }
}

// One thread per element of `in`: Scatter stores (one of several writers to a position wins, as
// in PyTorch), ScatterAdd adds atomically, so repeated indices add up in an order that can change
// between runs (float sums may differ in the last bits; the CPU's are deterministic, Note
// [Deterministic scatters] in cpu_index.cpp). IndexAdd takes index_add_kernel below.
template <class T>
__global__ void __launch_bounds__(kBlock) scatter_kernel(ops::IndexArgs p) {
  const auto* in = reinterpret_cast<const T*>(p.in);
  auto* out = reinterpret_cast<T*>(p.out);
  for_each_element(p.outer * p.in_dim * p.inner, [&](int64_t r) {
    const Coords c = coords_of(r, p.in_dim, p.inner);
    const int64_t k = p.index[r];
    if (k < 0 || k >= p.out_dim) return;  // reported by the deferred check
    T* dst = out + (c.o * p.out_dim + k) * p.inner + c.i;
    if (p.op == ops::OpId::Scatter) *dst = in[r];
    else atomic_add(dst, in[r]);
  });
}

unsigned grid_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

__global__ void __launch_bounds__(kBlock) positions_kernel(int64_t* positions, int64_t n) {
  for_each_element(n, [&](int64_t r) { positions[r] = r; });
}

// The first of the n sorted keys that is not below k.
__device__ __forceinline__ int64_t lower_bound(const int64_t* keys, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// One thread per element of `out` (Note [Deterministic index_add on CUDA]).
template <class T>
__global__ void __launch_bounds__(kBlock) index_add_kernel(ops::IndexArgs p, const int64_t* sorted_index,
                                                           const int64_t* positions) {
  const auto* in = reinterpret_cast<const T*>(p.in);
  auto* out = reinterpret_cast<T*>(p.out);
  for_each_element(p.outer * p.out_dim * p.inner, [&](int64_t r) {
    const Coords c = coords_of(r, p.out_dim, p.inner);  // c.j: the row of `out` it sums into
    const int64_t first = lower_bound(sorted_index, p.in_dim, c.j), last = lower_bound(sorted_index, p.in_dim, c.j + 1);
    if (first == last) return;
    T sum = out[r];
    for (int64_t s = first; s < last; ++s) {
      const T v = in[(c.o * p.in_dim + positions[s]) * p.inner + c.i];
      if constexpr (std::is_same_v<T, bool>) sum = sum || v;
      else sum = static_cast<T>(static_cast<compute_t<T>>(sum) + static_cast<compute_t<T>>(v));
    }
    out[r] = sum;
  });
}

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The scratch of index_add: the sorted indices, the positions before and after the sort, and
// CUB's own; with a null workspace only its size is computed.
struct IndexAddScratch {
  size_t rows = 0, cub = 0;
  size_t total() const { return 3 * rows + cub; }
};

cudaError_t index_add(const ops::IndexArgs& p, void* workspace, IndexAddScratch* plan, cudaStream_t stream) {
  IndexAddScratch sizes;
  sizes.rows = align256(static_cast<size_t>(p.in_dim) * sizeof(int64_t));
  char* base = static_cast<char*>(workspace);
  int64_t* sorted_index = plan ? nullptr : reinterpret_cast<int64_t*>(base);
  int64_t* positions_in = plan ? nullptr : reinterpret_cast<int64_t*>(base + sizes.rows);
  int64_t* positions = plan ? nullptr : reinterpret_cast<int64_t*>(base + 2 * sizes.rows);
  void* cub_scratch = plan ? nullptr : base + 3 * sizes.rows;
  size_t cub_bytes = 0;
  cudaError_t err = cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, p.index, sorted_index, positions_in, positions,
                                                    p.in_dim, 0, 64, stream);
  if (err != cudaSuccess) return err;
  sizes.cub = align256(cub_bytes);
  if (plan) {
    *plan = sizes;
    return cudaSuccess;
  }
  positions_kernel<<<grid_for(p.in_dim), kBlock, 0, stream>>>(positions_in, p.in_dim);
  err = cub::DeviceRadixSort::SortPairs(cub_scratch, cub_bytes, p.index, sorted_index, positions_in, positions, p.in_dim, 0, 64,
                                        stream);
  if (err != cudaSuccess) return err;
  const int64_t total = p.outer * p.out_dim * p.inner;
  LOCUS_CUDA_DISPATCH(p.dtype, (index_add_kernel<scalar_t><<<grid_for(total), kBlock, 0, stream>>>(p, sorted_index, positions)));
  return cudaGetLastError();
}

bool index_add_has_work(const ops::IndexArgs& p) { return p.outer * p.in_dim * p.inner > 0 && p.out_dim > 0; }

}  // namespace

size_t index_workspace_bytes(const ops::IndexArgs& a) {
  if (a.op != ops::OpId::IndexAdd || !index_add_has_work(a)) return 0;
  IndexAddScratch plan;
  return index_add(a, nullptr, &plan, nullptr) == cudaSuccess ? plan.total() : 0;
}

cudaError_t launch_index(const ops::IndexArgs& p, void* workspace, cudaStream_t stream) {
  if (p.op == ops::OpId::IndexAdd) {
    if (!index_add_has_work(p)) return cudaSuccess;
    if (workspace == nullptr) return cudaErrorInvalidValue;
    return index_add(p, workspace, nullptr, stream);
  }
  if (p.op == ops::OpId::Scatter || p.op == ops::OpId::ScatterAdd) {
    const int64_t n = p.outer * p.in_dim * p.inner;
    if (n == 0) return cudaSuccess;
    LOCUS_CUDA_DISPATCH(p.dtype, (scatter_kernel<scalar_t><<<grid_for(n), kBlock, 0, stream>>>(p)));
    return cudaGetLastError();
  }
  const int64_t total = p.outer * p.out_dim * p.inner;
  if (total == 0) return cudaSuccess;
  switch (itemsize(p.dtype)) {
    case 1: index_kernel<uint8_t><<<grid_for(total), kBlock, 0, stream>>>(p); break;
    case 2: index_kernel<uint16_t><<<grid_for(total), kBlock, 0, stream>>>(p); break;
    case 4: index_kernel<uint32_t><<<grid_for(total), kBlock, 0, stream>>>(p); break;
    default: index_kernel<uint64_t><<<grid_for(total), kBlock, 0, stream>>>(p); break;
  }
  return cudaGetLastError();
}

}  // namespace locus::cuda_backend
