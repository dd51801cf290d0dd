# Finds what Locus builds on: OpenBLAS (its OpenMP build, see Note [CPU threads]), OpenMP,
# and optionally the CUDA toolkit.

find_package(OpenMP REQUIRED)
find_package(ZLIB REQUIRED)

# libzip (Debian libzip-dev) opens PyTorch's zip checkpoints (src/serialize/pytorch_checkpoint.cpp).
# Linked by path, like OpenBLAS, so a consumer of a static libLocus needs the library's path
# (LocusConfig.cmake, locus.pc), not libzip's own CMake files.
find_library(LOCUS_ZIP_LIBRARY NAMES zip REQUIRED)
find_path(LOCUS_ZIP_INCLUDE zip.h REQUIRED)
add_library(Locus::zip INTERFACE IMPORTED)
target_link_libraries(Locus::zip INTERFACE ${LOCUS_ZIP_LIBRARY})
target_include_directories(Locus::zip INTERFACE ${LOCUS_ZIP_INCLUDE})

# nlohmann-json (Debian nlohmann-json3-dev, header-only) parses torch.export's model.json
# (src/export/). Private to the library's sources: no public header includes it.
find_path(LOCUS_JSON_INCLUDE nlohmann/json.hpp REQUIRED)

# Debian ships OpenBLAS in several threading flavours behind one alternative; Locus links the
# OpenMP one by path and records the path in RUNPATH so the loader cannot swap in another.
find_library(LOCUS_OPENBLAS_LIBRARY NAMES openblas
  HINTS /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/aarch64-linux-gnu/openblas-openmp
  NO_DEFAULT_PATH)
if(NOT LOCUS_OPENBLAS_LIBRARY)
  find_library(LOCUS_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
endif()
find_path(LOCUS_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-openmp REQUIRED)
add_library(Locus::blas INTERFACE IMPORTED)
target_link_libraries(Locus::blas INTERFACE ${LOCUS_OPENBLAS_LIBRARY})
target_include_directories(Locus::blas INTERFACE ${LOCUS_CBLAS_INCLUDE})
get_filename_component(LOCUS_OPENBLAS_DIR ${LOCUS_OPENBLAS_LIBRARY} DIRECTORY)
set(CMAKE_BUILD_RPATH ${LOCUS_OPENBLAS_DIR})
# Installed, the tools find liblocus in ../lib (a prefix install; the Debian packages put it on
# the system path anyway).
set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}" ${LOCUS_OPENBLAS_DIR})
set(LOCUS_BLAS_TEXT "OpenBLAS (${LOCUS_OPENBLAS_LIBRARY})")
set(LOCUS_OPENMP_TEXT "OpenMP ${OpenMP_CXX_VERSION}")

# oneDNN (Debian libdnnl-dev), optional: bfloat16 products on the CPU (OpenBLAS has none).
# Linked by path, like OpenBLAS.
find_library(LOCUS_DNNL_LIBRARY NAMES dnnl)
find_path(LOCUS_DNNL_INCLUDE oneapi/dnnl/dnnl.hpp)
if(LOCUS_DNNL_LIBRARY AND LOCUS_DNNL_INCLUDE)
  set(LOCUS_WITH_DNNL ON)
  add_library(Locus::dnnl INTERFACE IMPORTED)
  target_link_libraries(Locus::dnnl INTERFACE ${LOCUS_DNNL_LIBRARY})
  target_include_directories(Locus::dnnl INTERFACE ${LOCUS_DNNL_INCLUDE})
  set(LOCUS_DNNL_TEXT "oneDNN (${LOCUS_DNNL_LIBRARY})")
else()
  set(LOCUS_WITH_DNNL OFF)
  set(LOCUS_DNNL_TEXT "off (libdnnl-dev not found: bfloat16 products widen to float32)")
endif()
string(APPEND LOCUS_BLAS_TEXT "; bfloat16 products: ${LOCUS_DNNL_TEXT}")

# Gloo (Debian libgloo-dev) carries the process groups of cpu and sim tensors. Linked by path,
# like OpenBLAS, so a consumer of the installed package needs no Gloo CMake files.
find_library(LOCUS_GLOO_LIBRARY NAMES gloo)
find_path(LOCUS_GLOO_INCLUDE gloo/allreduce.h)
find_path(LOCUS_HIREDIS_INCLUDE hiredis.h PATH_SUFFIXES hiredis)  # Gloo's Redis store includes it bare
if(LOCUS_GLOO_LIBRARY AND LOCUS_GLOO_INCLUDE AND LOCUS_HIREDIS_INCLUDE)
  set(LOCUS_WITH_GLOO ON)
  add_library(Locus::gloo INTERFACE IMPORTED)
  target_link_libraries(Locus::gloo INTERFACE ${LOCUS_GLOO_LIBRARY})
  target_include_directories(Locus::gloo INTERFACE ${LOCUS_GLOO_INCLUDE} ${LOCUS_HIREDIS_INCLUDE})
  set(LOCUS_GLOO_TEXT "Gloo (${LOCUS_GLOO_LIBRARY})")
else()
  set(LOCUS_WITH_GLOO OFF)
  set(LOCUS_GLOO_TEXT "off (libgloo-dev not found)")
endif()

# Open MPI (Debian libopenmpi-dev) carries the mpi process groups, for programs that mpirun starts.
# Found through CMake's FindMPI for the C++ compiler (Locus calls MPI's C functions; MPI's
# deprecated C++ bindings stay out) and linked by path, like Gloo, so a consumer of the installed
# package needs no MPI CMake files.
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI COMPONENTS CXX QUIET)
if(MPI_CXX_FOUND)
  set(LOCUS_WITH_MPI ON)
  set(LOCUS_MPI_LIBRARIES ${MPI_CXX_LIBRARIES})
  list(FILTER LOCUS_MPI_LIBRARIES EXCLUDE REGEX "mpi_cxx")  # the C++ bindings' library, unused
  add_library(Locus::mpi INTERFACE IMPORTED)
  target_link_libraries(Locus::mpi INTERFACE ${LOCUS_MPI_LIBRARIES})
  target_include_directories(Locus::mpi INTERFACE ${MPI_CXX_INCLUDE_DIRS})
  target_compile_definitions(Locus::mpi INTERFACE ${MPI_CXX_COMPILE_DEFINITIONS})
  set(LOCUS_MPI_TEXT "MPI ${MPI_CXX_VERSION} (${LOCUS_MPI_LIBRARIES})")
else()
  set(LOCUS_WITH_MPI OFF)
  set(LOCUS_MPI_TEXT "mpi off (libopenmpi-dev not found)")
endif()

set(LOCUS_WITH_CUDA OFF)
set(LOCUS_CUDA_TEXT "off (LOCUS_CUDA=OFF)")
if(NOT LOCUS_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  if(LOCUS_CUDA STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND)
    set(LOCUS_WITH_CUDA ON)
    if(BUILD_SHARED_LIBS)
      set(LOCUS_CUDA_TEXT "module liblocus_cuda.so.${PROJECT_VERSION_MAJOR}, loaded where a driver is present (CUDA toolkit ${CUDAToolkit_VERSION}, runtime linked statically, cuBLAS shared)")
    else()
      set(LOCUS_CUDA_TEXT "linked in (CUDA toolkit ${CUDAToolkit_VERSION}, runtime linked statically, cuBLAS shared)")
    endif()
    # Hopper (sm_90) machine code plus PTX, which newer GPUs JIT-compile: one architecture keeps
    # the build affordable on 2 cores.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
    endif()
    if(NOT CMAKE_CUDA_COMPILER)
      set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
    endif()
    enable_language(CUDA)
    # CMake 3.25 predates nvcc's C++20 support and does not know its flag.
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    if(CCACHE_PROGRAM)
      set(CMAKE_CUDA_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
    endif()
    # cuBLAS is found at run time through RUNPATH (the toolkit's lib64) or LD_LIBRARY_PATH: the
    # CUDA module's own (CMakeLists.txt), or a static build's programs'.
    if(NOT BUILD_SHARED_LIBS)
      list(APPEND CMAKE_BUILD_RPATH ${CUDAToolkit_LIBRARY_DIR})
      list(APPEND CMAKE_INSTALL_RPATH ${CUDAToolkit_LIBRARY_DIR})
    endif()
  else()
    set(LOCUS_CUDA_TEXT "off (LOCUS_CUDA=AUTO and no CUDA toolkit found)")
  endif()
endif()
# NCCL (shipped with the CUDA toolkit here) carries the process groups of cuda tensors. It
# meets its peers through Gloo's rendezvous store, so it needs Gloo as well.
set(LOCUS_WITH_NCCL OFF)
set(LOCUS_NCCL_TEXT "off (no CUDA)")
if(LOCUS_WITH_CUDA)
  find_library(LOCUS_NCCL_LIBRARY NAMES nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(LOCUS_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(LOCUS_NCCL_LIBRARY AND LOCUS_NCCL_INCLUDE AND LOCUS_WITH_GLOO)
    set(LOCUS_WITH_NCCL ON)
    add_library(Locus::nccl INTERFACE IMPORTED)
    target_link_libraries(Locus::nccl INTERFACE ${LOCUS_NCCL_LIBRARY})
    target_include_directories(Locus::nccl INTERFACE ${LOCUS_NCCL_INCLUDE})
    set(LOCUS_NCCL_TEXT "NCCL (${LOCUS_NCCL_LIBRARY})")
  elseif(NOT LOCUS_WITH_GLOO)
    set(LOCUS_NCCL_TEXT "off (needs Gloo's rendezvous store)")
  else()
    set(LOCUS_NCCL_TEXT "off (nccl.h or libnccl not found)")
  endif()
endif()
# cuDNN (the CUDA convolutions, Note [cuDNN convolutions]) through NVIDIA's header-only
# cudnn-frontend, which scripts/install-deps.sh unpacks into third_party/cudnn-frontend. Linked
# into the CUDA module only: a CPU-only program never loads it.
set(LOCUS_WITH_CUDNN OFF)
if(LOCUS_WITH_CUDA)
  find_library(LOCUS_CUDNN_LIBRARY NAMES cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(LOCUS_CUDNN_INCLUDE cudnn_version.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_path(LOCUS_CUDNN_FRONTEND_INCLUDE cudnn_frontend.h HINTS ${PROJECT_SOURCE_DIR}/third_party/cudnn-frontend/include)
  if(LOCUS_CUDNN_LIBRARY AND LOCUS_CUDNN_INCLUDE AND LOCUS_CUDNN_FRONTEND_INCLUDE)
    set(LOCUS_WITH_CUDNN ON)
    add_library(Locus::cudnn INTERFACE IMPORTED)
    # NVRTC: the frontend's own engines compile kernels at run time, and it calls NVRTC directly.
    target_link_libraries(Locus::cudnn INTERFACE ${LOCUS_CUDNN_LIBRARY} CUDA::nvrtc)
    # The frontend's JSON (de)serialisation of graphs is not used: its nlohmann/json stays out.
    target_compile_definitions(Locus::cudnn INTERFACE CUDNN_FRONTEND_SKIP_JSON_LIB)
    # SYSTEM: the frontend's headers are NVIDIA's, compiled with Locus's warnings off.
    target_include_directories(Locus::cudnn SYSTEM INTERFACE ${LOCUS_CUDNN_FRONTEND_INCLUDE} ${LOCUS_CUDNN_INCLUDE})
    file(STRINGS ${LOCUS_CUDNN_INCLUDE}/cudnn_version.h cudnn_version_lines REGEX "#define CUDNN_(MAJOR|MINOR) ")
    string(REGEX REPLACE ".*CUDNN_MAJOR ([0-9]+).*CUDNN_MINOR ([0-9]+).*" "\\1.\\2" LOCUS_CUDNN_VERSION "${cudnn_version_lines}")
    file(STRINGS ${LOCUS_CUDNN_FRONTEND_INCLUDE}/cudnn_frontend_version.h frontend_lines REGEX "#define CUDNN_FRONTEND_(MAJOR|MINOR|PATCH)_VERSION ")
    string(REGEX REPLACE ".*MAJOR_VERSION ([0-9]+).*MINOR_VERSION ([0-9]+).*PATCH_VERSION ([0-9]+).*" "\\1.\\2.\\3"
           LOCUS_CUDNN_FRONTEND_VERSION "${frontend_lines}")
    string(APPEND LOCUS_CUDA_TEXT "; convolutions on cuDNN ${LOCUS_CUDNN_VERSION} through cudnn-frontend ${LOCUS_CUDNN_FRONTEND_VERSION}")
  else()
    string(APPEND LOCUS_CUDA_TEXT "; convolutions on im2col + cuBLAS (cuDNN or the cudnn-frontend headers not found: scripts/install-deps.sh)")
  endif()
endif()
message(STATUS "Locus: BLAS ${LOCUS_OPENBLAS_LIBRARY}; bfloat16 products ${LOCUS_DNNL_TEXT}; CUDA backend ${LOCUS_CUDA_TEXT}; process groups ${LOCUS_GLOO_TEXT}, ${LOCUS_NCCL_TEXT}, ${LOCUS_MPI_TEXT}")
