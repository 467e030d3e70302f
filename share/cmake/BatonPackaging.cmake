# Installs Baton as a CMake package (Baton::baton) and a pkg-config module (baton.pc).
include(CMakePackageConfigHelpers)

set(BATON_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Baton)
install(EXPORT BatonTargets NAMESPACE Baton:: DESTINATION ${BATON_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/share/cmake/BatonConfig.cmake.in
  ${PROJECT_BINARY_DIR}/BatonConfig.cmake INSTALL_DESTINATION ${BATON_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/BatonConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/BatonConfig.cmake
  ${PROJECT_BINARY_DIR}/BatonConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/share/cmake/BatonKokkosFixup.cmake
  ${PROJECT_SOURCE_DIR}/share/cmake/BatonTesting.cmake
  ${PROJECT_SOURCE_DIR}/share/cmake/BatonCheckRun.cmake
  DESTINATION ${BATON_CMAKE_DIR})

# pkg-config, for Makefile users who compile with mpicxx (MPI flags come from the wrapper). Kokkos'
# part (includes, -fopenmp, its libraries in link order, the C++ standard it requires) is read from
# Kokkos::kokkos' usage requirements, as CMake applies them to Baton::baton.
include(BatonUsageFlags)
baton_usage_flags(Kokkos::kokkos BATON_PC_KOKKOS_CFLAGS BATON_PC_KOKKOS_LIBS _baton_pc_std)
set(BATON_PC_STD c++${_baton_pc_std})
set(BATON_PC_CFLAGS "")
if(BATON_PC_KOKKOS_CFLAGS)
  set(BATON_PC_CFLAGS " ${BATON_PC_KOKKOS_CFLAGS}")
endif()
set(BATON_PC_LIBS "")
if(BUILD_SHARED_LIBS)  # a shared libbaton: programs find it where baton.pc lies
  set(BATON_PC_LIBS " -Wl,-rpath,\${libdir}")
endif()
if(BATON_PC_KOKKOS_LIBS)
  string(APPEND BATON_PC_LIBS " ${BATON_PC_KOKKOS_LIBS}")
endif()
if(BATON_HAVE_CUDA)
  string(APPEND BATON_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
  string(FIND "${BATON_PC_LIBS} " " -Wl,-rpath,${CUDAToolkit_LIBRARY_DIR} " _baton_at)
  if(_baton_at EQUAL -1)
    string(APPEND BATON_PC_LIBS " -Wl,-rpath,${CUDAToolkit_LIBRARY_DIR}")
  endif()
endif()
file(RELATIVE_PATH BATON_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" BATON_PC_TO_PREFIX "${BATON_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/share/pkgconfig/baton.pc.in ${PROJECT_BINARY_DIR}/baton.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/baton.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
