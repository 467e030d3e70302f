#!/usr/bin/env python3
"""NPT against LAMMPS: Baton's npt stage (C-rescale with CSVR) and LAMMPS' fix npt (MTK, iso) on
the same Cu cell (Cu_u3.eam, fcc 3x3x3 of a = 3.615 A, 108 atoms) at 300 K and 1 bar, both run here.

usage: compare_npt.py --lmp LMP --baton BATON_NPT_CASE --work DIR --funcfl Cu_u3.eam

Compared: the mean volume per atom and the isothermal compressibility from the volume's
fluctuations, var V / (kT <V>), each within 3 combined standard errors. Baton's errors come from
8 independent systems (5 ps of equilibration, 20 ps sampled); LAMMPS' from 4 runs with their own
velocity seeds (10 ps of equilibration, 40 ps sampled each). Exits 77 (skipped) without LAMMPS.
"""
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from lammps_run import arguments  # noqa: E402

KT_EV = 8.617343e-5 * 300
NKTV2P = 1.6021765e6


def estimate(values):
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def baton(binary, funcfl):
    run = subprocess.run([binary, funcfl, "8", "5000", "20000", "20"], capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit(f"baton_npt_case failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    out = {}
    for line in run.stdout.splitlines():
        words = line.split()
        out[words[0]] = (float(words[1]), float(words[2]))
    return out


def lammps(lmp, work, funcfl):
    means, kappas = [], []
    for seed in (4928459, 1234567, 7654321, 2468013):
        name = f"npt_{seed}"
        lines = ["units metal", "atom_style atomic", "boundary p p p", "lattice fcc 3.615",
                 "region box block 0 3 0 3 0 3", "create_box 1 box", "create_atoms 1 box",
                 "pair_style eam", f"pair_coeff 1 1 {funcfl}",
                 f"velocity all create 300 {seed} mom yes rot no dist gaussian",
                 "fix 1 all npt temp 300 300 0.1 iso 1.0 1.0 1.0", "timestep 0.001",
                 "thermo 1000", "run 10000", "variable v equal vol/atoms",
                 f"fix out all print 20 \"V ${{v}}\" file {name}.volumes screen no",
                 "run 40000"]
        with open(os.path.join(work, f"{name}.in"), "w") as f:
            f.write("\n".join(lines) + "\n")
        run = subprocess.run([lmp, "-in", f"{name}.in", "-log", f"{name}.log", "-screen", "none",
                              "-nocite"], cwd=work, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"LAMMPS failed ({run.returncode}):\n{run.stdout}{run.stderr}")
        v = [float(line.split()[1]) for line in open(os.path.join(work, f"{name}.volumes"))
             if line.startswith("V ")]
        means.append(sum(v) / len(v))
        kappas.append(v)
    grand = sum(means) / len(means)
    k = [sum((x - grand) ** 2 for x in v) / len(v) * 108 / (KT_EV * grand) / NKTV2P
         for v in kappas]
    return {"volume": estimate(means), "compressibility": estimate(k)}


def main():
    args = arguments("baton", needs_funcfl=True)
    if args is None:
        return 77
    b = baton(args.baton, args.funcfl)
    l = lammps(args.lmp, args.work, args.funcfl)
    failures = []
    print(f"{'quantity':16} {'Baton (C-rescale)':>24} {'LAMMPS (fix npt)':>24} {'difference':>12}")
    for key, unit in (("volume", "A^3/atom"), ("compressibility", "1/bar")):
        (bm, be), (lm, le) = b[key], l[key]
        combined = math.sqrt(be * be + le * le)
        print(f"{key:16} {bm:14.6g} +- {be:7.2g} {lm:14.6g} +- {le:7.2g} "
              f"{(bm - lm) / combined:8.2f} SE  ({unit})")
        if not abs(bm - lm) <= 3 * combined:
            failures.append(f"{key}: Baton {bm:.6g} +- {be:.2g}, LAMMPS {lm:.6g} +- {le:.2g}")
    if failures:
        print("\n".join(failures))
        return 1
    print("Baton's NPT and LAMMPS' fix npt agree within 3 standard errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
