#!/bin/bash
# Runs the transport tests (bytes, Views, collectives, bundles, objects: the ones that move data
# between ranks) at 2 ranks under valgrind memcheck: no invalid access, no uninitialised use, no
# definite leak apart from the commented MPI suppressions in share/sanitizers/valgrind.supp. The
# AddressSanitizer run covers the rest.
#   tests/memcheck/run-valgrind.sh <build-dir> <mpiexec> [test ...]   (tests named: those instead)
set -uo pipefail
build=${1:?build dir}
mpiexec=${2:?mpiexec}
shift 2
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test_bytes test_views test_collectives test_bundles test_objects)
root=$(cd "$(dirname "$0")/../.." && pwd)
flags=()
"$mpiexec" --version 2>&1 | grep -q "Open MPI" && flags=(--oversubscribe)
failures=0
for t in "${tests[@]}"; do
  log=$(mktemp)
  BATON_EXPECT_RANKS=2 "$mpiexec" -n 2 "${flags[@]}" valgrind -q --error-exitcode=42 \
    --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    --suppressions="$root/share/sanitizers/valgrind.supp" "$build/tests/$t" >"$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: valgrind $t (exit $rc)"; grep -v '^\[doctest\]' "$log" | tail -n 60
    failures=$((failures + 1))
  else
    echo "ok:   valgrind $t: $(grep -c '^==[0-9]*== ' "$log") memcheck lines, $(grep 'baton test:' "$log")"
  fi
  rm -f "$log"
done
echo "valgrind: $failures failed"
[ $failures -eq 0 ]
