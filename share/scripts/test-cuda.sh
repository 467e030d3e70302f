#!/usr/bin/env bash
# test-cuda.sh: build Kokkos with CUDA and Baton against it, then run Baton's tests on the GPU.
#
#   share/scripts/test-cuda.sh KOKKOS_SOURCE [options]
#
# KOKKOS_SOURCE is a Kokkos source tree or its .tar.gz (4.x; tested with 4.6.01), or the prefix of a Kokkos
# already installed with CUDA (then it is used as it is). Run from Baton's source root on a machine with
# nvcc, an MPI and, for the test step, an NVIDIA GPU. Options:
#   --arch NAME      Kokkos architecture (HOPPER90, AMPERE80, ...); default: read from nvidia-smi
#   --work DIR       where Kokkos and Baton are built (default: build-cuda)
#   --mpi-cxx PATH   MPI compiler wrapper that CMake's FindMPI should use (e.g. mpicxx.mpich)
#   --targets "T.."  build only these Baton targets (default: everything)
#   --cmake-arg ARG  one more argument for Baton's configure (repeatable), e.g. -DBUILD_SHARED_LIBS=ON
#   --tests REGEX    run only the ctest tests matching REGEX (default: all that were built)
#   --skip-labels RE leave out the tests whose ctest labels match RE (e.g. "lammps|reference": tools
#                    the GPU machine may lack)
#   --jobs N         tests run at once (default: the cores, at most 8)
#   --test-timeout S a test's time limit in seconds (default: 600)
#   --build-only     stop after building (e.g. on a login node without a GPU; needs --arch)
#   --test-only      only run the tests of an earlier --build-only
# The tests run with the staged path (BATON_GPU_AWARE=0: device Views go through host buffers); when
# baton-info finds the MPI CUDA-aware, they run a second time with BATON_GPU_AWARE=1. Logs and a
# summary are written to WORK/logs. Exit status: 0 when every run passed.
set -euo pipefail

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
kokkos_source=$1; shift
arch="" work=build-cuda mpi_cxx="" targets="" tests="" skip_labels="" test_jobs="" test_timeout=600
steps=all cmake_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --mpi-cxx) mpi_cxx=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --cmake-arg) cmake_args+=("$2"); shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    --skip-labels) skip_labels=$2; shift 2 ;;
    --jobs) test_jobs=$2; shift 2 ;;
    --test-timeout) test_timeout=$2; shift 2 ;;
    --build-only) steps=build; shift ;;
    --test-only) steps="test"; shift ;;
    *) echo "test-cuda.sh: unknown option '$1'" >&2; usage ;;
  esac
done
if [ ! -f CMakeLists.txt ] || [ ! -d lib/baton ]; then
  echo "test-cuda.sh: run it from Baton's source root" >&2
  exit 2
fi
mkdir -p "$work/logs"
work=$(cd "$work" && pwd)
jobs=$(nproc)

# Compute capability (e.g. 9.0) to Kokkos' architecture name.
kokkos_arch() {
  case $1 in
    7.0) echo VOLTA70 ;; 7.2) echo VOLTA72 ;; 7.5) echo TURING75 ;; 8.0) echo AMPERE80 ;;
    8.6) echo AMPERE86 ;; 8.7) echo AMPERE87 ;; 8.9) echo ADA89 ;; 9.0) echo HOPPER90 ;;
    10.0) echo BLACKWELL100 ;; 12.0) echo BLACKWELL120 ;;
    *) echo "test-cuda.sh: no Kokkos architecture known for compute capability $1; pass --arch" >&2
       exit 2 ;;
  esac
}
sm_of() {  # HOPPER90 -> sm_90
  echo "sm_${1//[!0-9]/}"
}

build() {
  if [ -z "$arch" ]; then
    command -v nvidia-smi > /dev/null || { echo "test-cuda.sh: no nvidia-smi; pass --arch" >&2; exit 2; }
    arch=$(kokkos_arch "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' ')")
  fi
  local sm; sm=$(sm_of "$arch")
  # nvcc_wrapper's own default architecture (sm_70) is one that nvcc 13 rejects, and it is what
  # CMake's compiler checks get: name ours in every configure.
  local kokkos=$work/kokkos
  if compgen -G "$kokkos_source/lib*/cmake/Kokkos/KokkosConfig.cmake" > /dev/null; then
    kokkos=$(cd "$kokkos_source" && pwd)
    echo "== Kokkos installed in $kokkos"
  else
    build_kokkos "$sm"
  fi

  echo "== Baton in $work/baton"
  local mpi_args=()
  [ -z "$mpi_cxx" ] || mpi_args=("-DMPI_CXX_COMPILER=$mpi_cxx")
  cmake -S . -B "$work/baton" -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos" \
    -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DBATON_GPU_AWARE_MPI=AUTO \
    -DCMAKE_CXX_FLAGS="-arch=$sm" -DBATON_CHECK_HEADERS=OFF "${mpi_args[@]}" "${cmake_args[@]}" > "$work/logs/baton-configure.log"
  if [ -n "$targets" ]; then
    # shellcheck disable=SC2086 # a list of target names
    cmake --build "$work/baton" -j"$jobs" --target $targets > "$work/logs/baton-build.log"
  else
    cmake --build "$work/baton" -j"$jobs" > "$work/logs/baton-build.log"
  fi
  echo "built: Kokkos $arch, Baton in $work/baton"
}

build_kokkos() {
  echo "== Kokkos with CUDA for $arch ($1) in $work/kokkos"
  local src=$kokkos_source
  if [ -f "$kokkos_source" ]; then
    rm -rf "$work/kokkos-src" && mkdir -p "$work/kokkos-src"
    tar -xzf "$kokkos_source" -C "$work/kokkos-src" --strip-components=1
    src=$work/kokkos-src
  fi
  src=$(cd "$src" && pwd)
  patch_kokkos_for_cuda13 "$src"
  cmake -S "$src" -B "$work/kokkos-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_INSTALL_PREFIX="$work/kokkos" -DBUILD_SHARED_LIBS=ON -DKokkos_ENABLE_SERIAL=ON \
    -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON "-DKokkos_ARCH_$arch=ON" \
    -DCMAKE_CXX_COMPILER="$src/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=$1" \
    > "$work/logs/kokkos-configure.log"
  cmake --build "$work/kokkos-build" -j"$jobs" > "$work/logs/kokkos-build.log"
  cmake --install "$work/kokkos-build" > /dev/null
}

# CUDA 13 changed three runtime calls that Kokkos 4.6 makes; CUDA 12 and older need nothing.
patch_kokkos_for_cuda13() {
  local file=$1/core/src/Cuda/Kokkos_Cuda_Instance.hpp
  grep -q 'BATON_CUDA13_PATCH' "$file" && return 0
  grep -q 'return cudaGraphAddDependencies(graph, from, to, numDependencies);' "$file" || return 0
  python3 - "$file" << 'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
swaps = [
    ("return cudaGraphAddDependencies(graph, from, to, numDependencies);",
     "return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);"),
    ("return cudaMemAdvise(devPtr, count, advice, device);",
     "cudaMemLocation where{};\n    where.type = cudaMemLocationTypeDevice;\n    where.id = device;\n"
     "    return cudaMemAdvise(devPtr, count, advice, where);"),
    ("return cudaMemPrefetchAsync(devPtr, count, dstDevice,\n                                get_input_stream(stream));",
     "cudaMemLocation where{};\n    where.type = cudaMemLocationTypeDevice;\n    where.id = dstDevice;\n"
     "    return cudaMemPrefetchAsync(devPtr, count, where, 0, get_input_stream(stream));"),
]
for old, new in swaps:
    if old not in text:
        sys.exit("test-cuda.sh: Kokkos_Cuda_Instance.hpp does not look like Kokkos 4.6's: " + old)
    text = text.replace(old, "\n#if CUDART_VERSION >= 13000  // BATON_CUDA13_PATCH\n    " + new +
                        "\n#else\n    " + old + "\n#endif")
open(path, "w").write(text)
EOF
}

run_tests() {
  local mode=$1 aware=$2
  echo "== tests, $mode path (BATON_GPU_AWARE=$aware)"
  # Several tests at a time share the GPU (PROCESSORS keeps ctest within the cores).
  local args=(--test-dir "$work/baton" --output-on-failure --timeout "$test_timeout"
              -j "${test_jobs:-$((jobs < 8 ? jobs : 8))}")
  [ -z "$tests" ] || args+=(-R "$tests")
  [ -z "$skip_labels" ] || args+=(-LE "$skip_labels")
  local rc=0
  BATON_GPU_AWARE=$aware ctest "${args[@]}" > "$work/logs/ctest-$mode.log" 2>&1 || rc=$?
  grep -E 'tests passed|tests failed|Total Test time' "$work/logs/ctest-$mode.log" || true
  grep -E '^\s+[0-9]+ - ' "$work/logs/ctest-$mode.log" || true
  return $rc
}

test_step() {
  [ -d "$work/baton" ] || { echo "test-cuda.sh: nothing built in $work/baton" >&2; exit 2; }
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || true
  local info=$work/baton/apps/baton-info
  if [ -x "$info" ]; then "$info" | tee "$work/logs/baton-info.log" || true; fi
  local rc=0
  run_tests staged 0 || rc=1
  if [ -x "$info" ] && env -u BATON_GPU_AWARE "$info" | grep -q '^GPU-aware: yes'; then
    run_tests aware 1 || rc=1
  else
    echo "== the MPI is not CUDA-aware: the aware path was not run"
  fi
  { date -u +%F; nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true
    grep -h 'tests passed' "$work"/logs/ctest-*.log || true
    echo "result: $([ $rc = 0 ] && echo passed || echo FAILED)"; } > "$work/logs/summary.txt"
  cat "$work/logs/summary.txt"
  return $rc
}

case $steps in
  build) [ -n "$arch" ] || command -v nvidia-smi > /dev/null ||
           { echo "test-cuda.sh: --build-only without a GPU needs --arch" >&2; exit 2; }
         build ;;
  test) test_step ;;
  all) build && test_step ;;
esac
