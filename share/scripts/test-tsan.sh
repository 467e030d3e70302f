#!/usr/bin/env bash
# test-tsan.sh: ThreadSanitizer on the threaded build. Builds Kokkos (OpenMP + Serial) and Baton with
# clang 14, -fsanitize=thread and LLVM's OpenMP runtime, then runs the team-kernel tests under TSan
# with Archer (libarcher, which tells TSan about OpenMP's own barriers).
#
#   share/scripts/test-tsan.sh KOKKOS_SOURCE [--work DIR] [--tests REGEX]
#
# KOKKOS_SOURCE: a Kokkos 4.6 source tree or its .tar.gz. Run from Baton's source root; needs
# clang++-14, libomp-14-dev and MPICH (mpicxx.mpich). Default work directory: build-tsan.
# Exit status 0 when every test passed with no TSan report (a report makes the test exit with 66).
#
# Kokkos' team barrier (impl/Kokkos_HostBarrier.hpp) orders memory with relaxed atomic counters and
# Kokkos::memory_fence(). TSan does not model standalone fences (compiler-rt's AtomicFence is "not
# implemented"), so without help it reports every value a team passes across team_barrier(): 219
# reports in test_neighbours alone, all of that kind. This script makes the barrier's five counter
# operations seq_cst in the copy of Kokkos it builds: the same algorithm and the same ordering the
# fences give, now visible to TSan. Nothing else in Kokkos or Baton changes.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
kokkos_source=$1; shift
work=build-tsan tests='^(test_neighbours|test_pipeline|test_dynamics|test_integrator)\.np'
while [ $# -gt 0 ]; do
  case $1 in
    --work) work=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    *) echo "test-tsan.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -d lib/baton ] || { echo "test-tsan.sh: run it from Baton's source root" >&2; exit 2; }
src_root=$(pwd)
mkdir -p "$work/logs"; work=$(cd "$work" && pwd)
export CXX=clang++-14 CC=clang-14
jobs=$(nproc)
tsan="-fsanitize=thread -fno-omit-frame-pointer"

echo "== Kokkos (TSan, OpenMP) in $work/kokkos"
if [ -f "$kokkos_source" ]; then
  rm -rf "$work/kokkos-src" && mkdir -p "$work/kokkos-src"
  tar -xzf "$kokkos_source" -C "$work/kokkos-src" --strip-components=1
else
  rm -rf "$work/kokkos-src" && cp -r "$kokkos_source" "$work/kokkos-src"
fi
barrier=$work/kokkos-src/core/src/impl/Kokkos_HostBarrier.hpp
sed -i -E 's/Kokkos::atomic_fetch_(add|sub)\(([^;]*)\)( == [^;]*)?;/desul::atomic_fetch_\1(\2, desul::MemoryOrderSeqCst(), desul::MemoryScopeDevice())\3;/' "$barrier"
[ "$(grep -c 'MemoryOrderSeqCst' "$barrier")" = 5 ] ||
  { echo "test-tsan.sh: $barrier is not Kokkos 4.6's (expected 5 counter operations)" >&2; exit 1; }
cmake -S "$work/kokkos-src" -B "$work/kokkos-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$work/kokkos" -DBUILD_SHARED_LIBS=ON \
  -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DCMAKE_CXX_FLAGS="$tsan" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  > "$work/logs/kokkos-configure.log"
nice cmake --build "$work/kokkos-build" -j"$jobs" > "$work/logs/kokkos-build.log"
cmake --install "$work/kokkos-build" > /dev/null

echo "== Baton (BATON_SANITIZE=thread) in $work/build"
cmake -S "$src_root" -B "$work/build" -DKokkos_ROOT="$work/kokkos" -DMPI_CXX_COMPILER=mpicxx.mpich \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATON_SANITIZE=thread -DBATON_DEVICE_ALGORITHMS_ON_HOST=ON \
  -DBATON_ENABLE_APPS=OFF -DBATON_CHECK_HEADERS=OFF > "$work/logs/baton-configure.log"
nice cmake --build "$work/build" -j"$jobs" \
  --target test_neighbours test_pipeline test_dynamics test_integrator > "$work/logs/baton-build.log"

echo "== tests matching $tests, one at a time"
# ignore_noninstrumented_modules: LLVM's OpenMP runtime and MPICH are not instrumented (Archer asks
# for it; without it TSan reports libomp's own pthread_mutex_init against its pthread_mutex_lock).
export OMP_TOOL_LIBRARIES=/usr/lib/llvm-14/lib/libarcher.so
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 report_signal_unsafe=0 ignore_noninstrumented_modules=1 suppressions=$src_root/share/sanitizers/tsan.supp"
rc=0
nice ctest --test-dir "$work/build" -R "$tests" --output-on-failure --timeout 900 \
  > "$work/logs/ctest.log" 2>&1 || rc=$?
grep -E 'tests passed|tests failed|Total Test time' "$work/logs/ctest.log" || true
echo "TSan reports: $(grep -c 'WARNING: ThreadSanitizer' "$work/logs/ctest.log" || true) (log: $work/logs/ctest.log)"
exit $rc
