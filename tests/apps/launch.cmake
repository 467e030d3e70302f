# launch(np args...): runs APP at `np` ranks (--oversubscribe under Open MPI); sets rc and out
# (stdout and stderr) in the caller's scope. Included by the tests/apps/*.cmake scripts.
function(launch np)
  set(cmd ${MPIEXEC} ${NP_FLAG} ${np})
  if(OPENMPI)
    list(APPEND cmd --oversubscribe)
  endif()
  execute_process(COMMAND ${cmd} ${APP} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  set(rc ${rc} PARENT_SCOPE)
  set(out "${out}${err}" PARENT_SCOPE)
endfunction()
