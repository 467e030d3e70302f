# Install test: install the build tree into a temporary prefix, then build and run a user's project
# twice: with find_package(Baton) and with pkg-config + the MPI compiler wrapper. The compiler and
# its flags (CXX_FLAGS: e.g. -arch=sm_90, which nvcc_wrapper needs with CUDA >= 13) are Baton's.
foreach(var BATON_BUILD_DIR DOWNSTREAM_SOURCE_DIR WORK_DIR CXX_COMPILER MPI_CXX_COMPILER MPIEXEC_EXECUTABLE)
  if(NOT ${var})
    message(FATAL_ERROR "run_install_test.cmake needs -D${var}=...")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BATON_BUILD_DIR} --prefix ${prefix})

set(launch ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2)
if(MPIEXEC_IS_OPENMPI)
  list(APPEND launch --oversubscribe)
endif()

# 1. CMake: find_package(Baton REQUIRED)
run(${CMAKE_COMMAND} -S ${DOWNSTREAM_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${launch} ${WORK_DIR}/build/downstream)
if(NOT last_output MATCHES "2 ranks agree")
  message(FATAL_ERROR "downstream (CMake) printed: ${last_output}")
endif()
message(STATUS "find_package(Baton): ${last_output}")

# 2. pkg-config, compiled with the MPI wrapper
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(STATUS "pkg-config not found: the baton.pc check is skipped")
  return()
endif()
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig:${prefix}/lib64/pkgconfig)
run(${PKG_CONFIG} --cflags --libs baton)
string(STRIP "${last_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
run(${MPI_CXX_COMPILER} ${cxx_flags} ${DOWNSTREAM_SOURCE_DIR}/main.cpp ${flags}
    -o ${WORK_DIR}/downstream_pc)
run(${launch} ${WORK_DIR}/downstream_pc)
if(NOT last_output MATCHES "2 ranks agree")
  message(FATAL_ERROR "downstream (pkg-config) printed: ${last_output}")
endif()
message(STATUS "pkg-config baton: ${last_output}")

# 3. Another Kokkos than Baton's: find_package(Baton) stops and names both. A stand-in Kokkos package
#    of another version is enough to see it.
set(fake ${WORK_DIR}/other-kokkos)
file(WRITE ${fake}/KokkosConfig.cmake
     "set(Kokkos_VERSION 9.9.9)\nif(NOT TARGET Kokkos::kokkos)\n  add_library(Kokkos::kokkos INTERFACE IMPORTED)\nendif()\n")
file(WRITE ${fake}/KokkosConfigVersion.cmake
     "set(PACKAGE_VERSION 9.9.9)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${DOWNSTREAM_SOURCE_DIR} -B ${WORK_DIR}/build-other
                        -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DKokkos_DIR=${fake}
                        -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " said "${out}${err}")  # CMake wraps long messages
if(rc EQUAL 0 OR NOT said MATCHES "Baton was built with Kokkos [^ ]+ .* this project found Kokkos 9.9.9")
  message(FATAL_ERROR "another Kokkos was not refused (${rc}):\n${out}\n${err}")
endif()
message(STATUS "another Kokkos: refused, naming both versions")
