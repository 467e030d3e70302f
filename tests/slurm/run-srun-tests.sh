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
  for t in test_communicator test_errors test_runtime test_bytes test_views test_collectives; do
    check "$n" "all $n ranks passed" "$build/tests/$t"
  done
done

# The job script templates of share/slurm, submitted as they are (sbatch --wait), with their rank count checked.
here_root=$(cd "$here/../.." && pwd)
submit() {  # $1 = template, $2 = regex its output must match
  local out; out=$(mktemp)
  if sbatch --wait --quiet --output="$out" \
       --export=ALL,BATON_BIN_DIR="$(cd "$build/apps" && pwd)",BATON_SRUN_MPI="$plugin",BATON_BENCH_ARGS="--max-bytes 4096 --repeats 3" \
       "$here_root/share/slurm/$1" && grep -Eq "$2" "$out"; then
    echo "ok:   sbatch share/slurm/$1"
  else
    echo "FAIL: sbatch share/slurm/$1"; tail -n 30 "$out"
    failures=$((failures + 1))
  fi
  rm -f "$out"
}
if [ -x "$build/apps/baton-info" ]; then
  submit baton-info.sbatch "on 4 ranks"
fi
if [ -x "$build/apps/baton-bench" ]; then
  work=$(mktemp -d)
  if sbatch --wait --quiet --chdir="$work" --output="$work/out" \
       --export=ALL,BATON_BIN_DIR="$(cd "$build/apps" && pwd)",BATON_SRUN_MPI="$plugin",BATON_BENCH=p2p,BATON_BENCH_ARGS="--max-bytes 4096 --repeats 3" \
       "$here_root/share/slurm/baton-bench.sbatch" && grep -q '"ranks": 2' "$work"/baton-bench-*.jsonl; then
    echo "ok:   sbatch share/slurm/baton-bench.sbatch ($(wc -l < "$work"/baton-bench-*.jsonl) JSON lines)"
  else
    echo "FAIL: sbatch share/slurm/baton-bench.sbatch"; tail -n 30 "$work"/out "$work"/baton-bench-*.jsonl 2>/dev/null
    failures=$((failures + 1))
  fi
  rm -rf "$work"
fi
echo "srun tests ($plugin): $failures failed"
[ $failures -eq 0 ]
