# Installs the library, headers and a CMake package so that a consumer can write
#   find_package(Locus CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE Locus::locus)
include(CMakePackageConfigHelpers)

install(TARGETS locus EXPORT LocusTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/locus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The vendored DLPack header (locus/dlpack.h includes <dlpack/dlpack.h>) and its licence.
install(DIRECTORY third_party/dlpack/include/dlpack DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES third_party/dlpack/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/locus/dlpack)
install(TARGETS locus_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT LocusTargets NAMESPACE Locus:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Locus)
configure_package_config_file(cmake/LocusConfig.cmake.in ${PROJECT_BINARY_DIR}/LocusConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Locus)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/LocusConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/LocusConfig.cmake ${PROJECT_BINARY_DIR}/LocusConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Locus)
