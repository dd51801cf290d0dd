# Installs the library, headers, a CMake package and a pkg-config file so that a consumer can write
#   find_package(Locus CONFIG REQUIRED)           or   pkg-config --cflags --libs locus
#   target_link_libraries(app PRIVATE Locus::locus)
# Components, one per Debian package (cmake/LocusPackaging.cmake): runtime (liblocus.so.N),
# cuda (the CUDA and NCCL modules), mpi (the MPI module), dev (headers, CMake and pkg-config files), tools (bin/locus).
include(CMakePackageConfigHelpers)

install(TARGETS locus EXPORT LocusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The modules sit beside liblocus, where it looks for them (Note [Backend modules]).
foreach(module IN ITEMS cuda nccl)
  if(TARGET locus_${module})
    install(TARGETS locus_${module} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cuda)
  endif()
endforeach()
if(TARGET locus_mpi)
  install(TARGETS locus_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT mpi)
endif()
install(DIRECTORY include/locus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
# The vendored DLPack header (locus/dlpack.h includes <dlpack/dlpack.h>) and its licence.
install(DIRECTORY third_party/dlpack/include/dlpack DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(FILES third_party/dlpack/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/locus/dlpack COMPONENT dev)
install(TARGETS locus_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
install(EXPORT LocusTargets NAMESPACE Locus:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Locus COMPONENT dev)
configure_package_config_file(cmake/LocusConfig.cmake.in ${PROJECT_BINARY_DIR}/LocusConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Locus)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/LocusConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/LocusConfig.cmake ${PROJECT_BINARY_DIR}/LocusConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Locus COMPONENT dev)

# pkg-config: a shared liblocus needs nothing else at the consumer's link step; a static one
# lists what it was linked with.
set(LOCUS_PC_PRIVATE_LIBS "")
if(NOT BUILD_SHARED_LIBS)
  set(LOCUS_PC_PRIVATE_LIBS "${LOCUS_OPENBLAS_LIBRARY} ${LOCUS_ZIP_LIBRARY} -fopenmp -lz -ldl")
  if(LOCUS_WITH_DNNL)
    string(APPEND LOCUS_PC_PRIVATE_LIBS " ${LOCUS_DNNL_LIBRARY}")
  endif()
  if(LOCUS_WITH_GLOO)
    string(APPEND LOCUS_PC_PRIVATE_LIBS " ${LOCUS_GLOO_LIBRARY}")
  endif()
  if(LOCUS_WITH_MPI)
    list(JOIN LOCUS_MPI_LIBRARIES " " mpi_libraries)
    string(APPEND LOCUS_PC_PRIVATE_LIBS " ${mpi_libraries}")
  endif()
endif()
# From <prefix>/<libdir>/pkgconfig back up to <prefix>.
string(REGEX REPLACE "[^/]+" ".." LOCUS_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(cmake/locus.pc.in ${PROJECT_BINARY_DIR}/locus.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/locus.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# The install step prints what each installed library weighs (the cuda component's modules carry
# the GPU's kernels; liblocus itself stays small).
install(CODE [[
  foreach(file IN LISTS CMAKE_INSTALL_MANIFEST_FILES)
    set(file "$ENV{DESTDIR}${file}")  # cpack installs into a staging DESTDIR
    if(file MATCHES "/lib[a-z_]+\\.so(\\.[0-9.]+)?$" AND EXISTS "${file}" AND NOT IS_SYMLINK "${file}")
      file(SIZE "${file}" bytes)
      math(EXPR mib "${bytes} / 1048576")
      math(EXPR tenths "(${bytes} % 1048576) * 10 / 1048576")
      message(STATUS "Installed size: ${file}: ${mib}.${tenths} MiB")
    endif()
  endforeach()
]] ALL_COMPONENTS)

include(cmake/LocusPackaging.cmake)

# The LibTorch compatibility package (compat/torch, docs/libtorch.md): the torch/, ATen/ and c10/
# headers and a TorchConfig.cmake, in a prefix of their own under share/locus/torch so that no
# default search path finds them: a program opts in with
# -DCMAKE_PREFIX_PATH=<prefix>/share/locus/torch (or -DTorch_DIR=<that>/share/cmake/Torch).
set(LOCUS_TORCH_PREFIX ${CMAKE_INSTALL_DATADIR}/locus/torch)
set(LOCUS_TORCH_API_VERSION 2.5.0)  # the LibTorch whose C++ frontend the spellings follow
set(LOCUS_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Locus)
set(TORCH_COMPAT_INCLUDE_DIR ${LOCUS_TORCH_PREFIX}/include)
install(DIRECTORY compat/torch/include/ DESTINATION ${TORCH_COMPAT_INCLUDE_DIR} COMPONENT dev)
configure_package_config_file(compat/torch/TorchConfig.cmake.in ${PROJECT_BINARY_DIR}/torch/TorchConfig.cmake
  INSTALL_DESTINATION ${LOCUS_TORCH_PREFIX}/share/cmake/Torch
  PATH_VARS LOCUS_CONFIG_DIR TORCH_COMPAT_INCLUDE_DIR)
configure_file(compat/torch/TorchConfigVersion.cmake.in ${PROJECT_BINARY_DIR}/torch/TorchConfigVersion.cmake @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/torch/TorchConfig.cmake ${PROJECT_BINARY_DIR}/torch/TorchConfigVersion.cmake
  DESTINATION ${LOCUS_TORCH_PREFIX}/share/cmake/Torch COMPONENT dev)
