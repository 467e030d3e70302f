#!/usr/bin/env python3
"""Variable-cell relaxation: baton-pipeline's `fire --relax-cell` against LAMMPS' `fix box/relax
tri 0.0` + `minimize`, both run here from the same strained, sheared, jittered crystals.

usage: compare_relax_cell.py --lmp LMP --pipeline BATON_PIPELINE --work DIR [--funcfl Cu_u3.eam]

Cases: Cu (Cu_u3.eam, metal units), 3x3x3 fcc cells of a = 3.615 A, and Lennard-Jones (lj/cut 2.5,
unshifted), 4x4x4 fcc cells of a = 1.55 sigma; each strained by a few percent along x, y and z,
tilted into a triclinic cell and jittered. Checked: the relaxed energy per atom to 1e-7 and the
volume per atom to 1e-5 (relative), and Baton's final pressure (from the frame's `pressure`) within
what its --fmax allows. Exits 77 (skipped) without LAMMPS.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from lammps_run import arguments, result_words, run_lammps  # noqa: E402
from strained_crystal import crystal, determinant  # noqa: E402

# name: (units, lattice constant, cells, potential lines, baton options, nktv2p)
CASES = {
    "cu": ("metal", 3.615, 3, ["pair_style eam", "pair_coeff 1 1 {funcfl}"],
           ["--potential", "eam", "--potential-file", "{funcfl}"], 1.6021765e6),
    "lj": ("lj", 1.55, 4, ["pair_style lj/cut 2.5", "pair_coeff 1 1 1.0 1.0 2.5"],
           ["--potential", "lj", "--cutoff", "2.5", "--no-shift"], 1.0),
}


def write_inputs(work, name, species, pos, cell):
    lattice = " ".join(f"{c:.17g}" for row in cell for c in row)
    with open(os.path.join(work, f"{name}.xyz"), "w") as f:
        f.write(f"{len(pos)}\nLattice=\"{lattice}\" Properties=species:S:1:pos:R:3 "
                f"pbc=\"T T T\"\n")
        for p in pos:
            f.write(f"{species} {p[0]:.17g} {p[1]:.17g} {p[2]:.17g}\n")
    (lx, _, _), (xy, ly, _), (xz, yz, lz) = cell
    with open(os.path.join(work, f"{name}.data"), "w") as f:
        f.write(f"{name}\n\n{len(pos)} atoms\n1 atom types\n\n"
                f"0 {lx:.17g} xlo xhi\n0 {ly:.17g} ylo yhi\n0 {lz:.17g} zlo zhi\n"
                f"{xy:.17g} {xz:.17g} {yz:.17g} xy xz yz\n\n")
        if name == "lj":
            f.write("Masses\n\n1 1.0\n\n")
        f.write("Atoms # atomic\n\n")
        for i, p in enumerate(pos):
            f.write(f"{i + 1} 1 {p[0]:.17g} {p[1]:.17g} {p[2]:.17g}\n")



def baton(pipeline, work, name, options, fmax):
    out = os.path.join(work, f"{name}.baton.xyz")
    if os.path.exists(out):
        os.remove(out)
    cmd = [pipeline, "--stages", "fire", "--relax-cell", "--input", f"{name}.xyz", "--output",
           out, "--fmax", str(fmax), "--fire-max-steps", "20000", "--progress", "off"] + options
    run = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    lines = open(out).read().splitlines()
    n, comment = int(lines[0]), lines[1]
    if "failed=T" in comment or " failure=" in comment:
        sys.exit(f"{name}: Baton's relaxation failed: {comment}")
    lattice = [float(w) for w in re.search(r'Lattice="([^"]*)"', comment).group(1).split()]
    cell = [lattice[0:3], lattice[3:6], lattice[6:9]]
    energy = float(re.search(r" energy=(\S+)", comment).group(1))
    pressure = float(re.search(r" pressure=(\S+)", comment).group(1))
    steps = re.search(r" steps_fire=(\d+)", comment)
    return {"energy": energy / n, "volume": abs(determinant(cell)) / n, "pressure": pressure,
            "steps": steps.group(1) if steps else "?"}


def lammps(lmp, work, name, units, pair):
    skin = "0.3" if units == "lj" else "1.0"
    lines = [f"units {units}", "atom_style atomic", "boundary p p p", f"read_data {name}.data"]
    lines += pair + [f"neighbor {skin} bin", "neigh_modify every 1 delay 0 check yes",
                     "thermo_modify format float %.17g norm no", "min_modify line quadratic"]
    # box/relax measures strain from the cell it starts from: minimize again from the result,
    # as its documentation advises, until the energy stops changing.
    for _ in range(2):
        lines += ["fix relax all box/relax tri 0.0 vmax 0.001",
                  "minimize 0.0 1e-12 5000 50000", "unfix relax"]
    lines += ['print "RESULT $(pe/atoms:%.17g) $(vol/atoms:%.17g) $(press:%.17g)"']
    words = result_words(run_lammps(lmp, work, name, lines))
    return {"energy": float(words[1]), "volume": float(words[2]), "pressure": float(words[3])}


def main():
    args = arguments()
    if args is None:
        return 77
    failures = []
    fmax = 1e-8
    print(f"{'case':5} {'atoms':>5} {'E/N Baton':>22} {'E/N LAMMPS':>22} {'rel':>8} "
          f"{'V/N Baton':>20} {'V/N LAMMPS':>20} {'rel':>8} {'P Baton':>10} {'steps':>6}")
    for name, (units, a, cells, pair, options, nktv2p) in CASES.items():
        if "{funcfl}" in " ".join(pair) and not args.funcfl:
            print(f"{name:5} skipped: no Cu_u3.eam")
            continue
        pair = [p.format(funcfl=args.funcfl) for p in pair]
        options = [o.format(funcfl=args.funcfl) for o in options]
        pos, cell = crystal(a, cells, 2026)
        write_inputs(args.work, name, "Cu" if units == "metal" else "Ar", pos, cell)
        b = baton(args.pipeline, args.work, name, options, fmax)
        l = lammps(args.lmp, args.work, name, units, pair)
        de = abs(b["energy"] / l["energy"] - 1)
        dv = abs(b["volume"] / l["volume"] - 1)
        print(f"{name:5} {len(pos):5d} {b['energy']:22.15g} {l['energy']:22.15g} {de:8.1e} "
              f"{b['volume']:20.14g} {l['volume']:20.14g} {dv:8.1e} "
              f"{b['pressure'] * nktv2p:10.2e} {b['steps']:>6}")
        if not de <= 1e-7:
            failures.append(f"{name}: energy per atom differs by {de:.2e} (limit 1e-7)")
        if not dv <= 1e-5:
            failures.append(f"{name}: volume per atom differs by {dv:.2e} (limit 1e-5)")
        # Converged cell: every row of (W - V P) / N at most fmax, so |P| <= 3 fmax N / V
        # (row norms bound the diagonal); the frame's pressure has FIRE's tiny kinetic part too.
        bound = 3 * fmax / b["volume"] * 1.01
        if not abs(b["pressure"]) <= bound:
            failures.append(f"{name}: Baton's pressure {b['pressure']:.3e} is over {bound:.1e}")
    if failures:
        print("\n".join(failures))
        return 1
    print("Baton and LAMMPS relax the cells to the same energy and volume per atom")
    return 0


if __name__ == "__main__":
    sys.exit(main())
