#!/usr/bin/env python3
"""FIRE 2.0: baton-pipeline's `fire --fire-variant fire2` against LAMMPS' `min_style fire` (Guenole
et al.'s own implementation of FIRE 2.0), both run here from the same jittered structures with the
same time step and FIRE 2.0's default parameters.

usage: compare_fire2.py --lmp LMP --pipeline BATON_PIPELINE --work DIR [--funcfl Cu_u3.eam]

Cases: a Lennard-Jones cluster (108 atoms cut from an fcc crystal, jittered, no cell; lj/cut 3.0,
shifted) and a periodic Cu crystal (Cu_u3.eam, metal units; 3x3x3 strained, triclinic fcc cells,
jittered; the cell fixed). Both minimise to a largest atom force of 1e-8 (LAMMPS: `min_modify
norm max`). Where neither caps a step (LAMMPS' dmax, Baton's max_step: both set far above any
move), the two algorithms are the same map, so they take the same number of steps to the same
minimum. Checked: the steps to within 1 (the last step's force may cross the threshold on either
side of it through rounding; steps as LAMMPS' force evaluations, less one: FIRE 2.0 computes the
forces again after each move back), and the energy per atom to 1e-12 relative. Exits 77 (skipped)
without LAMMPS.
"""
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from lammps_run import arguments, result_words, run_lammps  # noqa: E402
from strained_crystal import crystal  # noqa: E402

FMAX = 1e-8


def lj_cluster(seed):
    """108 atoms of a 3x3x3 fcc block with nearest neighbours at the LJ minimum, jittered."""
    a = 2 ** (1 / 6) * 2 ** 0.5
    basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
    rng = random.Random(seed)
    pos = []
    for k in range(3):
        for j in range(3):
            for i in range(3):
                for b in basis:
                    pos.append([(i + b[0]) * a + rng.uniform(-0.05, 0.05),
                                (j + b[1]) * a + rng.uniform(-0.05, 0.05),
                                (k + b[2]) * a + rng.uniform(-0.05, 0.05)])
    return pos


def write_inputs(work, name, species, pos, cell, mass):
    with open(os.path.join(work, f"{name}.xyz"), "w") as f:
        if cell:
            lattice = " ".join(f"{c:.17g}" for row in cell for c in row)
            f.write(f"{len(pos)}\nLattice=\"{lattice}\" Properties=species:S:1:pos:R:3 "
                    f"pbc=\"T T T\"\n")
        else:
            f.write(f"{len(pos)}\nProperties=species:S:1:pos:R:3 pbc=\"F F F\"\n")
        for p in pos:
            f.write(f"{species} {p[0]:.17g} {p[1]:.17g} {p[2]:.17g}\n")
    with open(os.path.join(work, f"{name}.data"), "w") as f:
        f.write(f"{name}\n\n{len(pos)} atoms\n1 atom types\n\n")
        if cell:
            (lx, _, _), (xy, ly, _), (xz, yz, lz) = cell
            f.write(f"0 {lx:.17g} xlo xhi\n0 {ly:.17g} ylo yhi\n0 {lz:.17g} zlo zhi\n"
                    f"{xy:.17g} {xz:.17g} {yz:.17g} xy xz yz\n\n")
        else:
            f.write("-50 50 xlo xhi\n-50 50 ylo yhi\n-50 50 zlo zhi\n\n")
        if mass:
            f.write(f"Masses\n\n1 {mass}\n\n")
        f.write("Atoms # atomic\n\n")
        for i, p in enumerate(pos):
            f.write(f"{i + 1} 1 {p[0]:.17g} {p[1]:.17g} {p[2]:.17g}\n")


def baton(pipeline, work, name, options, dt):
    out = os.path.join(work, f"{name}.baton.xyz")
    if os.path.exists(out):
        os.remove(out)
    cmd = [pipeline, "--stages", "fire", "--fire-variant", "fire2", "--fire-dt", str(dt),
           "--fire-max-step", "1000", "--input", f"{name}.xyz", "--output", out, "--fmax",
           str(FMAX), "--fire-max-steps", "100000", "--progress", "off"] + options
    run = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    lines = open(out).read().splitlines()
    n, comment = int(lines[0]), lines[1]
    if " failure=" in comment:
        sys.exit(f"{name}: Baton's relaxation failed: {comment}")
    energy = float(re.search(r" energy=(\S+)", comment).group(1))
    fmax = float(re.search(r" fmax=(\S+)", comment).group(1))
    steps = int(re.search(r" steps_fire=(\d+)", comment).group(1))
    return {"energy": energy / n, "fmax": fmax, "steps": steps}


def lammps(lmp, work, name, units, periodic, pair, dt):
    skin = "0.3" if units == "lj" else "1.0"
    lines = [f"units {units}", "atom_style atomic",
             "boundary p p p" if periodic else "boundary f f f", f"read_data {name}.data"]
    lines += pair + [f"neighbor {skin} bin", "neigh_modify every 1 delay 0 check yes",
                     "thermo_modify norm no", f"timestep {dt}", "min_style fire",
                     # FIRE 2.0's defaults, said out loud; no step capped (dmax)
                     "min_modify norm max dmax 1000 integrator eulerimplicit tmax 10.0 "
                     "tmin 0.02 delaystep 20 dtgrow 1.1 dtshrink 0.5 alpha0 0.25 "
                     "alphashrink 0.99 halfstepback yes initialdelay yes vdfmax 2000",
                     f"minimize 0.0 {FMAX} 100000 1000000",
                     'print "RESULT $(pe/atoms:%.17g) $(fnorm:%.17g)"']
    log = run_lammps(lmp, work, name, lines)
    words = result_words(log)
    evaluations = int(re.search(r"Iterations, force evaluations = \d+ (\d+)", log).group(1))
    # LAMMPS counts a force evaluation per iteration and one more after each move back, and one
    # more in its first iteration (v = 0 counts as uphill there), at the positions it started
    # from. Baton's steps are its force evaluations: the same, less that first one.
    steps = evaluations - 1
    criterion = re.search(r"Stopping criterion = (.*)", log).group(1).strip()
    return {"energy": float(words[1]), "steps": steps, "criterion": criterion}


def main():
    args = arguments()
    if args is None:
        return 77
    # name: (units, dt, periodic, LAMMPS pair lines, Baton options)
    cases = {
        "lj": ("lj", 0.005, False,
               ["mass 1 1.0", "pair_style lj/cut 3.0", "pair_modify shift yes",
                "pair_coeff 1 1 1.0 1.0 3.0"],
               ["--potential", "lj", "--cutoff", "3.0"]),
        "cu": ("metal", 0.001, True, ["pair_style eam", f"pair_coeff 1 1 {args.funcfl}"],
               ["--potential", "eam", "--potential-file", args.funcfl]),
    }
    failures = []
    print(f"{'case':5} {'atoms':>5} {'E/N Baton':>22} {'E/N LAMMPS':>22} {'rel':>8} "
          f"{'steps Baton':>11} {'steps LAMMPS':>12}")
    for name, (units, dt, periodic, pair, options) in cases.items():
        if units == "metal" and not args.funcfl:
            print(f"{name:5} skipped: no Cu_u3.eam")
            continue
        if periodic:
            pos, cell = crystal(3.615, 3, 2027)
        else:
            pos, cell = lj_cluster(2027), None
        write_inputs(args.work, name, "Cu" if units == "metal" else "Ar", pos, cell,
                     None if units == "metal" else 1.0)
        b = baton(args.pipeline, args.work, name, options, dt)
        l = lammps(args.lmp, args.work, name, units, periodic, pair, dt)
        de = abs(b["energy"] / l["energy"] - 1)
        print(f"{name:5} {len(pos):5d} {b['energy']:22.15g} {l['energy']:22.15g} {de:8.1e} "
              f"{b['steps']:11d} {l['steps']:12d}   (LAMMPS: {l['criterion']})")
        if l["criterion"] != "max force evaluation below tolerance" and \
                "force tolerance" not in l["criterion"]:
            failures.append(f"{name}: LAMMPS stopped on '{l['criterion']}'")
        if not de <= 1e-12:
            failures.append(f"{name}: energy per atom differs by {de:.2e} (limit 1e-12)")
        if abs(b["steps"] - l["steps"]) > 1:
            failures.append(f"{name}: {b['steps']} steps against LAMMPS' {l['steps']}")
        if not b["fmax"] <= FMAX:
            failures.append(f"{name}: Baton's fmax {b['fmax']:.2e} is over {FMAX}")
    if failures:
        print("\n".join(failures))
        return 1
    print("Baton's FIRE 2.0 and LAMMPS' min_style fire take the same steps to the same minimum")
    return 0


if __name__ == "__main__":
    sys.exit(main())
