# Sourced by the check_pipeline_*.sh scripts, run as `script APP MPIEXEC NP_FLAG OPENMPI WORK`: sets
# app, mpiexec and np_flag, makes WORK a fresh folder and the working directory, `extra` holds
# --oversubscribe under Open MPI, and fail() ends the script with exit 1 (the script exits 0 only
# after its last check).
set -u
app=$1 mpiexec=$2 np_flag=$3 openmpi=$4 work=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
extra=()
[ "$openmpi" = "TRUE" ] || [ "$openmpi" = "ON" ] || [ "$openmpi" = "1" ] && extra=(--oversubscribe)
fail() { echo "FAIL: $*"; exit 1; }
# The ranks of the job started in this folder (other tests may run baton-pipeline at the same time).
my_ranks() {
  for pid in $(pgrep -x baton-pipeline); do
    [ "$(readlink "/proc/$pid/cwd")" = "$PWD" ] && echo "$pid"
  done
}
# A check that fails while a job runs must not leave it running (it would slow every later test):
# on exit, the launchers started here and the ranks working in this folder are ended.
end_jobs() {
  local pids
  pids=$(jobs -p)
  [ -z "$pids" ] || kill $pids 2> /dev/null
  for pid in $(my_ranks); do kill -9 "$pid" 2> /dev/null; done
  return 0
}
trap end_jobs EXIT
