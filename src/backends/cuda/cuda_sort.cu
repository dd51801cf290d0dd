// Sort, top-k, cumsum and cumprod on CUDA.
//
// Note [CUDA sort]
// Every row is one segment of CUB's stable segmented sort, sorting (key, position) pairs; the
// values are then gathered from the input by position, so they come out bit for bit. The keys
// are a sortable copy. A floating-point element becomes an unsigned integer that orders as the
// float does (sign bit flipped for positives, every bit for negatives), after every NaN is made
// the one positive NaN, which then ranks above +inf as PyTorch ranks NaN, and -0.0 is made +0.0
// so that it ties with 0.0 and keeps its position, as on the CPU. Integers, not floats: CUB
// sorts short segments with a merge sort that compares keys with `<`, under which a NaN key is
// unordered and lands anywhere (seen on an H100). Signed integers have their sign bit flipped, so
// that they too order as unsigned integers, and every key is widened to 32 or 64 bits: CUB's sort,
// the longest compile of the CUDA build, is then instantiated for two key types instead of one
// per dtype. A descending sort sorts the complemented keys ascending, which is the same stable
// order (equal keys keep their positions) with one instantiation fewer. The first k columns of the
// sorted rows are the top-k: the same total order as the CPU's, so both devices return the same
// indices.
// Scans run one block per row in chunks of the block's width, carrying the running value.

#include <cub/block/block_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cstring>

#include "src/backends/cuda/cuda_launchers.h"
#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kThreads = 256;

template <class T>
constexpr bool is_float_element = std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

/// The sortable key of an element type: an unsigned integer of 64 bits for the 64-bit types and of
/// 32 bits for every other (Note [CUDA sort]).
template <class T>
using key_t = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

/// The bits of `f` as an unsigned integer that orders as the float does.
template <class U, class F>
__device__ U ordered_bits(F f) {
  static_assert(sizeof(U) == sizeof(F));
  U bits;
  memcpy(&bits, &f, sizeof bits);
  constexpr U sign = U(1) << (8 * sizeof(U) - 1);
  return (bits & sign) ? ~bits : (bits | sign);
}

template <class T>
__global__ void make_keys(const T* in, key_t<T>* keys, int64_t* positions, int64_t n, int64_t total, bool descending) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  using K = key_t<T>;
  K key;
  if constexpr (is_float_element<T>) {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    F f = static_cast<F>(load(in + i));
    if (f != f) f = static_cast<F>(NAN);  // every NaN the one positive NaN
    else if (f == F(0)) f = F(0);         // -0.0 ties with 0.0
    key = ordered_bits<K>(f);
  } else if constexpr (std::is_signed_v<T>) {
    // Sign-extended to the key's width, then the sign bit flipped: INT_MIN becomes 0.
    key = static_cast<K>(static_cast<std::make_signed_t<K>>(in[i])) ^ (K(1) << (8 * sizeof(K) - 1));
  } else {
    key = static_cast<K>(in[i]);  // bool and uint8
  }
  keys[i] = descending ? static_cast<K>(~key) : key;
  positions[i] = i % n;
}

__global__ void row_offsets(int64_t* offsets, int64_t rows, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i <= rows) offsets[i] = i * n;
}

template <class T>
__global__ void take_first_k(const T* in, const int64_t* sorted_positions, T* values, int64_t* indices, int64_t rows,
                             int64_t n, int64_t k) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * k) return;
  const int64_t r = i / k, j = i % k;
  const int64_t p = sorted_positions[r * n + j];
  values[i] = in[r * n + p];
  indices[i] = p;
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

/// The workspace of a sort: keys in and out, positions in and out, row offsets, CUB's scratch.
struct SortPlan {
  size_t keys = 0, positions = 0, offsets = 0, cub = 0;
  size_t total() const { return 2 * keys + 2 * positions + offsets + cub; }
};

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <class T>
cudaError_t sort_typed(const ops::SortArgs& a, void* workspace, SortPlan* plan, cudaStream_t stream) {
  using K = key_t<T>;
  const int64_t total = a.rows * a.n;
  SortPlan p;
  p.keys = align256(static_cast<size_t>(total) * sizeof(K));
  p.positions = align256(static_cast<size_t>(total) * sizeof(int64_t));
  p.offsets = align256(static_cast<size_t>(a.rows + 1) * sizeof(int64_t));
  char* base = static_cast<char*>(workspace);
  K* keys_in = plan ? nullptr : reinterpret_cast<K*>(base);
  K* keys_out = plan ? nullptr : reinterpret_cast<K*>(base + p.keys);
  int64_t* pos_in = plan ? nullptr : reinterpret_cast<int64_t*>(base + 2 * p.keys);
  int64_t* pos_out = plan ? nullptr : reinterpret_cast<int64_t*>(base + 2 * p.keys + p.positions);
  int64_t* offsets = plan ? nullptr : reinterpret_cast<int64_t*>(base + 2 * p.keys + 2 * p.positions);
  void* cub_scratch = plan ? nullptr : base + 2 * p.keys + 2 * p.positions + p.offsets;
  size_t cub_bytes = 0;
  cudaError_t err = cub::DeviceSegmentedSort::StableSortPairs(nullptr, cub_bytes, keys_in, keys_out, pos_in, pos_out, total,
                                                              a.rows, offsets, offsets + 1, stream);
  if (err != cudaSuccess) return err;
  p.cub = align256(cub_bytes);
  if (plan) {
    *plan = p;
    return cudaSuccess;
  }
  const T* in = reinterpret_cast<const T*>(a.in);
  make_keys<T><<<blocks_for(total), kThreads, 0, stream>>>(in, keys_in, pos_in, a.n, total, a.descending);
  row_offsets<<<blocks_for(a.rows + 1), kThreads, 0, stream>>>(offsets, a.rows, a.n);
  err = cub::DeviceSegmentedSort::StableSortPairs(cub_scratch, cub_bytes, keys_in, keys_out, pos_in, pos_out, total, a.rows,
                                                  offsets, offsets + 1, stream);
  if (err != cudaSuccess) return err;
  take_first_k<T><<<blocks_for(a.rows * a.k), kThreads, 0, stream>>>(in, pos_out, reinterpret_cast<T*>(a.values),
                                                                      a.indices, a.rows, a.n, a.k);
  return cudaGetLastError();
}

// A block per row (rows past the grid go round again): chunks of kThreads elements scanned by
// cub::BlockScan, each offset by the running value of the chunks before it.
template <class T, bool kProd>
__global__ void __launch_bounds__(kThreads) scan_rows(const T* in, T* out, int64_t rows, int64_t n) {
  using A = std::conditional_t<std::is_same_v<compute_t<T>, double>, double,
                               std::conditional_t<std::is_floating_point_v<compute_t<T>>, float, int64_t>>;
  using Scan = cub::BlockScan<A, kThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ A carry;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    if (threadIdx.x == 0) carry = kProd ? A(1) : A(0);
    __syncthreads();
    for (int64_t base = 0; base < n; base += kThreads) {
      const int64_t j = base + threadIdx.x;
      A x = j < n ? static_cast<A>(load(in + row * n + j)) : (kProd ? A(1) : A(0));
      A y;
      if constexpr (kProd) Scan(temp).InclusiveScan(x, y, [](A l, A r) { return l * r; });
      else Scan(temp).InclusiveSum(x, y);
      const A before = carry;
      y = kProd ? before * y : before + y;
      if (j < n) out[row * n + j] = convert<T>(y);
      __syncthreads();  // every thread has read `carry` and `temp`
      if (threadIdx.x == kThreads - 1) carry = y;
      __syncthreads();
    }
  }
}

template <class T>
cudaError_t scan_typed(const ops::ScanArgs& a, cudaStream_t stream) {
  const T* in = reinterpret_cast<const T*>(a.in);
  T* out = reinterpret_cast<T*>(a.out);
  // At most 2^16 blocks: a grid of one block per row overflowed `unsigned` (and CUDA's limit) from
  // 2^31 rows on, leaving rows unscanned.
  const auto grid = static_cast<unsigned>(std::min<int64_t>(a.rows, int64_t{1} << 16));
  if (a.op == ops::OpId::Cumprod) scan_rows<T, true><<<grid, kThreads, 0, stream>>>(in, out, a.rows, a.n);
  else scan_rows<T, false><<<grid, kThreads, 0, stream>>>(in, out, a.rows, a.n);
  return cudaGetLastError();
}

}  // namespace

size_t sort_workspace_bytes(const ops::SortArgs& a) {
  if (a.rows * a.n == 0) return 0;
  SortPlan plan;
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(a.dtype, err = sort_typed<scalar_t>(a, nullptr, &plan, nullptr));
  return err == cudaSuccess ? plan.total() : 0;
}

cudaError_t launch_sort(const ops::SortArgs& a, void* workspace, cudaStream_t stream) {
  if (a.rows * a.n == 0 || a.k == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(a.dtype, err = sort_typed<scalar_t>(a, workspace, nullptr, stream));
  return err;
}

cudaError_t launch_scan(const ops::ScanArgs& a, cudaStream_t stream) {
  if (a.rows * a.n == 0) return cudaSuccess;
  switch (a.dtype) {
    case DType::Int64: return scan_typed<int64_t>(a, stream);
    case DType::Float16: return scan_typed<__half>(a, stream);
    case DType::BFloat16: return scan_typed<__nv_bfloat16>(a, stream);
    case DType::Float32: return scan_typed<float>(a, stream);
    case DType::Float64: return scan_typed<double>(a, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace locus::cuda_backend
