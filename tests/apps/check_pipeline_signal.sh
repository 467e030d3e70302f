#!/bin/bash
# baton-pipeline stopped by a signal mid-run, as Slurm's time limit or scancel (SIGTERM to every
# task) and Ctrl-C (SIGINT to mpiexec) stop it: exit code 5 when the ranks are signalled, one line
# on stderr saying so and how many complete results FILE.part holds (exactly the frames it holds,
# none cut), and --resume then finishes the campaign, every system exactly once.
#   check_pipeline_signal.sh APP MPIEXEC NP_FLAG OPENMPI WORK
source "$(dirname "$0")/pipeline_script.sh"
# NVE steps keep results coming for about 10 s: Open MPI's mpiexec passes a SIGINT on only after
# a second or two, and a run that finished before the signal came would test nothing.
args=(--systems 5000 --sizes 13 --stages nve --nve-steps 8000 --progress off --output out.xyz)
# Open MPI's mpiexec passes Ctrl-C on as SIGTERM and sends SIGKILL 1 s later by default: on a busy
# machine that can come before the ranks have written FILE.part out and said so (seen in CI, the
# stop line missing). 10 s, as a site's Slurm KillWait gives. MPICH ignores the variable.
export OMPI_MCA_odls_base_sigkill_timeout=10

# run_and_stop SIGNAL TARGET: starts the job, waits for results on disk, signals the ranks
# (TARGET=ranks) or mpiexec (TARGET=mpiexec), and sets rc to the job's exit code.
run_and_stop() {
  "$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" "${args[@]}" "${@:3}" > run.log 2> err.log &
  local job=$! before=0
  [ -e out.xyz.part ] && before=$(grep -c system_id out.xyz.part)
  for _ in $(seq 300); do  # until this run put results on disk (at most 30 s)
    grep -q "systems through" run.log && [ "$(grep -c system_id out.xyz.part)" -gt $((before + 100)) ] && break
    sleep 0.1
  done
  [ "$(grep -c system_id out.xyz.part)" -gt $((before + 100)) ] \
    || fail "no new results on disk after 30 s: $(cat run.log err.log)"
  if [ "$2" = ranks ]; then
    kill -"$1" $(my_ranks) || fail "no rank to signal"
  else
    kill -"$1" "$job"
  fi
  local start=$(date +%s)
  while kill -0 "$job" 2> /dev/null; do
    [ $(( $(date +%s) - start )) -lt 30 ] || { kill -9 "$job"; fail "the job did not end within 30 s of $1"; }
    sleep 0.1
  done
  wait "$job"
  rc=$?
}

# check_stopped SIGNALS: one line naming the signal (a regex: mpiexec may pass on another one) and
# the complete results, which FILE.part holds.
check_stopped() {
  local lines
  lines=$(grep -Ec "baton-pipeline: stopped by $1: 'out.xyz.part' holds [0-9]* complete results; --resume goes on from them" err.log)
  [ "$lines" -eq 1 ] || fail "$1: expected the line once, got $lines: $(cat err.log)"
  local said held
  said=$(grep -o "holds [0-9]* complete" err.log | grep -o "[0-9]*")
  held=$(grep -c system_id out.xyz.part)
  [ "$said" -eq "$held" ] || fail "$1: the line says $said results, out.xyz.part holds $held"
  [ "$(tail -c 1 out.xyz.part | od -An -c | tr -d ' ')" = '\n' ] || fail "$1: out.xyz.part ends in a cut frame"
  [ -e out.xyz ] && fail "$1: out.xyz exists although the run did not complete"
  echo "ok: $1 -> exit $rc, $held complete results in out.xyz.part"
}

run_and_stop TERM ranks
# MPICH's mpiexec (hydra) gives a rank that ends without MPI_Finalize a provisional exit code of 1
# and, when it handles the closed PMI connection before it reaps the process, reports that 1 in
# place of the rank's own 5 (about one run in 25 here, always with its "BAD TERMINATION ... EXIT
# CODE: 1" block on stdout). Only that case is let through, and only under MPICH.
if [ "$rc" -eq 1 ] && [ -z "${extra[*]}" ] && grep -q "EXIT CODE: 1" run.log; then
  echo "(MPICH's mpiexec reported its provisional exit code 1 in place of the ranks' 5)"
else
  [ "$rc" -eq 5 ] || fail "SIGTERM to the ranks: exit $rc, expected 5: $(cat err.log run.log)"
fi
check_stopped SIGTERM

# Ctrl-C reaches mpiexec, which passes it on (Open MPI's as SIGTERM) and gives an exit code of its
# own: MPICH's has returned 0 after passing the signal on (seen once in CI), so the stop is checked
# by the ranks' line and the files, not by mpiexec's code.
run_and_stop INT mpiexec --resume
check_stopped "SIG(INT|TERM)"
echo "(mpiexec's exit code after SIGINT: $rc)"

"$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" "${args[@]}" --resume > resume.log 2>&1 \
  || fail "--resume failed: $(cat resume.log)"
total=$(grep -c system_id out.xyz)
unique=$(grep -o 'system_id=[0-9]*' out.xyz | sort -u | wc -l)
[ "$total" -eq 5000 ] && [ "$unique" -eq 5000 ] || fail "$total frames, $unique ids, expected 5000 each"
echo "ok: --resume finished the campaign, 5000 systems exactly once"
