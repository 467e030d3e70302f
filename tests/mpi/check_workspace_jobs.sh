#!/bin/bash
# Two jobs started at once on this node, into the same root, with no job id given (no Slurm):
# each draws its own id, and each reads back only its own records.
#   check_workspace_jobs.sh WRITER MPIEXEC NP_FLAG OPENMPI WORK
set -u  # every check exits 1 through fail(); the script exits 0 only at its end
writer=$1 mpiexec=$2 np_flag=$3 openmpi=$4 work=$5
rm -rf "$work" && mkdir -p "$work/root" "$work/meeting" && cd "$work" || exit 1
extra=()
[ "$openmpi" = "TRUE" ] || [ "$openmpi" = "ON" ] || [ "$openmpi" = "1" ] && extra=(--oversubscribe)
fail() { echo "FAIL: $*"; exit 1; }
unset SLURM_JOB_ID SLURM_STEP_ID BATON_WORKSPACE_JOB_ID

# Each job waits for the other (a file rendezvous) before making its workspace, and again after
# publishing: both directories exist and hold records while each reads.
"$mpiexec" "$np_flag" 2 "${extra[@]}" "$writer" jobs root meeting > a.log 2>&1 &
a=$!
"$mpiexec" "$np_flag" 2 "${extra[@]}" "$writer" jobs root meeting > b.log 2>&1 &
b=$!
wait $a || fail "job a failed: $(cat a.log)"
wait $b || fail "job b failed: $(cat b.log)"
cat a.log b.log
dir_a=$(sed -n 's/^job .* dir \(.*\): 2 records, all its own$/\1/p' a.log)
dir_b=$(sed -n 's/^job .* dir \(.*\): 2 records, all its own$/\1/p' b.log)
[ -n "$dir_a" ] && [ -n "$dir_b" ] || fail "a job did not report its own records"
[ "$dir_a" != "$dir_b" ] || fail "both jobs used $dir_a"
[ "$(ls root | wc -l)" -eq 2 ] || fail "expected two job directories: $(ls root)"
for d in "$dir_a" "$dir_b"; do
  [ "$(ls "$d")" = "$(printf 'rank-0.btnr\nrank-1.btnr')" ] || fail "$d holds: $(ls "$d")"
done
echo "ok: two jobs at once, two directories ($dir_a, $dir_b), each read only its own records"
