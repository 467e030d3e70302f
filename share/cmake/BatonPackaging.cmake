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

# pkg-config, for Makefile users who compile with mpicxx (MPI flags come from the wrapper).
get_target_property(_kokkos_includes Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
set(BATON_PC_CFLAGS "")
foreach(_dir IN LISTS _kokkos_includes)
  if(_dir AND NOT _dir MATCHES "^\\$<")
    get_filename_component(_dir "${_dir}" ABSOLUTE)
    string(APPEND BATON_PC_CFLAGS " -I${_dir}")
  endif()
endforeach()
set(BATON_PC_LIBS "")
foreach(_dir IN LISTS Kokkos_LIBRARY_DIRS)
  get_filename_component(_dir "${_dir}" ABSOLUTE)
  string(APPEND BATON_PC_LIBS " -L${_dir}")
endforeach()
foreach(_lib IN LISTS Kokkos_LIBRARIES)
  if(TARGET ${_lib})
    string(APPEND BATON_PC_LIBS " $<TARGET_LINKER_FILE:${_lib}>")
  elseif(_lib MATCHES "^Kokkos::")
    string(REPLACE "Kokkos::" "" _lib ${_lib})
    string(APPEND BATON_PC_LIBS " -l${_lib}")
  else()
    string(APPEND BATON_PC_LIBS " -l${_lib}")
  endif()
endforeach()
if(BATON_HAVE_CUDA)
  string(APPEND BATON_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()
file(RELATIVE_PATH BATON_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" BATON_PC_TO_PREFIX "${BATON_PC_TO_PREFIX}")
if(Kokkos_VERSION VERSION_GREATER_EQUAL 5)
  set(BATON_PC_STD c++20)   # Kokkos 5 requires C++20
else()
  set(BATON_PC_STD c++17)
endif()
configure_file(${PROJECT_SOURCE_DIR}/share/pkgconfig/baton.pc.in ${PROJECT_BINARY_DIR}/baton.pc.in @ONLY)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/baton.pc INPUT ${PROJECT_BINARY_DIR}/baton.pc.in)
install(FILES ${PROJECT_BINARY_DIR}/baton.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
