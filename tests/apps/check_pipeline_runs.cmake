# Runs baton-pipeline at 1, 2 and 3 ranks in each communication mode (options partly from a config
# file) and checks that every results file holds each input system once and that all of them are
# identical byte for byte; then checks that bad input and settings fail with clear messages.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/run.cfg "systems = 10\nsizes = 13,19\nlangevin-steps = 80\nnve-steps = 50\nfmax = 1e-4\n")
set(common --config ${WORK}/run.cfg --progress on --capacity-systems 3 --capacity-atoms 60)

# The frames of a results file in order of system_id (baton-pipeline writes them in the order they
# finish, which may differ between runs): `out` gets them concatenated, without the run description
# that the first frame's comment line carries (`run` gets it).
function(frames_by_id file out run)
  file(STRINGS ${file} lines)
  set(description "")
  set(ids "")
  set(current "")
  set(id "")
  set(left 0)
  foreach(line IN LISTS lines)
    if(left EQUAL 0)
      if(NOT id STREQUAL "")
        set(frame_${id} "${current}")
      endif()
      math(EXPR left "${line} + 1")
      set(current "${line}\n")
      set(id "")
    else()
      if(id STREQUAL "")
        string(REGEX MATCH "system_id=([0-9]+)" found "${line}")
        set(id ${CMAKE_MATCH_1})
        list(APPEND ids ${id})
        string(REGEX MATCH " baton_run=\"[^\"]*\"" found "${line}")
        if(NOT found STREQUAL "")
          set(description "${found}")
          string(REPLACE "${found}" "" line "${line}")
        endif()
      endif()
      string(APPEND current "${line}\n")
      math(EXPR left "${left} - 1")
    endif()
  endforeach()
  set(frame_${id} "${current}")
  list(SORT ids COMPARE NATURAL)
  set(all "")
  foreach(i IN LISTS ids)
    string(APPEND all "${frame_${i}}")
  endforeach()
  set(${out} "${all}" PARENT_SCOPE)
  set(${run} "${description}" PARENT_SCOPE)
endfunction()

# diff = 0 when two results files hold the same frames, byte for byte, in any order, and the same
# run description.
function(compare_results a b)
  frames_by_id(${a} frames_a run_a)
  frames_by_id(${b} frames_b run_b)
  if(frames_a STREQUAL frames_b AND NOT frames_a STREQUAL "" AND run_a STREQUAL run_b
     AND NOT run_a STREQUAL "")
    set(diff 0 PARENT_SCOPE)
  else()
    set(diff 1 PARENT_SCOPE)
  endif()
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/launch.cmake)

set(runs "1 sync" "2 async_recv" "3 fully_async" "3 sync --ranks-per-stage 1,1,1 --synchronized")
set(first "")
foreach(run IN LISTS runs)
  separate_arguments(run)
  list(GET run 0 np)
  list(GET run 1 mode)
  set(extra "")
  list(LENGTH run len)
  if(len GREATER 2)
    list(SUBLIST run 2 -1 extra)
  endif()
  set(file ${WORK}/out.np${np}.${mode}.xyz)
  launch(${np} ${common} --mode ${mode} ${extra} --output ${file})
  if(NOT rc EQUAL 0 OR NOT out MATCHES "10 systems in .* pipeline efficiency")
    message(FATAL_ERROR "baton-pipeline -n ${np} --mode ${mode} failed (${rc}):\n${out}")
  endif()
  if(NOT out MATCHES "10/10 systems finished")
    message(FATAL_ERROR "no final progress line:\n${out}")
  endif()
  file(STRINGS ${file} ids REGEX "system_id=")
  list(LENGTH ids n)
  if(NOT n EQUAL 10)
    message(FATAL_ERROR "${file}: ${n} frames, expected 10")
  endif()
  foreach(id RANGE 9)
    file(STRINGS ${file} hit REGEX "system_id=${id} ")
    list(LENGTH hit h)
    if(NOT h EQUAL 1 OR NOT hit MATCHES "steps_fire=[0-9]+ steps_langevin=80 steps_nve=50")
      message(FATAL_ERROR "${file}: system ${id} appears ${h} times: ${hit}")
    endif()
  endforeach()
  if(first STREQUAL "")
    set(first ${file})
  else()
    compare_results(${first} ${file})
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "${file} differs from ${first}")
    endif()
  endif()
endforeach()

# An explicit rank -> stage map and a mode per stage (from a config file: the map holds ';'): the
# same results as every run above.
file(READ ${WORK}/run.cfg run_cfg)
file(WRITE ${WORK}/map.cfg "${run_cfg}stage-ranks = 0;2;1\nstage-modes = sync,fully_async,async_recv\n")
launch(3 --config ${WORK}/map.cfg --capacity-systems 3 --capacity-atoms 60 --output ${WORK}/out.map.xyz)
if(NOT rc EQUAL 0 OR NOT out MATCHES "stage 1 'langevin': rank 2\nstage 2 'nve': rank 1")
  message(FATAL_ERROR "--stage-ranks 0;2;1 (${rc}):\n${out}")
endif()
compare_results(${first} ${WORK}/out.map.xyz)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "--stage-ranks 0;2;1 --stage-modes: results differ from ${first}")
endif()
file(WRITE ${WORK}/badmap.cfg "stage-ranks = 1;0;2\n")
launch(3 --config ${WORK}/badmap.cfg --output none)
if(NOT rc EQUAL 2 OR NOT out MATCHES "--stage-ranks: '1;0;2': .*rank 0 must run stage 0")
  message(FATAL_ERROR "--stage-ranks 1;0;2 (${rc}):\n${out}")
endif()

# The same systems with --potential morse: identical at 1 and 2 ranks, and not the LJ results.
foreach(np 1 2)
  set(file ${WORK}/morse.np${np}.xyz)
  launch(${np} ${common} --potential morse --morse-alpha 5 --output ${file})
  if(NOT rc EQUAL 0 OR NOT out MATCHES "10 systems in .* pipeline efficiency")
    message(FATAL_ERROR "baton-pipeline -n ${np} --potential morse failed (${rc}):\n${out}")
  endif()
endforeach()
compare_results(${WORK}/morse.np1.xyz ${WORK}/morse.np2.xyz)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "--potential morse: the results at 1 and 2 ranks differ")
endif()
file(STRINGS ${WORK}/morse.np1.xyz morse_energies REGEX "system_id=0 ")
file(STRINGS ${first} lj_energies REGEX "system_id=0 ")
string(REGEX MATCH "energy=[-0-9.e+]+" morse_energy "${morse_energies}")
string(REGEX MATCH "energy=[-0-9.e+]+" lj_energy "${lj_energies}")
if(morse_energy STREQUAL "" OR morse_energy STREQUAL lj_energy)
  message(FATAL_ERROR "--potential morse: system 0 has '${morse_energy}', LJ '${lj_energy}'")
endif()

# Periodic input: a jittered 2x2x2 fcc crystal (32 atoms, cubic cell of 3.4) and a tilted copy,
# written here as extended XYZ with Lattice and pbc; the results keep the cells.
function(hundredths value out)  # 345 -> 3.45, -7 -> -0.07
  set(sign "")
  if(value LESS 0)
    set(sign "-")
    math(EXPR value "-(${value})")
  endif()
  math(EXPR whole "${value} / 100")
  math(EXPR frac "${value} % 100")
  if(frac LESS 10)
    set(frac "0${frac}")
  endif()
  set(${out} "${sign}${whole}.${frac}" PARENT_SCOPE)
endfunction()
set(crystal "")
foreach(frame "0|3.4 0 0 0 3.4 0 0 0 3.4|T T T" "1|3.4 0 0 0.5 3.4 0 0.3 -0.4 3.4|T T F")
  string(REPLACE "|" ";" frame "${frame}")
  list(GET frame 0 id)
  list(GET frame 1 lattice)
  list(GET frame 2 pbc)
  string(APPEND crystal "32\nLattice=\"${lattice}\" Properties=species:S:1:pos:R:3 system_id=${id} pbc=\"${pbc}\"\n")
  set(n 0)
  foreach(k 0 1)
    foreach(j 0 1)
      foreach(i 0 1)
        foreach(site "0 0 0" "85 85 0" "85 0 85" "0 85 85")
          separate_arguments(site)
          list(GET site 0 sx)
          list(GET site 1 sy)
          list(GET site 2 sz)
          math(EXPR jitter "(${n} * 7) % 9 - 4")
          math(EXPR x "${i} * 170 + ${sx} + ${jitter}")
          math(EXPR y "${j} * 170 + ${sy} - ${jitter}")
          math(EXPR z "${k} * 170 + ${sz}")
          if(id EQUAL 1)  # the tilted cell: carry the atoms along (b and c tilted as in the Lattice)
            math(EXPR x "${x} + (${y} * 50 + ${z} * 30) / 340")
            math(EXPR y "${y} - (${z} * 40) / 340")
          endif()
          hundredths(${x} x)
          hundredths(${y} y)
          hundredths(${z} z)
          string(APPEND crystal "Ar ${x} ${y} ${z}\n")
          math(EXPR n "${n} + 1")
        endforeach()
      endforeach()
    endforeach()
  endforeach()
endforeach()
file(WRITE ${WORK}/crystal.xyz "${crystal}")
launch(2 --input ${WORK}/crystal.xyz --stages fire,nve --nve-steps 20 --cutoff 1.6 --output ${WORK}/crystal.out.xyz)
if(NOT rc EQUAL 0 OR NOT out MATCHES "2 systems in .* pipeline efficiency")
  message(FATAL_ERROR "baton-pipeline on periodic input failed (${rc}):\n${out}")
endif()
file(STRINGS ${WORK}/crystal.out.xyz comments REGEX "system_id=")
list(LENGTH comments frames)
if(NOT frames EQUAL 2 OR NOT comments MATCHES "Lattice=\"3.4 0 0 0 3.4 0 0 0 3.4\".*pbc=\"T T T\""
   OR NOT comments MATCHES "Lattice=\"3.4 0 0 0.5 3.4 0 0.3 -0.4 3.4\".*pbc=\"T T F\"")
  message(FATAL_ERROR "periodic results lost their cells:\n${comments}")
endif()
# The fully periodic cell gets its stress and pressure; the one periodic along a and b only does
# not (no volume to divide by).
foreach(comment IN LISTS comments)
  if(comment MATCHES "pbc=\"T T T\"" AND NOT comment MATCHES " stress=\"[^ \"]+( [^ \"]+)+\" pressure=[-0-9]")
    message(FATAL_ERROR "the fully periodic result has no stress and pressure:\n${comment}")
  elseif(comment MATCHES "pbc=\"T T F\"" AND comment MATCHES "stress=|pressure=")
    message(FATAL_ERROR "a result periodic along two axes has a stress:\n${comment}")
  endif()
endforeach()

# Variable-cell FIRE: --relax-cell shrinks the cubic cell (cutoff 1.5: nearest neighbours only,
# relaxed side 3.17) to zero pressure; the cell periodic along a and b keeps c's z component.
launch(2 --input ${WORK}/crystal.xyz --stages fire --relax-cell --cutoff 1.5
       --output ${WORK}/relaxed.out.xyz)
file(STRINGS ${WORK}/relaxed.out.xyz relaxed REGEX "system_id=")
if(NOT rc EQUAL 0 OR NOT relaxed MATCHES "Lattice=\"3\\.17[0-9]* [^\"]*\"[^;]*pressure=-?[0-9.]+e-(0[6-9]|[1-9][0-9])"
   OR NOT relaxed MATCHES "Lattice=\"[^\"]* 3\\.4\" [^;]*pbc=\"T T F\"")
  message(FATAL_ERROR "--relax-cell: run failed (${rc}) or the cells did not relax as expected:\n${out}\n${relaxed}")
endif()

# NPT (C-rescale): the fully periodic cell changes its volume, keeping its shape; the slab
# (periodic along a and b only) runs at constant volume, its cell exactly as given.
launch(2 --input ${WORK}/crystal.xyz --stages npt --cutoff 1.2 --pressure 0.5 --npt-steps 200
       --output ${WORK}/npt.out.xyz)
file(STRINGS ${WORK}/npt.out.xyz npt_frames REGEX "system_id=")
string(REGEX MATCH "Lattice=\"([0-9.]+) 0 0 0 ([0-9.]+) 0 0 0 ([0-9.]+)\"[^;]*steps_npt=200" cubic_npt
       "${npt_frames}")
if(NOT rc EQUAL 0 OR NOT npt_frames MATCHES "Lattice=\"3.4 0 0 0.5 3.4 0 0.3 -0.4 3.4\"[^;]*pbc=\"T T F\""
   OR NOT cubic_npt OR NOT CMAKE_MATCH_1 STREQUAL CMAKE_MATCH_2 OR NOT CMAKE_MATCH_1 STREQUAL CMAKE_MATCH_3
   OR CMAKE_MATCH_1 STREQUAL "3.4")
  message(FATAL_ERROR "npt: run failed (${rc}) or the cells are not as expected:\n${out}\n${npt_frames}")
endif()

# NPT with each length on its own (aniso): the fully periodic cell's lengths move apart (no longer
# all equal), its tilts stay 0, and its frame matches `frame` (the conserved quantity, for MTK);
# the slab runs at constant volume. ARGN: the barostat's options.
function(check_npt_aniso name frame)
  launch(2 --input ${WORK}/crystal.xyz --stages npt --npt-coupling aniso --cutoff 1.2 --pressure 0.5
         --npt-steps 200 ${ARGN} --output ${WORK}/${name}.out.xyz)
  file(STRINGS ${WORK}/${name}.out.xyz frames REGEX "system_id=")
  string(REGEX MATCH "Lattice=\"([0-9.]+) 0 0 0 ([0-9.]+) 0 0 0 ([0-9.]+)\"[^;]*steps_npt=200${frame}"
         cubic "${frames}")
  if(NOT rc EQUAL 0 OR NOT frames MATCHES "Lattice=\"3.4 0 0 0.5 3.4 0 0.3 -0.4 3.4\"[^;]*pbc=\"T T F\""
     OR NOT cubic OR (CMAKE_MATCH_1 STREQUAL CMAKE_MATCH_2 AND CMAKE_MATCH_1 STREQUAL CMAKE_MATCH_3))
    message(FATAL_ERROR "npt --npt-coupling aniso ${ARGN}: run failed (${rc}) or the cells are not as expected:\n${out}\n${frames}")
  endif()
endfunction()
check_npt_aniso(mtk "[^;]* conserved=-?[0-9]" --barostat mtk --barostat-period 0.5)
check_npt_aniso(npt_aniso "")

# Fixed atoms: the cubic crystal with atoms 7, 16 and 25 fixed (ASE's move_mask column, F) stay
# exactly where they were through fire and nve, and the results carry the column.
string(REGEX MATCH "32\n[^\n]*system_id=0[^\n]*\n([^\n]*\n)+32\n" cubic "${crystal}")
string(REGEX REPLACE "32\n$" "" cubic "${cubic}")
string(REPLACE "Properties=species:S:1:pos:R:3 " "Properties=species:S:1:pos:R:3:move_mask:L:1 " cubic "${cubic}")
string(REGEX MATCHALL "Ar [^\n]*" atoms "${cubic}")
set(fixed_input "")
set(held "")
set(n 0)
foreach(atom IN LISTS atoms)
  if(n EQUAL 7 OR n EQUAL 16 OR n EQUAL 25)
    string(APPEND fixed_input "${atom} F\n")
    string(REGEX REPLACE "\\.?0+( |$)" "\\1" short "${atom} ")  # as Baton writes them: 1.70 -> 1.7
    list(APPEND held "${short}F")
  else()
    string(APPEND fixed_input "${atom} T\n")
  endif()
  math(EXPR n "${n} + 1")
endforeach()
string(REGEX REPLACE "Ar [^\n]*\n" "" header "${cubic}")
file(WRITE ${WORK}/fixed.xyz "${header}${fixed_input}")
launch(2 --input ${WORK}/fixed.xyz --stages fire,nve --nve-steps 50 --nve-temperature 0.3 --cutoff 1.6
       --output ${WORK}/fixed.out.xyz)
file(READ ${WORK}/fixed.out.xyz fixed_out)
if(NOT rc EQUAL 0 OR NOT fixed_out MATCHES "Properties=species:S:1:pos:R:3:velo:R:3:move_mask:L:1 ")
  message(FATAL_ERROR "fixed atoms: run failed or the results lost move_mask (${rc}):\n${out}\n${fixed_out}")
endif()
string(REGEX MATCHALL "Ar [^\n]* F" fixed_lines "${fixed_out}")
list(LENGTH fixed_lines fixed_count)
if(NOT fixed_count EQUAL 3)
  message(FATAL_ERROR "fixed atoms: expected 3 fixed atoms in the results, got:\n${fixed_out}")
endif()
foreach(want IN LISTS held)
  string(REGEX MATCH "^(Ar [^ ]+ [^ ]+ [^ ]+) " position "${want}")
  set(position "${CMAKE_MATCH_1}")
  if(NOT fixed_out MATCHES "\n${position} 0 0 0 F\n")
    message(FATAL_ERROR "fixed atoms: '${position}' did not stay where it was (velocity 0):\n${fixed_out}")
  endif()
endforeach()

# EAM (Cu, LAMMPS' Cu_u3.eam) on a jittered 3x3x3 Cu crystal (108 atoms, a = 3.616 A) given without
# masses: the masses come from the potential file, the units are metal, 1 and 2 ranks agree.
if(EAM_FILE)
  set(cu "108\nLattice=\"10.848 0 0 0 10.848 0 0 0 10.848\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\n")
  set(n 0)
  foreach(k 0 1 2)
    foreach(j 0 1 2)
      foreach(i 0 1 2)
        foreach(site "0 0 0" "1808 1808 0" "1808 0 1808" "0 1808 1808")
          separate_arguments(site)
          list(GET site 0 sx)
          list(GET site 1 sy)
          list(GET site 2 sz)
          math(EXPR jitter "((${n} * 37) % 101 - 50)")  # up to 0.05 A
          math(EXPR x "${i} * 3616 + ${sx} + ${jitter}")
          math(EXPR y "${j} * 3616 + ${sy} - ${jitter} / 2")
          math(EXPR z "${k} * 3616 + ${sz} + ${jitter} / 3")
          set(coords "")
          foreach(v IN ITEMS ${x} ${y} ${z})  # thousandths -> decimal
            set(sign "")
            if(v LESS 0)
              set(sign "-")
              math(EXPR v "-(${v})")
            endif()
            math(EXPR whole "${v} / 1000")
            math(EXPR frac "${v} % 1000 + 1000")
            string(SUBSTRING "${frac}" 1 3 frac)
            string(APPEND coords " ${sign}${whole}.${frac}")
          endforeach()
          string(APPEND cu "Cu${coords}\n")
          math(EXPR n "${n} + 1")
        endforeach()
      endforeach()
    endforeach()
  endforeach()
  file(WRITE ${WORK}/cu.xyz "${cu}")
  foreach(np 1 2)
    launch(${np} --input ${WORK}/cu.xyz --potential eam --potential-file ${EAM_FILE}
           --stages fire,nve --nve-temperature 300 --nve-steps 50 --output ${WORK}/cu.np${np}.xyz)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "1 systems in .* pipeline efficiency")
      message(FATAL_ERROR "baton-pipeline --potential eam at ${np} ranks failed (${rc}):\n${out}")
    endif()
  endforeach()
  compare_results(${WORK}/cu.np1.xyz ${WORK}/cu.np2.xyz)
  file(STRINGS ${WORK}/cu.np1.xyz cu_comment REGEX "energy=")
  string(REGEX MATCH "energy=-[0-9.]+" cu_energy "${cu_comment}")
  string(REGEX MATCH "masses:R:1" cu_masses "${cu_comment}")
  string(REGEX MATCH " pressure=" cu_pressure "${cu_comment}")
  if(NOT diff EQUAL 0 OR cu_energy STREQUAL "" OR cu_masses STREQUAL "" OR cu_pressure STREQUAL "")
    message(FATAL_ERROR "--potential eam: results differ at 1 and 2 ranks, or no energy, masses or pressure: ${cu_comment}")
  endif()
  # The same with another neighbour-list skin: the same system, to rounding.
  launch(2 --input ${WORK}/cu.xyz --potential eam --potential-file ${EAM_FILE} --skin 0.5
         --stages fire,nve --nve-temperature 300 --nve-steps 50 --output ${WORK}/cu.skin.xyz)
  file(STRINGS ${WORK}/cu.skin.xyz skin_comment REGEX "energy=")
  string(REGEX MATCH "energy=-[0-9]+\\.[0-9][0-9][0-9][0-9]" skin_energy "${skin_comment}")
  string(REGEX MATCH "energy=-[0-9]+\\.[0-9][0-9][0-9][0-9]" default_energy "${cu_comment}")
  if(NOT rc EQUAL 0 OR skin_energy STREQUAL "" OR NOT skin_energy STREQUAL default_energy)
    message(FATAL_ERROR "--skin 0.5: ${skin_energy} against ${default_energy} (${rc}):\n${out}")
  endif()
  # Metal units' default time step (0.001 ps) reaches every dynamics stage: the same results as
  # with --dt 0.001 given, through nve and nvt with each thermostat.
  foreach(thermostat IN ITEMS csvr nose-hoover langevin)
    foreach(dt IN ITEMS default 0.001)
      set(dt_option "")
      if(NOT dt STREQUAL "default")
        set(dt_option --dt ${dt})
      endif()
      launch(1 --input ${WORK}/cu.xyz --potential eam --potential-file ${EAM_FILE} --stages nve,nvt
             --nve-temperature 300 --nve-steps 20 --nvt-steps 20 --thermostat ${thermostat}
             ${dt_option} --output ${WORK}/cu.dt.${dt}.xyz)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "--stages nve,nvt --thermostat ${thermostat} in metal units (dt ${dt}) failed (${rc}):\n${out}")
      endif()
      file(READ ${WORK}/cu.dt.${dt}.xyz dt_${dt})
      string(REGEX REPLACE " baton_run=\"[^\"]*\"" "" dt_${dt} "${dt_${dt}}")
    endforeach()
    if(NOT dt_default STREQUAL dt_0.001)
      message(FATAL_ERROR "metal units: the default time step is not --dt 0.001 in nve and nvt (--thermostat ${thermostat})")
    endif()
  endforeach()
  # Cu_u3's cohesive energy is 3.54 eV per atom: 108 atoms near -382 eV.
  string(REGEX REPLACE "energy=-([0-9]+).*" "\\1" cu_whole "${cu_energy}")
  if(cu_whole LESS 370 OR cu_whole GREATER 385)
    message(FATAL_ERROR "--potential eam: ${cu_energy} eV for 108 Cu atoms, expected about -382")
  endif()
  file(WRITE ${WORK}/cuxx.xyz "1\nLattice=\"10 0 0 0 10 0 0 0 10\" Properties=species:S:1:pos:R:3\nXx 0 0 0\n")
else()
  message(STATUS "no EAM file (Debian: lammps-data): the --potential eam runs are skipped")
endif()

# A system whose numbers break (two atoms on one spot) is a failed system, not a failed run: the run
# finishes with exit code 4, reports it, writes it with failed=T and its reason, and the other system
# finishes normally. The same for a NaN coordinate in the input and for an exploding step (--dt 10).
file(WRITE ${WORK}/broken.xyz "2\nProperties=species:S:1:pos:R:3 system_id=1\nAr 0 0 0\nAr 0 0 0\n3\nProperties=species:S:1:pos:R:3 system_id=2\nAr 0 0 0\nAr 1.12 0 0\nAr 0.56 0.97 0\n")
file(WRITE ${WORK}/nan.xyz "3\nProperties=species:S:1:pos:R:3 system_id=1\nAr 0 0 0\nAr 1.12 0 nan\nAr 0.56 0.97 0\n3\nProperties=species:S:1:pos:R:3 system_id=2\nAr 0 0 0\nAr 1.12 0 0\nAr 0.56 0.97 0\n")
# name ! reason (a regex) ! arguments separated by ^
foreach(case "broken!non-finite (energy|forces)!--input^${WORK}/broken.xyz"
             "nan!non-finite positions!--input^${WORK}/nan.xyz")
  string(REPLACE "!" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 reason)
  list(GET parts 2 args)
  string(REPLACE "^" ";" args "${args}")
  launch(2 ${args} --output ${WORK}/${name}.out.xyz)
  file(STRINGS ${WORK}/${name}.out.xyz frames REGEX "system_id=")
  if(NOT rc EQUAL 4 OR NOT out MATCHES "failed: [12] of 2 systems"
     OR NOT frames MATCHES "system_id=1 [^;]*failed=T failure=\"${reason}")
    message(FATAL_ERROR "failed systems, ${name} (${rc}):\n${out}\n${frames}")
  endif()
  if(frames MATCHES "system_id=2 [^;]*failed")
    message(FATAL_ERROR "failed systems, ${name}: system 2 failed too:\n${frames}")
  endif()
endforeach()
launch(2 --systems 3 --sizes 55 --stages fire,nve --dt 10 --output ${WORK}/exploded.out.xyz)
file(STRINGS ${WORK}/exploded.out.xyz frames REGEX "system_id=")
if(NOT rc EQUAL 4 OR NOT out MATCHES "failed: [123] of 3 systems" OR NOT frames MATCHES "failure=\"exploded")
  message(FATAL_ERROR "failed systems, --dt 10 (${rc}):\n${out}\n${frames}")
endif()

# A FIRE stage that runs out of steps before converging fails the system ("not converged"), so
# that the nve stage after it passes it on untouched; --fire-unconverged continue lets it go on.
# FIRE 2.0 (--fire-variant fire2) converges the same clusters.
launch(2 --systems 3 --sizes 55 --stages fire,nve --fire-max-steps 5 --nve-steps 3
       --output ${WORK}/unconverged.out.xyz)
file(STRINGS ${WORK}/unconverged.out.xyz frames REGEX "system_id=")
if(NOT rc EQUAL 4 OR NOT out MATCHES "failed: 3 of 3 systems"
   OR NOT frames MATCHES "steps_fire=5 [^;]*failed=T failure=\"not converged within its step budget\""
   OR frames MATCHES "steps_nve=[1-9]")
  message(FATAL_ERROR "unconverged FIRE (${rc}):\n${out}\n${frames}")
endif()
launch(2 --systems 3 --sizes 55 --stages fire,nve --fire-max-steps 5 --nve-steps 3
       --fire-unconverged continue --output ${WORK}/continued.out.xyz)
file(STRINGS ${WORK}/continued.out.xyz frames REGEX "system_id=")
if(NOT rc EQUAL 0 OR frames MATCHES "failed" OR NOT frames MATCHES "steps_fire=5 [^;]*steps_nve=3")
  message(FATAL_ERROR "--fire-unconverged continue (${rc}):\n${out}\n${frames}")
endif()
launch(2 --systems 3 --sizes 13,55 --stages fire --fire-variant fire2 --fire-dt 0.005
       --output ${WORK}/fire2.out.xyz)
file(STRINGS ${WORK}/fire2.out.xyz frames REGEX "system_id=")
if(NOT rc EQUAL 0 OR frames MATCHES "failed" OR NOT frames MATCHES "fire-variant=fire2")
  message(FATAL_ERROR "--fire-variant fire2 (${rc}):\n${out}\n${frames}")
endif()

# The conserved quantity of the last stage, where it has one (nve, nvt with nose-hoover); a stage
# without one (langevin) does not pass on the one before it.
foreach(case "fire,nve^--nve-steps^20!conserved=-[0-9]" "nve,langevin^--langevin-steps^20!none"
             "nvt^--thermostat^nose-hoover^--nvt-steps^20!conserved=-[0-9]")
  string(REPLACE "!" ";" parts "${case}")
  list(GET parts 0 args)
  list(GET parts 1 expected)
  string(REPLACE "^" ";" args "${args}")
  launch(1 --systems 2 --sizes 13 --stages ${args} --output ${WORK}/conserved.out.xyz)
  file(STRINGS ${WORK}/conserved.out.xyz frames REGEX "system_id=")
  if(NOT rc EQUAL 0 OR (expected STREQUAL "none" AND frames MATCHES "conserved")
     OR (NOT expected STREQUAL "none" AND NOT frames MATCHES "${expected}"))
    message(FATAL_ERROR "conserved quantity, --stages ${args} (${rc}):\n${out}\n${frames}")
  endif()
endforeach()

# Streamed output and --resume. An unfinished run leaves its results in FILE.part (FILE appears only
# when a run completes); a new run refuses to start over them (exit 2, the file untouched) unless
# given --resume, which keeps their complete frames, drops a cut last frame, and runs only the rest.
launch(2 --systems 12 --sizes 13 --stages fire --output ${WORK}/whole.xyz)
file(STRINGS ${WORK}/whole.xyz whole_lines)
list(SUBLIST whole_lines 0 45 kept_lines)  # three whole frames of 13 atoms
list(GET whole_lines 45 count_line)
list(GET whole_lines 46 comment_line)
list(GET whole_lines 47 atom_line)
string(SUBSTRING "${atom_line}" 0 12 cut_atom)  # a frame cut in its first atom line
string(REPLACE ";" "\n" kept_text "${kept_lines}")
file(WRITE ${WORK}/resumed.xyz.part "${kept_text}\n${count_line}\n${comment_line}\n${cut_atom}")
launch(2 --systems 12 --sizes 13 --stages fire --output ${WORK}/resumed.xyz)
file(SIZE ${WORK}/resumed.xyz.part part_size)
if(NOT rc EQUAL 2 OR NOT out MATCHES "resumed.xyz.part' holds the results of an unfinished run"
   OR EXISTS ${WORK}/resumed.xyz)
  message(FATAL_ERROR "a run over an unfinished one (${rc}):\n${out}")
endif()
launch(2 --systems 12 --sizes 13 --stages fire --output ${WORK}/resumed.xyz --resume)
if(NOT rc EQUAL 0 OR NOT out MATCHES "9 systems through .*3 finished by an earlier run"
   OR NOT out MATCHES "results: .*resumed.xyz \\(12 systems" OR EXISTS ${WORK}/resumed.xyz.part)
  message(FATAL_ERROR "--resume (${rc}):\n${out}")
endif()
compare_results(${WORK}/whole.xyz ${WORK}/resumed.xyz)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "--resume: the results differ from those of one whole run")
endif()
file(READ ${WORK}/resumed.xyz resumed_text)
string(FIND "${resumed_text}" "${kept_text}\n" kept_at)
if(NOT kept_at EQUAL 0)
  message(FATAL_ERROR "--resume: the earlier run's frames are not kept as they were")
endif()

# --resume goes on only from this run's FILE.part (its first frame describes the run): another
# input or other options are refused (exit 2, naming what differs, the file untouched), a damaged
# frame before the last is an error naming its line, and without FILE.part every system runs,
# whatever a complete FILE holds.
foreach(other "--seed^2|seed: 1 there, 2 now" "--fmax^1e-5|fmax: 1e-06 there, 1e-05 now")
  string(REPLACE "|" ";" parts "${other}")
  list(GET parts 0 args)
  list(GET parts 1 expected)
  string(REPLACE "^" ";" args "${args}")
  file(WRITE ${WORK}/other.xyz.part "${kept_text}\n")
  launch(2 --systems 12 --sizes 13 --stages fire --output ${WORK}/other.xyz --resume ${args})
  file(READ ${WORK}/other.xyz.part after)
  if(NOT rc EQUAL 2 OR NOT out MATCHES "--resume: .*another run \\(${expected}\\)"
     OR NOT after STREQUAL "${kept_text}\n" OR EXISTS ${WORK}/other.xyz)
    message(FATAL_ERROR "--resume over another run's results, ${args} (${rc}):\n${out}")
  endif()
endforeach()
set(damaged_lines "${kept_lines}")
list(REMOVE_AT damaged_lines 20)
list(INSERT damaged_lines 20 "Ar 0 0")  # frame 2 (lines 16-30) loses a column in line 21
string(REPLACE ";" "\n" damaged_text "${damaged_lines}")
file(WRITE ${WORK}/other.xyz.part "${damaged_text}\n")
launch(2 --systems 12 --sizes 13 --stages fire --output ${WORK}/other.xyz --resume)
file(READ ${WORK}/other.xyz.part after)
if(NOT rc EQUAL 2 OR NOT out MATCHES "other.xyz.part:16: frame 2 is damaged.*:21:"
   OR NOT after STREQUAL "${damaged_text}\n")
  message(FATAL_ERROR "--resume over a damaged frame (${rc}):\n${out}")
endif()
launch(2 --systems 12 --sizes 13 --stages fire --output ${WORK}/whole.xyz --resume)
if(NOT rc EQUAL 0 OR NOT out MATCHES "no unfinished run in '[^']*whole.xyz.part', so every system runs"
   OR NOT out MATCHES "12 systems through" OR out MATCHES "finished by an earlier run")
  message(FATAL_ERROR "--resume without FILE.part (${rc}):\n${out}")
endif()

# Hooks from the command line: snapshots every 5 steps per stage and rank (readable frames marked
# with their step) and a log line per system finishing each stage.
launch(2 --systems 4 --sizes 13 --stages fire,nve --nve-steps 60 --snapshots ${WORK}/snap
       --snapshot-every 5 --log-finished --output none)
file(GLOB snaps ${WORK}/snap.*.rank*.xyz)
list(LENGTH snaps n_snaps)
string(REGEX MATCHALL "stage '(fire|nve)': system [0-3] finished after" logged "${out}")
list(LENGTH logged n_logged)
if(NOT rc EQUAL 0 OR n_snaps LESS 2 OR NOT n_logged EQUAL 8)
  message(FATAL_ERROR "hooks: ${n_snaps} snapshot files, ${n_logged} log lines (${rc}):\n${out}")
endif()
foreach(snap IN LISTS snaps)
  file(STRINGS ${snap} marked REGEX "snapshot_step=[0-9]+")
  if(marked STREQUAL "")
    message(FATAL_ERROR "${snap} has no frame marked with its step")
  endif()
  # Step keys named by stage, as in the results file (not steps_stage0).
  file(STRINGS ${snap} unnamed REGEX "steps_stage[0-9]")
  file(STRINGS ${snap} named REGEX "steps_fire=[0-9]+")
  if(NOT unnamed STREQUAL "" OR named STREQUAL "")
    message(FATAL_ERROR "${snap}: step keys not named by stage:\n${unnamed}")
  endif()
endforeach()

# Bad input and settings: an error naming the problem, exit code 2 (bad option or input), no hang.
file(WRITE ${WORK}/bad.xyz "2\nProperties=species:S:1:pos:R:3\nAr 0 0 0\nAr 1.0 x 0\n")
# np | arguments separated by ^ | expected text
set(cases "2|--input^${WORK}/bad.xyz|bad.xyz:4:"
          "2|--stages^fire,md|unknown stage 'md'"
          "2|--capacity-atoms^20|largest input system has 55 atoms"
          "3|--ranks-per-stage^1,1|--ranks-per-stage: '1,1' must give 3 counts"
          "1|--mode^eager|sync, async_recv or fully_async"
          "2|--fmax^-1|fmax"
          "2|--potential^eamx|unknown potential 'eamx' \\(choose from lj, morse, eam, torch\\)"
          "2|--thermostat^berendsen|--thermostat: must be csvr, nose-hoover or langevin, not 'berendsen'"
          "2|--stages^nvt^--thermostat-tau^0|--thermostat-tau: must be greater than 0"
          "2|--stages^nvt^--nvt-steps^0|--nvt-steps: must be at least 1"
          "2|--potential^morse^--morse-alpha^0|--morse-alpha: must be greater than 0"
          "2|--input^${WORK}/crystal.xyz|crystal.xyz' frame 1 \\(system 0\\) needs a larger cell: cutoff 3 is more than half the cell's width 3.4"
          "2|--potential^eam|--potential-file: --potential eam needs a potential file"
          "2|--units^cgs|--units: must be auto, lj or metal, not 'cgs'"
          "2|--potential^eam^--potential-file^${WORK}/crystal.xyz^--input^${WORK}/crystal.xyz|--potential-file: .*crystal.xyz: unknown potential file type")
if(EAM_FILE)
  list(APPEND cases "2|--potential^eam^--potential-file^${EAM_FILE}|--input: --potential eam needs --input"
                    "2|--units^lj^--potential^eam^--potential-file^${EAM_FILE}^--input^${WORK}/cu.xyz|--units: lj contradicts --potential eam"
                    "2|--potential^eam^--potential-file^${EAM_FILE}^--input^${WORK}/cuxx.xyz|frame 1 \\(system 0\\) has element 'Xx', which [^ ]*Cu_u3.eam does not have \\(it has Cu\\)")
endif()
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 np)
  list(GET parts 1 args)
  list(GET parts 2 expected)
  string(REPLACE "^" ";" args "${args}")
  launch(${np} --output none ${args})
  if(NOT rc EQUAL 2 OR NOT out MATCHES "${expected}")
    message(FATAL_ERROR "baton-pipeline ${args}: expected exit code 2 and '${expected}', got (${rc}):\n${out}")
  endif()
endforeach()
message(STATUS "baton-pipeline runs: identical results at 1-3 ranks in every mode and with Morse; bad input rejected")
