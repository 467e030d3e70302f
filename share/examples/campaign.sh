#!/bin/sh
# A materials campaign in three stages: relax each cell to zero pressure (variable-cell FIRE), run
# it at temperature (NVT, CSVR), then at temperature and pressure (NPT). Four strained
# Lennard-Jones fcc cells (C-rescale); and, when Cu_u3.eam is given, two Cu cells with EAM in metal
# units (MTK, each axis on its own, as LAMMPS' fix npt aniso).
#   share/examples/campaign.sh build/apps/baton-pipeline [/usr/share/lammps/potentials/Cu_u3.eam]
# Prints each result's volume per atom and pressure; exits non-zero if a run fails. Running systems
# are checkpointed every 500 steps: a run killed or stopped goes on with the same command and
# --resume, to the same results bit for bit.
set -e
pipeline=$1
eam=$2
run="${MPIEXEC:-mpiexec} ${MPIEXEC_FLAGS:-} -n 3"

# fcc cells of n x n x n unit cells of side a, stretched by sx, sy, sz, jittered (awk's rand, seeded)
cells() {  # species n a "sx sy sz" ... (one strain per cell)
  awk -v species="$1" -v n="$2" -v a="$3" -v strains="$4" 'BEGIN {
    srand(7); split(strains, s, " ");
    split("0 0 0 0.5 0.5 0 0.5 0 0.5 0 0.5 0.5", b, " ");
    for (c = 0; c < length(s) / 3; c++) {
      sx = s[3 * c + 1]; sy = s[3 * c + 2]; sz = s[3 * c + 3];
      printf "%d\nLattice=\"%.6f 0 0 0 %.6f 0 0 0 %.6f\" Properties=species:S:1:pos:R:3 pbc=\"T T T\" system_id=%d\n",
        4 * n * n * n, n * a * sx, n * a * sy, n * a * sz, c;
      for (k = 0; k < n; k++) for (j = 0; j < n; j++) for (i = 0; i < n; i++) for (q = 0; q < 4; q++)
        printf "%s %.6f %.6f %.6f\n", species, (i + b[3 * q + 1]) * a * sx + 0.02 * a * (rand() - 0.5),
          (j + b[3 * q + 2]) * a * sy + 0.02 * a * (rand() - 0.5), (k + b[3 * q + 3]) * a * sz + 0.02 * a * (rand() - 0.5);
    }
  }'
}

# Volume per atom and pressure of every result.
report() {
  awk '/Lattice=/ {
    match($0, /Lattice="[^"]*"/); split(substr($0, RSTART + 9, RLENGTH - 10), h, " ");
    v = h[1] * (h[5] * h[9] - h[6] * h[8]) - h[2] * (h[4] * h[9] - h[6] * h[7]) + h[3] * (h[4] * h[8] - h[5] * h[7]);
    match($0, / pressure=[^ ]*/); p = substr($0, RSTART + 10, RLENGTH - 10);
    match($0, /system_id=[0-9]*/); id = substr($0, RSTART + 10, RLENGTH - 10);
    printf "  %s system %s: volume per atom %.4f, pressure %s\n", label, id, v / atoms, p
  } /^[0-9]+$/ { atoms = $1 }' label="$1" "$2"
}

cells Ar 4 1.55 "1.03 0.98 1.00  1.00 1.02 0.97  0.99 0.99 1.04  1.02 1.02 1.02" > lj_cells.xyz
$run "$pipeline" --input lj_cells.xyz --stages fire,nvt,npt --relax-cell --cutoff 2.5 \
  --temperature 0.6 --pressure 0.1 --nvt-steps 1000 --npt-steps 2000 --thermostat-tau 0.1 \
  --checkpoint-every 500 --output lj_npt.xyz --progress off > lj.log
report "LJ, T 0.6, P 0.1:" lj_npt.xyz

if [ -n "$eam" ]; then
  cells Cu 3 3.615 "1.02 0.99 1.00  0.98 1.01 1.02" > cu_cells.xyz
  $run "$pipeline" --input cu_cells.xyz --potential eam --potential-file "$eam" --stages fire,nvt,npt \
    --relax-cell --temperature 300 --pressure 1 --nvt-steps 500 --npt-steps 1000 \
    --barostat mtk --npt-coupling aniso --checkpoint-every 500 --output cu_npt.xyz --progress off \
    > cu.log
  report "Cu (EAM), 300 K, 1 bar:" cu_npt.xyz
fi
