# Install test: install the build tree into a temporary prefix, then build and run a user's project
# twice: with find_package(Baton) and with pkg-config + the MPI compiler wrapper.
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
    -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER})
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
run(${MPI_CXX_COMPILER} ${DOWNSTREAM_SOURCE_DIR}/main.cpp ${flags} -o ${WORK_DIR}/downstream_pc)
run(${launch} ${WORK_DIR}/downstream_pc)
if(NOT last_output MATCHES "2 ranks agree")
  message(FATAL_ERROR "downstream (pkg-config) printed: ${last_output}")
endif()
message(STATUS "pkg-config baton: ${last_output}")
