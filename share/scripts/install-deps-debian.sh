#!/bin/bash
# Installs what Baton needs on Debian 12 / Ubuntu 22.04+ (uses sudo when not root).
#   share/scripts/install-deps-debian.sh            build + test dependencies (Open MPI and MPICH)
#   share/scripts/install-deps-debian.sh --ci       also Slurm, clang (sanitizers, libFuzzer) and
#                                                   llvm-symbolizer, valgrind, ccache, and the
#                                                   references tests compare with: LAMMPS (lmp,
#                                                   potential files) and ASE (extended XYZ), and
#                                                   libtorch with Python's torch (TorchScript
#                                                   models: Baton::torch and its tests)
set -euo pipefail
packages=(cmake g++ make pkg-config python3
          openmpi-bin libopenmpi-dev mpich libmpich-dev
          libtrilinos-kokkos-dev libboost-program-options-dev doctest-dev)
if [ "${1:-}" = "--ci" ]; then
  packages+=(slurmctld slurmd slurm-client munge clang-14 libclang-rt-14-dev llvm-14 valgrind ccache
             lammps lammps-data python3-ase libtorch-dev python3-torch)
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
echo "Baton dependencies installed: ${packages[*]}"
