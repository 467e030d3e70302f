#!/bin/bash
# Runs Spack itself on Baton's recipe (package API v1: the offline Spack is 0.23; Spack 1.x and the v2
# recipe are checked by check_recipe.py only). `spack spec` of the CPU default must concretize, and
# +cuda gpu_aware_mpi=ON with a non-CUDA Open MPI must be rejected by the recipe's conflict (stand-in
# GPU externals: nothing is built). About a minute once clingo is built.
#
# Opt-in, so that CI stays fast: it runs only when BATON_SPACK_SCRATCH names a Spack set up by
# <source>/../shared/spack/setup-spack.sh (e.g. BATON_SPACK_SCRATCH=/tmp/spack) and that folder exists;
# otherwise it exits 77, which ctest reports as skipped. BATON_SPACK_SPECS=all runs every case of
# docs/building.md's list (about 5 minutes).
#
# The Baton repository Spack uses is <source>/spack, whatever repos the scratch configuration lists.
# usage: run_spack.sh <baton source dir> <work dir>
set -uo pipefail
src=$(cd "$1" && pwd)
work=$2
skip() { echo "spack_spec skipped: $*"; exit 77; }

shared=$(cd "$src/.." && pwd)/shared/spack
[ -f "$shared/setup-spack.sh" ] || skip "no $shared (the offline Spack)"
scratch=${BATON_SPACK_SCRATCH:-}
[ -n "$scratch" ] || skip "BATON_SPACK_SCRATCH is not set (e.g. /tmp/spack after $shared/setup-spack.sh /tmp/spack)"
[ -f "$scratch/env.sh" ] || skip "no $scratch/env.sh: run $shared/setup-spack.sh $scratch first"
# shellcheck disable=SC1091
. "$scratch/env.sh" || skip "$scratch/env.sh failed"
command -v spack > /dev/null || skip "$scratch/env.sh gave no spack command"
"${SPACK_PYTHON:-python3}" -c "import clingo" 2> /dev/null || skip "clingo is not built in $scratch"

rm -rf "$work" && mkdir -p "$work/config" "$work/fake/cuda" "$work/fake/kokkos-cuda" \
  "$work/fake/kokkos-cuda-lambda" "$work/fake/kokkos-rocm" "$work/fake/rocm"
cat > "$work/config/repos.yaml" << EOF
repos::
- $src/spack
- $shared/offline-repo
- \$spack/var/spack/repos/builtin
EOF
# GPU stand-ins with empty prefixes: enough to concretize, never to build.
cat > "$work/config/packages.yaml" << EOF
packages:
  cuda:
    externals:
    - {spec: cuda@12.4.0, prefix: $work/fake/cuda}
    buildable: false
  kokkos:
    externals:
    - {spec: kokkos@4.3.01+cuda+wrapper~cuda_lambda+serial+shared cuda_arch=90 cxxstd=17, prefix: $work/fake/kokkos-cuda}
    - {spec: kokkos@4.3.01+cuda+wrapper+cuda_lambda+serial+shared cuda_arch=90 cxxstd=17, prefix: $work/fake/kokkos-cuda-lambda}
    - {spec: kokkos@4.3.01+rocm+serial+shared amdgpu_target=gfx90a cxxstd=17, prefix: $work/fake/kokkos-rocm}
  hip:
    externals: [{spec: hip@6.0.2, prefix: $work/fake/rocm}]
    buildable: false
  llvm-amdgpu:
    externals: [{spec: llvm-amdgpu@6.0.2, prefix: $work/fake/rocm}]
    buildable: false
  hsa-rocr-dev:
    externals: [{spec: hsa-rocr-dev@6.0.2, prefix: $work/fake/rocm}]
    buildable: false
EOF
cd "$work" || exit 1
echo "$(spack --version), recipe $(spack -C "$work/config" location --package-dir baton)/package.py"

failed=0
# case NAME ok|rejected PATTERN SPEC...: `spack spec SPEC` succeeds (output matches PATTERN) or is
# rejected (its error matches PATTERN).
case_() {
  local name=$1 expect=$2 pattern=$3 t0 rc got
  shift 3
  t0=$(date +%s)
  spack -C "$work/config" spec -l "$@" > "$work/$name.log" 2>&1
  rc=$?
  got=rejected
  [ $rc -eq 0 ] && got=ok
  if [ "$got" = "$expect" ] && grep -qE -- "$pattern" "$work/$name.log"; then
    echo "pass  $name ($(($(date +%s) - t0)) s): spack spec $* -> $got"
  else
    failed=1
    echo "FAIL  $name: spack spec $* -> $got (expected $expect matching '$pattern'); $work/$name.log:"
    sed 's/^/      /' "$work/$name.log" | cut -c1-200 | head -30
  fi
}

case_ cpu ok 'baton@main.*~cuda.*gpu_aware_mpi=AUTO' baton ^openmpi
case_ cuda_on_openmpi rejected 'gpu_aware_mpi=ON needs a CUDA-aware MPI' \
  baton+cuda cuda_arch=90 gpu_aware_mpi=ON ^openmpi~cuda
if [ "${BATON_SPACK_SPECS:-}" = all ]; then
  case_ cuda_auto ok '\^kokkos@4.3.01.*\+cuda_lambda' baton+cuda cuda_arch=90 ^openmpi~cuda
  case_ cuda_on_mpich rejected 'gpu_aware_mpi=ON needs a CUDA-aware MPI' \
    baton+cuda cuda_arch=90 gpu_aware_mpi=ON ^mpich~cuda
  case_ cuda_no_arch rejected '\+cuda needs cuda_arch' baton+cuda ^openmpi
  case_ cuda_no_lambda rejected 'KOKKOS_LAMBDA' baton+cuda cuda_arch=90 ^openmpi ^kokkos~cuda_lambda
  case_ rocm_no_target rejected '\+rocm needs amdgpu_target' baton+rocm ^mpich
  case_ rocm_on_mpich rejected 'gpu_aware_mpi=ON needs MPICH built with ROCm' \
    baton+rocm amdgpu_target=gfx90a gpu_aware_mpi=ON ^mpich~rocm
  case_ cuda_and_rocm rejected 'one GPU backend at a time' \
    baton+cuda+rocm cuda_arch=90 amdgpu_target=gfx90a ^mpich
fi
exit $failed
