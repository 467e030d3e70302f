# baton_add_mpi_test(NAME name TARGET target RANKS 1 2 3 4 [ARGS ...] [TIMEOUT s] [LABELS ...]
#                    [EXPECT_OUTPUT regex] [REJECT_OUTPUT regex] [EXIT_CODE n])
#
# Registers one ctest per rank count, named <name>.np<N>, run through MPIEXEC_EXECUTABLE.
# With EXPECT_OUTPUT, REJECT_OUTPUT or EXIT_CODE the test passes only when the exit code is EXIT_CODE
# (default 0) and the output matches EXPECT_OUTPUT and not REJECT_OUTPUT (BatonCheckRun.cmake runs
# it): CTest's pass regex property alone would ignore the exit code. Regexes must not contain ';'.
# Sets PROCESSORS to N times its threads per rank (so `ctest -j` does not overload the machine;
# baton_test_threads below), adds --oversubscribe for
# Open MPI (more ranks than cores), allows Open MPI to run as root (containers, CI), sets
# BATON_EXPECT_RANKS=N so that the test can fail when the launcher started N one-rank jobs
# instead of one N-rank job (a launcher from another MPI does exactly that), and sets
# BATON_CHECK_COLLECTIVES=1: collective shape checks on in every build type, so that a mismatched
# collective fails the test with an error instead of hanging until the timeout (append
# BATON_CHECK_COLLECTIVES=0 to the test's ENVIRONMENT to run it unchecked).
# With Kokkos' OpenMP backend, the threads per rank of a test of n ranks: BATON_TEST_THREADS (default
# 2) where n times that fits the machine's cores, else as many as fit, at least 1. A team's threads
# wait for each other in spin barriers, so threads beyond the cores make a test crawl (measured here,
# 2 cores: test_pipeline at 2 ranks took 1.3 s with 1 thread per rank and 206 s with 2). Sets <var> to
# the environment entries (OMP_NUM_THREADS, OMP_PROC_BIND=false; none without OpenMP) and
# <threads_var> to the threads per rank (1 without OpenMP), which PROCESSORS counts.
set(BATON_TEST_THREADS 2 CACHE STRING "OpenMP threads per rank in the MPI tests, where they fit the cores")
cmake_host_system_information(RESULT _BATON_HOST_CORES QUERY NUMBER_OF_LOGICAL_CORES)
function(baton_test_threads var threads_var n)
  set(_entries "")
  set(_threads 1)
  if("OPENMP" IN_LIST Kokkos_DEVICES)
    math(EXPR _fit "${_BATON_HOST_CORES} / ${n}")
    set(_threads ${BATON_TEST_THREADS})
    if(_fit LESS _threads)
      set(_threads ${_fit})
    endif()
    if(_threads LESS 1)
      set(_threads 1)
    endif()
    set(_entries "OMP_NUM_THREADS=${_threads};OMP_PROC_BIND=false")
  endif()
  set(${var} "${_entries}" PARENT_SCOPE)
  set(${threads_var} ${_threads} PARENT_SCOPE)
endfunction()

function(baton_add_mpi_test)
  cmake_parse_arguments(ARG "" "NAME;TARGET;TIMEOUT;EXPECT_OUTPUT;REJECT_OUTPUT;EXIT_CODE"
                        "RANKS;ARGS;LABELS" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_TARGET OR NOT ARG_RANKS)
    message(FATAL_ERROR "baton_add_mpi_test needs NAME, TARGET and RANKS")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  if(NOT DEFINED BATON_MPIEXEC_IS_OPENMPI)
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _out ERROR_VARIABLE _out
                    RESULT_VARIABLE _rc)
    if(_out MATCHES "Open MPI|OpenRTE")
      set(BATON_MPIEXEC_IS_OPENMPI ON CACHE INTERNAL "")
    else()
      set(BATON_MPIEXEC_IS_OPENMPI OFF CACHE INTERNAL "")
    endif()
  endif()
  set(_flags "")
  set(_env "")
  if(BATON_MPIEXEC_IS_OPENMPI)
    set(_flags --oversubscribe)
    set(_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)
  endif()
  set(_check "")
  if(DEFINED ARG_EXPECT_OUTPUT OR DEFINED ARG_REJECT_OUTPUT OR DEFINED ARG_EXIT_CODE)
    baton_check_run_prefix(_check EXPECT_OUTPUT "${ARG_EXPECT_OUTPUT}"
                           REJECT_OUTPUT "${ARG_REJECT_OUTPUT}" EXIT_CODE "${ARG_EXIT_CODE}")
  endif()
  foreach(_n IN LISTS ARG_RANKS)
    set(_test ${ARG_NAME}.np${_n})
    baton_test_threads(_threads _per_rank ${_n})
    set(_test_env ${_env} ${_threads} BATON_EXPECT_RANKS=${_n} BATON_CHECK_COLLECTIVES=1)
    add_test(NAME ${_test}
             COMMAND ${_check} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_n} ${_flags}
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${ARG_TARGET}> ${MPIEXEC_POSTFLAGS} ${ARG_ARGS})
    math(EXPR _processors "${_n} * ${_per_rank}")
    set_tests_properties(${_test} PROPERTIES PROCESSORS ${_processors} TIMEOUT ${ARG_TIMEOUT}
                         LABELS "mpi;${ARG_LABELS}"
                         ENVIRONMENT "${_test_env}")
  endforeach()
endfunction()

# baton_check_run_prefix(<var> [EXPECT_OUTPUT regex] [REJECT_OUTPUT regex] [EXIT_CODE n]): sets <var>
# to the command prefix that runs a command through BatonCheckRun.cmake (exit code and output).
set(_BATON_CHECK_RUN_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/BatonCheckRun.cmake)
function(baton_check_run_prefix var)
  cmake_parse_arguments(ARG "" "EXPECT_OUTPUT;REJECT_OUTPUT;EXIT_CODE" "" ${ARGN})
  if("${ARG_EXIT_CODE}" STREQUAL "")
    set(ARG_EXIT_CODE 0)
  endif()
  set(_prefix ${CMAKE_COMMAND} -DEXIT_CODE=${ARG_EXIT_CODE})
  if(NOT "${ARG_EXPECT_OUTPUT}" STREQUAL "")
    list(APPEND _prefix "-DEXPECT_OUTPUT=${ARG_EXPECT_OUTPUT}")
  endif()
  if(NOT "${ARG_REJECT_OUTPUT}" STREQUAL "")
    list(APPEND _prefix "-DREJECT_OUTPUT=${ARG_REJECT_OUTPUT}")
  endif()
  list(APPEND _prefix -P ${_BATON_CHECK_RUN_SCRIPT} --)
  set(${var} ${_prefix} PARENT_SCOPE)
endfunction()

# baton_add_checked_test(NAME name COMMAND cmd args... [EXPECT_OUTPUT regex] [REJECT_OUTPUT regex]
#                        [EXIT_CODE n] [WORKING_DIRECTORY dir]): a plain (non-MPI) test that checks
# the exit code and the output.
function(baton_add_checked_test)
  cmake_parse_arguments(ARG "" "NAME;EXPECT_OUTPUT;REJECT_OUTPUT;EXIT_CODE;WORKING_DIRECTORY"
                        "COMMAND" ${ARGN})
  baton_check_run_prefix(_check EXPECT_OUTPUT "${ARG_EXPECT_OUTPUT}"
                         REJECT_OUTPUT "${ARG_REJECT_OUTPUT}" EXIT_CODE "${ARG_EXIT_CODE}")
  set(_wd "")
  if(ARG_WORKING_DIRECTORY)
    set(_wd WORKING_DIRECTORY ${ARG_WORKING_DIRECTORY})
  endif()
  add_test(NAME ${ARG_NAME} COMMAND ${_check} ${ARG_COMMAND} ${_wd})
endfunction()
