# Issue 23, items 1 and 5, as baton-pipeline runs them:
# - FIRE with its defaults (and with --fire-dt 10 --fire-dt-max 10) keeps clusters that start with
#   close contacts (--amplitude 0.6) together: every result bound (energy < 0), exit 0;
# - --dt 10 throws the clusters apart in Langevin: each is failed=T (dissociated or exploded), none
#   is written as an unflagged energy 0, exit 4; the results agree at 1 and 2 ranks;
# - a periodic cell longer than 1e6 (1e12, 1e100) is bad input (exit 2) naming that reason.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/launch.cmake)

# FIRE from close contacts: every system bound, none failed.
set(close --systems 4 --sizes 13 --stages fire --amplitude 0.6)
foreach(case "default" "dt10^--fire-dt^10^--fire-dt-max^10")
  string(REPLACE "^" ";" args "${case}")
  list(POP_FRONT args name)
  launch(1 ${close} ${args} --output ${WORK}/fire-${name}.xyz)
  file(STRINGS ${WORK}/fire-${name}.xyz frames REGEX "system_id=")
  list(LENGTH frames n)
  if(NOT rc EQUAL 0 OR NOT n EQUAL 4)
    message(FATAL_ERROR "FIRE from close contacts, ${name} (${rc}, ${n} frames):\n${out}")
  endif()
  foreach(frame IN LISTS frames)
    if(NOT frame MATCHES " energy=-[1-9]" OR frame MATCHES "failed")
      message(FATAL_ERROR "FIRE from close contacts, ${name}: not a bound cluster:\n${frame}")
    endif()
  endforeach()
endforeach()

# --dt 10: every cluster falls apart; each is failed, none an unflagged energy 0.
set(first "")
foreach(np 1 2)
  launch(${np} --systems 4 --sizes 13 --dt 10 --output ${WORK}/dt10-${np}.xyz)
  file(STRINGS ${WORK}/dt10-${np}.xyz frames REGEX "system_id=")
  list(LENGTH frames n)
  if(NOT rc EQUAL 4 OR NOT n EQUAL 4 OR NOT out MATCHES "failed: 4 of 4 systems")
    message(FATAL_ERROR "--dt 10 at ${np} ranks (${rc}, ${n} frames):\n${out}")
  endif()
  foreach(frame IN LISTS frames)
    if(NOT frame MATCHES "failed=T failure=\"(dissociated|exploded)")
      message(FATAL_ERROR "--dt 10 at ${np} ranks: a thrown-apart system is not failed:\n${frame}")
    endif()
  endforeach()
  list(SORT frames)
  if(first STREQUAL "")
    set(first "${frames}")
  elseif(NOT frames STREQUAL first)
    message(FATAL_ERROR "--dt 10: 1 and 2 ranks differ:\n${first}\n${frames}")
  endif()
endforeach()

# A periodic cell too long for double precision: bad input, for that reason; 1e6 runs.
foreach(side 1e12 1e100 1e6)
  file(WRITE ${WORK}/cell-${side}.xyz
       "2\nLattice=\"${side} 0 0 0 ${side} 0 0 0 ${side}\" Properties=species:S:1:pos:R:3\n"
       "Ar -0.56 0 0\nAr 0.56 0 0\n")
  launch(1 --input ${WORK}/cell-${side}.xyz --stages fire --output ${WORK}/cell-${side}.out.xyz)
  if(side STREQUAL "1e6")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "a cell of 1e6 (${rc}):\n${out}")
    endif()
  elseif(NOT rc EQUAL 2 OR NOT out MATCHES "periodic cell vector a of length 1e\\+(12|100), longer than 1e\\+06")
    message(FATAL_ERROR "a cell of ${side} (${rc}):\n${out}")
  endif()
endforeach()
