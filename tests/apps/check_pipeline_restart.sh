#!/bin/bash
# Exact restarts (--checkpoint-every, --resume): an NVT -> NPT campaign on Lennard-Jones crystals
# (a Nose-Hoover chain, whose state is the stage's own; then C-rescale aniso with CSVR: random
# numbers, a changing cell, neighbour lists), killed with kill -9 at a random moment after its
# first checkpoint, resumed on another number of ranks and killed again, then resumed to the end,
# gives every system's frame byte for byte as a run that was never stopped. Batches of 4 systems
# (432 atoms) make systems that finished NVT wait for room in NPT: they are checkpointed as
# entering it. Resumed runs must say that running systems went on from their checkpoints (not
# from step 0). With the stages' own state left out of the checkpoints (their scratch columns)
# the frames differ and this fails. With BATON_RESTART_BAROSTAT=mtk in the environment, the NPT
# stage is MTK's (tri: its strain rates and chains are the stage's own state) instead. With
# BATON_RESTART_NVE=1 an NVE stage follows (three stages: the runs on 2 ranks put every stage on
# both ranks, the one on 3 ranks a stage on each, and the checkpoints pass between the two plans).
#   check_pipeline_restart.sh APP MPIEXEC NP_FLAG OPENMPI WORK
source "$(dirname "$0")/pipeline_script.sh"
npt=(--npt-coupling aniso --barostat-period 0.5)
[ "${BATON_RESTART_BAROSTAT:-crescale}" = mtk ] && npt=(--barostat mtk --npt-coupling tri --barostat-period 1.0)

# 12 fcc crystals of 3 x 3 x 3 cells (108 atoms, a = 1.6), each jittered with its own seed.
awk 'BEGIN {
  a = 1.6; n = 3; L = a * n
  split("0 0 0 0.5 0.5 0 0.5 0 0.5 0 0.5 0.5", b, " ")
  for (s = 0; s < 12; s++) {
    srand(s + 1)
    print 4 * n * n * n
    printf "Lattice=\"%g 0 0 0 %g 0 0 0 %g\" Properties=species:S:1:pos:R:3 pbc=\"T T T\" system_id=%d\n", L, L, L, s
    for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) for (m = 0; m < 4; m++)
      printf "Ar %.6f %.6f %.6f\n", (i + b[3*m+1]) * a + 0.04 * (rand() - 0.5),
             (j + b[3*m+2]) * a + 0.04 * (rand() - 0.5), (k + b[3*m+3]) * a + 0.04 * (rand() - 0.5)
  }
}' > crystals.xyz
stages=(--stages nvt,npt)
[ "${BATON_RESTART_NVE:-0}" = 1 ] && stages=(--stages nvt,npt,nve --nve-steps 200)
args=(--input crystals.xyz --units lj --cutoff 2.0 "${stages[@]}" --thermostat nose-hoover --temperature 0.5
      --nvt-steps 2000 --npt-steps 8000 --pressure 1.0 "${npt[@]}" --steps-per-call 10 --capacity-atoms 432 --progress off)

# The frames of an extended-XYZ file, one line each, by system id, without the run description
# (which only the file's first frame carries).
frames() {
  awk 'function flush() { if (frame != "") print id "\t" frame; frame = "" }
       n == 0 { flush(); n = $1 + 2; id = -1 }
       { line = $0
         if (line ~ /system_id=/) {
           sub(/ baton_run="[^"]*"/, "", line)
           match(line, /system_id=[0-9]+/); id = substr(line, RSTART + 10, RLENGTH - 10)
         }
         frame = frame "|" line; n-- }
       END { flush() }' "$1" | sort -n -k1,1
}

start=$(date +%s%N)
"$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" "${args[@]}" --output ref.xyz > ref.log 2>&1 \
  || fail "the uninterrupted run failed: $(cat ref.log)"
[ "${BATON_RESTART_NVE:-0}" = 1 ] && ! grep -q "stages 0-2 'nose_hoover,npt,nve': ranks 0 1" ref.log &&
  fail "the 2-rank run did not put every stage on both ranks: $(cat ref.log)"
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$(grep -c system_id ref.xyz)" -eq 12 ] || fail "the uninterrupted run wrote $(grep -c system_id ref.xyz) frames"
echo "uninterrupted run: ${took} ms"

# Runs the campaign with checkpoints on $1 ranks ($2: extra options) and, once one of its ranks
# has written a checkpoint, kills one of its ranks with kill -9 after a random 0-$3 ms more.
run_and_kill() {
  touch started  # checkpoint files from before (a resumed run removes them) do not count
  "$mpiexec" "$np_flag" "$1" "${extra[@]}" "$app" "${args[@]}" --output out.xyz \
    --checkpoint-every 50 $2 > "run$1.log" 2>&1 &
  local job=$! wait_ms=$(( RANDOM % ($3 + 1) ))
  for _ in $(seq 300); do  # at most 30 s
    [ -n "$(find . -maxdepth 1 -name 'out.xyz.part.ckpt.[0-9]*' -newer started)" ] && break
    kill -0 "$job" 2> /dev/null || break
    sleep 0.1
  done
  sleep "$(printf '%d.%03d' $((wait_ms / 1000)) $((wait_ms % 1000)))"
  local rank
  rank=$(my_ranks | shuf -n 1)
  if [ -n "$rank" ] && kill -9 "$rank" 2> /dev/null; then
    echo "killed rank pid $rank of the run on $1 ranks ${wait_ms} ms after its first checkpoint"
  else
    echo "the run on $1 ranks ended before its kill"
  fi
  wait "$job"
  return 0
}

run_and_kill 2 "" $(( took / 2 ))
[ -e out.xyz ] && fail "the killed run completed: kill it earlier"
ls out.xyz.part.ckpt* > /dev/null 2>&1 || fail "no checkpoint files after the kill: $(ls)"
run_and_kill 3 --resume $(( took / 5 ))
grep -q "running systems go on from their checkpoints" run3.log \
  || fail "the first resume did not go on from checkpoints: $(cat run3.log)"
if [ -e out.xyz ]; then
  echo "the resumed run on 3 ranks completed before its kill"
else
  "$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" "${args[@]}" --output out.xyz --checkpoint-every 50 \
    --resume > last.log 2>&1 || fail "the last --resume failed: $(cat last.log)"
  grep -H "go on from\|finished by an earlier run" last.log
fi
grep -H "go on from\|finished by an earlier run" run3.log
ls out.xyz.part* > /dev/null 2>&1 && fail "files left after the complete run: $(ls)"
frames ref.xyz > ref.frames
frames out.xyz > out.frames
[ "$(wc -l < out.frames)" -eq 12 ] || fail "out.xyz has $(wc -l < out.frames) frames, not 12"
cmp -s ref.frames out.frames \
  || fail "resumed results differ from the uninterrupted run's: $(diff ref.frames out.frames | cut -c1-200 | head -4)"
echo "ok: killed twice and resumed, every frame byte for byte as the uninterrupted run's"

# Checkpoints are never dropped unasked: without --resume they are refused as FILE.part is, and a
# damaged one is refused by --resume; both before any work (exit 2), the file left as it was.
echo "not a checkpoint" > other.xyz.part.ckpt.0
"$mpiexec" "$np_flag" 1 "${extra[@]}" "$app" "${args[@]}" --output other.xyz > fresh.log 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "'other.xyz.part.ckpt.0' holds checkpoints of an unfinished run: give --resume" fresh.log \
  || fail "a run without --resume beside checkpoints: exit $code, $(cat fresh.log)"
"$mpiexec" "$np_flag" 1 "${extra[@]}" "$app" "${args[@]}" --output other.xyz --resume > damaged.log 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "the checkpoint file 'other.xyz.part.ckpt.0' is not a Baton checkpoint file" damaged.log \
  || fail "--resume with a damaged checkpoint: exit $code, $(cat damaged.log)"
[ "$(cat other.xyz.part.ckpt.0)" = "not a checkpoint" ] || fail "the damaged checkpoint was changed"
echo "ok: checkpoints beside a fresh run and a damaged one are refused, exit 2"
