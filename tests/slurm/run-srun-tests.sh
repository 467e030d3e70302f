#!/bin/bash
# Runs baton-info with srun at 4 ranks, checking the rank count it reports (an MPI under the wrong
# PMI plugin runs N one-rank jobs and still exits 0), then submits the job scripts of share/slurm.
#   tests/slurm/run-srun-tests.sh <build-dir> <pmix|pmi2> [test ...]
# Each test named (an MPI test of <build-dir>/tests, e.g. test_communicator test_bytes) runs at 4
# ranks too and must report "all 4 ranks passed". Without baton-info (a build without the apps),
# test_communicator runs in its place. Starts a local single-node Slurm and always stops it again.
# Exits 0 with a clear message when Slurm cannot start here.
set -uo pipefail
build=${1:?build dir}
plugin=${2:?mpi plugin (pmix for Open MPI, pmi2 for MPICH)}
shift 2
tests=("$@")
[ -x "$build/apps/baton-info" ] || [ ${#tests[@]} -gt 0 ] || tests=(test_communicator)
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

# The launch itself is what is checked here (PMI plugin, rank count); the MPI tests run under
# mpiexec in ctest.
[ -x "$build/apps/baton-info" ] && check 4 "on 4 ranks" "$build/apps/baton-info"
for t in "${tests[@]}"; do
  check 4 "all 4 ranks passed" "$build/tests/$t"
done

# The job script templates of share/slurm, submitted as they are, with their rank count checked.
here_root=$(cd "$here/../.." && pwd)
# sbatch_wait <sbatch options and script>: like sbatch --wait (0 when the job completed with exit
# code 0), but asks for the job's state every 0.2 s, where sbatch --wait sleeps 2, then 4, ... s
# (about 9 s for a job of 2 s here).
sbatch_wait() {
  local id state=""
  id=$(sbatch --parsable "$@") || return 1
  id=${id%%;*}
  [ -n "$id" ] || { echo "sbatch printed no job id"; return 1; }
  for _ in $(seq 1200); do  # 240 s at most
    state=$(scontrol -o show job "$id" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in
      COMPLETED) return 0 ;;
      PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | RESIZING | "") ;;
      *) echo "job $id: $state"; return 1 ;;
    esac
    sleep 0.2
  done
  echo "job $id: still ${state:-unknown} after 240 s"; scancel "$id"; return 1
}
submit() {  # $1 = template, $2 = regex its output must match
  local out; out=$(mktemp)
  if sbatch_wait --output="$out" \
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
  if sbatch_wait --chdir="$work" --output="$work/out" \
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
