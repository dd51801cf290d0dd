#pragma once
// LOCUS_HD marks the functions that g++ compiles for the CPU kernels and nvcc for the CUDA
// kernels from one source (functors.h, float_to_int.h).

#if defined(__CUDACC__)
#define LOCUS_HD __host__ __device__ __forceinline__
#else
#define LOCUS_HD inline
#endif
