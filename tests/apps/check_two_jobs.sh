#!/bin/bash
# Two MPI jobs of the same program started at once on this node (2 ranks each): both must pass, so
# nothing one job creates (shared memory, names, files) is seen or disturbed by the other.
#   check_two_jobs.sh MPIEXEC NP_FLAG OPENMPI WORK PROGRAM [ARGS...]
set -u  # every check exits 1 through fail(); the script exits 0 only at its end
mpiexec=$1 np_flag=$2 openmpi=$3 work=$4
shift 4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
extra=()
[ "$openmpi" = "TRUE" ] || [ "$openmpi" = "ON" ] || [ "$openmpi" = "1" ] && extra=(--oversubscribe)
fail() { echo "FAIL: $*"; exit 1; }

"$mpiexec" "$np_flag" 2 "${extra[@]}" "$@" > first.log 2>&1 &
first=$!
"$mpiexec" "$np_flag" 2 "${extra[@]}" "$@" > second.log 2>&1 &
second=$!
wait "$first"; first_rc=$?
wait "$second"; second_rc=$?
[ "$first_rc" -eq 0 ] || fail "the first job exited $first_rc: $(tail -n 30 first.log)"
[ "$second_rc" -eq 0 ] || fail "the second job exited $second_rc: $(tail -n 30 second.log)"
grep -q "all 2 ranks passed" first.log || fail "the first job did not report success: $(tail first.log)"
grep -q "all 2 ranks passed" second.log || fail "the second job did not report success: $(tail second.log)"
echo "two jobs at once: both passed"
