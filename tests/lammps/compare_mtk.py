#!/usr/bin/env python3
"""The MTK barostat against LAMMPS' fix npt, step by step: Baton's MtkStage (baton_mtk_case) and
LAMMPS (`fix npt temp 300 300 0.1 iso|aniso|tri 1000 1000 0.1`, its defaults: chains of three,
the MTK terms; `flip no`) from the same state (a strained, jittered Cu crystal of 256 atoms,
Cu_u3.eam, velocities at 300 K, written by baton_mtk_case as a LAMMPS data file), both run here.

usage: compare_mtk.py --lmp LMP --baton BATON_MTK_CASE --work DIR --funcfl Cu_u3.eam

The two are the same equations and the same splitting, so they follow the same trajectory, apart
from rounding (sums in another order) that the dynamics' chaos grows. Compared at every one of
200 steps: the potential and kinetic energy, the volume, the cell's lengths and tilts, and the
conserved quantity (LAMMPS: pe + ke + f_1, which counts P0 (V - V0) where Baton counts P0 V).
Limit: 1e-9 relative (the tilts: 1e-9 of the cell's length). Over those 200 steps the volume
moves by about 2% and the tilts by 0.3 A. Exits 77 (skipped) without LAMMPS.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from lammps_run import arguments, run_lammps  # noqa: E402

STEPS = 200
NKTV2P = 1.6021765e6
P0 = 1000.0
LIMIT = 1e-9
# LAMMPS' f_1 counts the barostat chain's first work term as 3 kT eta'_1 for iso, where its
# equations (nhc_press_integrate) drive that chain toward kT, one strain: the volume. Baton counts
# kT eta'_1, which keeps the sum conserved; this takes LAMMPS' extra 2 kT eta'_1 (f_1[9]) back.
ISO_CORRECTION = f"-2*{8.617343e-5 * 300!r}*f_1[9]"


def baton(binary, funcfl, coupling, work):
    run = subprocess.run([binary, funcfl, coupling, work, str(STEPS)], capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit(f"baton_mtk_case {coupling} failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    start, rows = None, {}
    for line in run.stdout.splitlines():
        words = line.split()
        if words[0] == "start":
            start = float(words[1])
        elif words[0] == "step":
            rows[int(words[1])] = [float(w) for w in words[2:]]
    # pe ke vol xx yy zz xy xz yz, and the conserved quantity less P0 V0 (as LAMMPS counts it)
    return {n: r[:9] + [r[9] - P0 * start / NKTV2P] for n, r in rows.items()}


def lammps(lmp, work, funcfl, coupling):
    name = f"mtk_{coupling}"
    flip = " flip no" if coupling == "tri" else ""
    lines = ["units metal", "atom_style atomic", "boundary p p p", f"read_data {name}.data",
             "pair_style eam", f"pair_coeff 1 1 {funcfl}", "neighbor 1.0 bin",
             "neigh_modify every 1 delay 0 check yes", "timestep 0.001",
             f"fix 1 all npt temp 300 300 0.1 {coupling} {P0} {P0} 0.1{flip}",
             f"variable e equal pe+ke+f_1{ISO_CORRECTION if coupling == 'iso' else ''}",
             "thermo_style custom step pe ke vol lx ly lz xy xz yz v_e",
             "thermo_modify format float %.17g norm no", "thermo 1", f"run {STEPS}"]
    log = run_lammps(lmp, work, name, lines)
    rows, table = {}, False
    for line in log.splitlines():
        words = line.split()
        if words[:2] == ["Step", "PotEng"]:
            table = True
            continue
        if table and words and words[0] == "Loop":
            break
        if table and len(words) == 11:
            rows[int(words[0])] = [float(w) for w in words[1:]]
    return rows


def main():
    args = arguments("baton", needs_funcfl=True)
    if args is None:
        return 77
    names = ["pe", "ke", "volume", "lx", "ly", "lz", "xy", "xz", "yz", "conserved"]
    failures = []
    print(f"{'coupling':8} {'quantity':9} {'step 1':>22} {'step 200 Baton':>22} "
          f"{'step 200 LAMMPS':>22} {'worst rel':>9}")
    for coupling in ("iso", "aniso", "tri"):
        b = baton(args.baton, args.funcfl, coupling, args.work)
        lmp = lammps(args.lmp, args.work, args.funcfl, coupling)
        if sorted(b) != list(range(1, STEPS + 1)) or not all(n in lmp for n in b):
            failures.append(f"{coupling}: steps missing (Baton {len(b)}, LAMMPS {len(lmp)})")
            continue
        for k, name in enumerate(names):
            worst = 0.0
            for n in b:
                # tilts against the cell's length, the rest against themselves
                scale = abs(lmp[n][3]) if name in ("xy", "xz", "yz") else abs(lmp[n][k])
                worst = max(worst, abs(b[n][k] - lmp[n][k]) / scale)
            print(f"{coupling:8} {name:9} {lmp[1][k]:22.15g} {b[STEPS][k]:22.15g} "
                  f"{lmp[STEPS][k]:22.15g} {worst:9.1e}")
            if not worst <= LIMIT:
                failures.append(f"{coupling}: {name} differs by {worst:.2e} (limit {LIMIT})")
    if failures:
        print("\n".join(failures))
        return 1
    print(f"Baton's MTK barostat follows LAMMPS' fix npt for {STEPS} steps (iso, aniso, tri)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
