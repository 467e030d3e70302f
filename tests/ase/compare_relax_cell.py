#!/usr/bin/env python3
"""Variable-cell relaxation against ASE: baton-pipeline's `fire --relax-cell` and ASE's FIRE on a
UnitCellFilter (ASE 3.22, its LennardJones calculator), from the same strained, sheared, jittered
Lennard-Jones crystal (fcc 3x3x3 of a = 1.55 sigma, 108 atoms, cutoff 2.0; both shift the pair
energy to 0 at the cutoff). The second reference beside LAMMPS (tests/lammps/compare_relax_cell.py).

usage: compare_relax_cell.py --pipeline BATON_PIPELINE --work DIR

Checked: the relaxed energy per atom to 1e-7 and the volume per atom to 1e-5 (relative). Exits 77
(skipped) without ASE.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from strained_crystal import crystal, determinant  # noqa: E402





def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    try:
        from ase import Atoms
        from ase.calculators.lj import LennardJones
        from ase.constraints import UnitCellFilter
        from ase.optimize import FIRE
    except ImportError as e:
        print(f"SKIP: no ASE ({e})")
        return 77
    os.makedirs(args.work, exist_ok=True)
    pos, cell = crystal(1.55, 3, 2026)
    n = len(pos)

    # Baton
    lattice = " ".join(f"{c:.17g}" for row in cell for c in row)
    with open(os.path.join(args.work, "lj.xyz"), "w") as f:
        f.write(f"{n}\nLattice=\"{lattice}\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\n")
        for p in pos:
            f.write(f"Ar {p[0]:.17g} {p[1]:.17g} {p[2]:.17g}\n")
    out = os.path.join(args.work, "lj.baton.xyz")
    if os.path.exists(out):
        os.remove(out)
    cmd = [args.pipeline, "--stages", "fire", "--relax-cell", "--cutoff", "2.0", "--fmax", "1e-8",
           "--input", "lj.xyz", "--output", out, "--progress", "off"]
    run = subprocess.run(cmd, cwd=args.work, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    comment = open(out).read().splitlines()[1]
    h = [float(w) for w in re.search(r'Lattice="([^"]*)"', comment).group(1).split()]
    b_volume = abs(determinant([h[0:3], h[3:6], h[6:9]])) / n
    b_energy = float(re.search(r" energy=(\S+)", comment).group(1)) / n

    # ASE: FIRE on a UnitCellFilter, cell factor sqrt(N) (its default, N, converges in thousands
    # of steps: docs/dynamics.md)
    atoms = Atoms(f"Ar{n}", positions=pos, cell=cell, pbc=True)
    atoms.calc = LennardJones(sigma=1.0, epsilon=1.0, rc=2.0)
    opt = FIRE(UnitCellFilter(atoms, cell_factor=n ** 0.5), logfile=None)
    opt.run(fmax=1e-7, steps=3000)
    a_volume = atoms.get_volume() / n
    a_energy = atoms.get_potential_energy() / n

    de = abs(b_energy / a_energy - 1)
    dv = abs(b_volume / a_volume - 1)
    print(f"{'':6} {'E/N':>22} {'V/N':>20}")
    print(f"{'Baton':6} {b_energy:22.15g} {b_volume:20.14g}")
    print(f"{'ASE':6} {a_energy:22.15g} {a_volume:20.14g}   ({opt.nsteps} FIRE steps)")
    print(f"{'rel':6} {de:22.1e} {dv:20.1e}")
    failures = []
    if not de <= 1e-7:
        failures.append(f"energy per atom differs by {de:.2e} (limit 1e-7)")
    if not dv <= 1e-5:
        failures.append(f"volume per atom differs by {dv:.2e} (limit 1e-5)")
    if failures:
        print("\n".join(failures))
        return 1
    print("Baton and ASE relax the cell to the same energy and volume per atom")
    return 0


if __name__ == "__main__":
    sys.exit(main())
