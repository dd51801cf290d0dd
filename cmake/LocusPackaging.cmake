# Debian packages from one build (`cpack` in the build directory; scripts/package.sh):
#   liblocus0        liblocus.so.N, the core (CPU and sim devices, Gloo process groups)
#   liblocus-cuda0   the CUDA backend and NCCL process group modules, loaded where a driver is
#   liblocus-mpi0    the MPI process group module, loaded when an mpi group is asked for
#   liblocus-dev     headers, the CMake package, locus.pc, the liblocus.so link
#   locus-tools      the `locus` command
# liblocus0's dependencies come from dpkg-shlibdeps (OpenBLAS's OpenMP build, oneDNN, Gloo, zlib,
# libzip), and liblocus-mpi0's (Open MPI's package, whatever the release names it) too, with the
# build directory as a private one so that it finds liblocus.so.0, which liblocus0 holds; the CUDA libraries the modules need are NVIDIA's (the CUDA toolkit or its
# cuda-libraries / libnccl2 packages from NVIDIA's repository), which Debian does not carry, so
# liblocus-cuda0 recommends them rather than depending on them: without them
# cuda::is_available() is false and `locus info` names the library that is missing.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "locus")
set(CPACK_PACKAGE_VENDOR "Locus")
set(CPACK_PACKAGE_CONTACT "Locus developers <locus-dev@lists.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "C++20 tensors, autograd and training with PyTorch's device model")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION "libs")
set(CPACK_COMPONENTS_ALL runtime dev tools)
if(TARGET locus_cuda OR TARGET locus_nccl)
  list(APPEND CPACK_COMPONENTS_ALL cuda)
endif()
if(TARGET locus_mpi)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()
set(soversion ${PROJECT_VERSION_MAJOR})

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "liblocus${soversion}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR})
# dpkg-shlibdeps names libopenblas0, which any threading flavour provides; Locus wants the OpenMP
# one (Note [CPU threads]) and its RUNPATH points there.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libopenblas0-openmp")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "Locus tensor library: the core (CPU, sim devices, Gloo process groups)")

set(CPACK_DEBIAN_MPI_PACKAGE_NAME "liblocus-mpi${soversion}")
set(CPACK_DEBIAN_MPI_PACKAGE_SHLIBDEPS ON)
set(CPACK_COMPONENT_MPI_DEPENDS runtime)
set(CPACK_COMPONENT_MPI_DESCRIPTION "Locus tensor library: the MPI process group (Open MPI), loaded at run time")

set(CPACK_DEBIAN_CUDA_PACKAGE_NAME "liblocus-cuda${soversion}")
set(CPACK_COMPONENT_CUDA_DEPENDS runtime)
set(CPACK_DEBIAN_CUDA_PACKAGE_RECOMMENDS "cuda-libraries-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}, libnccl2")
if(LOCUS_WITH_CUDNN)
  string(APPEND CPACK_DEBIAN_CUDA_PACKAGE_RECOMMENDS ", libcudnn9-cuda-${CUDAToolkit_VERSION_MAJOR}")
endif()
set(CPACK_COMPONENT_CUDA_DESCRIPTION "Locus tensor library: the CUDA backend and NCCL process group, loaded at run time")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME "liblocus-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION "libdevel")
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_DEV_DESCRIPTION "Locus tensor library: headers, CMake package and pkg-config file")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME "locus-tools")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION "science")
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "The locus command: info, train, bench, run")
# `locus train` reads Fashion-MNIST from Debian's dataset package where no --data is given.
set(CPACK_DEBIAN_TOOLS_PACKAGE_SUGGESTS "dataset-fashion-mnist")
include(CPack)
