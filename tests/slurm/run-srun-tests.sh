#!/bin/bash
# Runs Baton's apps and a subset of its MPI tests with srun at 2 and 4 ranks, checking the rank count
# each run reports (an MPI under the wrong PMI plugin runs N one-rank jobs and still exits 0).
#   tests/slurm/run-srun-tests.sh <build-dir> <pmix|pmi2>
# Starts a local single-node Slurm and always stops it again. Exits 0 with a clear message when Slurm
# cannot start here.
set -uo pipefail
build=${1:?build dir}
plugin=${2:?mpi plugin (pmix for Open MPI, pmi2 for MPICH)}
here=$(cd "$(dirname "$0")" && pwd)

if ! env_line=$("$here/local-slurm.sh" start); then
  echo "SKIPPED: srun tests: a local Slurm could not be started here (see the messages above)"
  exit 0
fi
trap '"$here/local-slurm.sh" stop' EXIT
eval "$env_line"

failures=0
check() {  # $1 = ranks, $2 = regex the output must match, rest = command
  local n=$1 pattern=$2; shift 2
  local out
  out=$(BATON_EXPECT_RANKS=$n timeout 120 srun --mpi="$plugin" -n "$n" "$@" 2>&1)
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -Eq "$pattern" <<<"$out"; then
    echo "FAIL: srun --mpi=$plugin -n $n $* (exit $rc)"; echo "$out" | tail -n 30
    failures=$((failures + 1))
  else
    echo "ok:   srun --mpi=$plugin -n $n $*"
  fi
}

for n in 2 4; do
  [ -x "$build/apps/baton-info" ] && check "$n" "on $n ranks" "$build/apps/baton-info"
  for t in test_communicator test_errors test_runtime; do
    check "$n" "all $n ranks passed" "$build/tests/$t"
  done
done
echo "srun tests ($plugin): $failures failed"
[ $failures -eq 0 ]
