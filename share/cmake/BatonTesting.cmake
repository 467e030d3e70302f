# baton_add_mpi_test(NAME name TARGET target RANKS 1 2 3 4 [ARGS ...] [TIMEOUT s] [LABELS ...])
#
# Registers one ctest per rank count, named <name>.np<N>, run through MPIEXEC_EXECUTABLE.
# Sets PROCESSORS to N (so `ctest -j` does not overload the machine), adds --oversubscribe for
# Open MPI (more ranks than cores), allows Open MPI to run as root (containers, CI), and sets
# BATON_EXPECT_RANKS=N so that the test can fail when the launcher started N one-rank jobs
# instead of one N-rank job (a launcher from another MPI does exactly that).
function(baton_add_mpi_test)
  cmake_parse_arguments(ARG "" "NAME;TARGET;TIMEOUT" "RANKS;ARGS;LABELS" ${ARGN})
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
  foreach(_n IN LISTS ARG_RANKS)
    set(_test ${ARG_NAME}.np${_n})
    add_test(NAME ${_test}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_n} ${_flags} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${ARG_TARGET}> ${MPIEXEC_POSTFLAGS} ${ARG_ARGS})
    set_tests_properties(${_test} PROPERTIES PROCESSORS ${_n} TIMEOUT ${ARG_TIMEOUT}
                         LABELS "mpi;${ARG_LABELS}" ENVIRONMENT "${_env};BATON_EXPECT_RANKS=${_n}")
  endforeach()
endfunction()
