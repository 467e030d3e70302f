#!/usr/bin/env python3
"""Compares Baton's host EAM reference with LAMMPS itself on small isolated clusters.

Usage: compare_lammps.py --lmp LMP --reference BATON_EAM_REFERENCE --work DIR
                         [--funcfl Cu_u3.eam] [--setfl Cu_mishin1.eam.alloy]
                         [--alloy CuNi.eam.alloy] [--tolerance 1e-10]

For each potential file given and each cluster (a perturbed 79-atom fcc Cu ball, the same ball
squeezed to 75 % and crushed to 60 %, so that densities run past the end of the F(rho) table,
and a random 40-atom gas with pairs at all distances up to the cutoff), the script writes the cluster
as a LAMMPS data file and as XYZ, runs

  LAMMPS: units metal, boundary f f f, pair_style eam (funcfl) or eam/alloy (setfl), run 0,
          forces and per-atom energies dumped with %.17g, pe and the pressure tensor's virial
          part printed with %.17g;
  Baton:  baton_eam_reference POTENTIAL CLUSTER.xyz (eam_compute_host, %.17g),

and compares: total energy |dE| / |E|, forces max_i |dF_i| / max_i |F_i|, per-atom energies
max_i |de_i| / max_i |e_i|, virial max |dW| / max |W|. Every one must be at most the tolerance.

Two synthetic Cu files, a funcfl and a setfl written here, whose functions stay non-zero up to a
cutoff one spacing past the r table's end, check the clamps at the tables' ends as well.

Exit status: 0 all agree, 1 a disagreement or a failed run, 77 LAMMPS or the potential files are
missing (ctest SKIP_RETURN_CODE).
"""

import argparse
import math
import os
import random
import subprocess
import sys

SKIP = 77
NKTV2P_METAL = 1.6021765e6  # LAMMPS' force->nktv2p for units metal (bar A^3 / eV)


def fcc_ball(a, radius, rng, jitter):
    atoms = []
    n = int(math.ceil(radius / a)) + 1
    basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
    for i in range(-n, n + 1):
        for j in range(-n, n + 1):
            for k in range(-n, n + 1):
                for b in basis:
                    x = [(i + b[0]) * a, (j + b[1]) * a, (k + b[2]) * a]
                    if math.sqrt(sum(c * c for c in x)) <= radius:
                        atoms.append([c + rng.uniform(-jitter, jitter) for c in x])
    return atoms


def random_gas(n, box, min_distance, rng):
    atoms = []
    while len(atoms) < n:
        x = [rng.uniform(-box / 2, box / 2) for _ in range(3)]
        if all(math.dist(x, y) >= min_distance for y in atoms):
            atoms.append(x)
    return atoms


def write_synthetic(work):
    """A funcfl and a setfl file (Cu) whose functions do not vanish at the cutoff, which is one
    spacing past the r table's last point (the most read_eam_file accepts): pairs beyond the
    table's end and densities beyond rhomax count, so LAMMPS' clamps and, for funcfl, its dropping
    of the tables' last point show."""
    nrho, drho, nr, dr = 200, 0.01, 100, 0.05
    cutoff = nr * dr
    frho = [-math.sqrt(k * drho) + 0.1 * (k * drho) ** 2 for k in range(nrho)]
    zr = [0.6 * math.exp(-0.45 * k * dr) + 0.05 for k in range(nr)]
    rhor = [0.3 * math.exp(-0.6 * k * dr) + 0.01 for k in range(nr)]
    rphi = [(k * dr) * (math.exp(-1.4 * (k * dr - 2.4)) - 2 * math.exp(-0.7 * (k * dr - 2.4)))
            for k in range(nr)]

    def lines(values):
        return "".join(" ".join(repr(v) for v in values[i:i + 5]) + "\n"
                       for i in range(0, len(values), 5))

    grid = f"{nrho} {drho!r} {nr} {dr!r} {cutoff!r}\n"
    funcfl = os.path.join(work, "Synthetic_Cu.eam")
    with open(funcfl, "w") as f:
        f.write("synthetic funcfl (compare_lammps.py)\n29 63.55 3.615 FCC\n" + grid + lines(frho)
                + lines(zr) + lines(rhor))
    setfl = os.path.join(work, "Synthetic_Cu.eam.alloy")
    with open(setfl, "w") as f:
        f.write("synthetic setfl (compare_lammps.py)\n\n\n1 Cu\n" + grid + "29 63.55 3.615 FCC\n"
                + lines(frho) + lines(rhor) + lines(rphi))
    return [("eam", funcfl, ["Cu"]), ("eam/alloy", setfl, ["Cu"])]


def write_cluster(work, name, atoms, species, elements, masses):
    xyz = os.path.join(work, name + ".xyz")
    with open(xyz, "w") as f:
        f.write(f"{len(atoms)}\n{name}\n")
        for s, x in zip(species, atoms):
            f.write(f"{s} {x[0]!r} {x[1]!r} {x[2]!r}\n")
    data = os.path.join(work, name + ".data")
    half = 40.0
    with open(data, "w") as f:
        f.write(f"{name} (compare_lammps.py)\n\n{len(atoms)} atoms\n{len(elements)} atom types\n\n")
        for axis in "xyz":
            f.write(f"{-half} {half} {axis}lo {axis}hi\n")
        f.write("\nMasses\n\n")
        for t, m in enumerate(masses, start=1):
            f.write(f"{t} {m!r}\n")
        f.write("\nAtoms # atomic\n\n")
        for i, (s, x) in enumerate(zip(species, atoms), start=1):
            f.write(f"{i} {elements.index(s) + 1} {x[0]!r} {x[1]!r} {x[2]!r}\n")
    return xyz, data


def run_lammps(lmp, work, name, data, style, potential, elements):
    dump = os.path.join(work, name + ".forces")
    coeff = "* * " + potential + ("" if style == "eam" else " " + " ".join(elements))
    script = f"""units metal
atom_style atomic
atom_modify map array
boundary f f f
read_data {data}
pair_style {style}
pair_coeff {coeff}
neighbor 1.0 bin
compute peatom all pe/atom
compute vir all pressure NULL virial
thermo_style custom step pe c_vir[1] c_vir[2] c_vir[3] c_vir[4] c_vir[5] c_vir[6] vol
thermo_modify format float %.17g
dump d all custom 1 {dump} id fx fy fz c_peatom
dump_modify d format float %.17g sort id
run 0
"""
    infile = os.path.join(work, name + ".in")
    log = os.path.join(work, name + ".log")
    with open(infile, "w") as f:
        f.write(script)
    run = subprocess.run([lmp, "-in", infile, "-log", log, "-screen", "none", "-nocite"],
                         cwd=work, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"LAMMPS failed ({run.returncode}) on {infile}:\n{run.stdout}"
                           f"{run.stderr}\n" + (open(log).read()[-3000:] if os.path.exists(log) else ""))
    lines = open(log).read().splitlines()
    thermo = None
    for k, line in enumerate(lines):
        if line.split()[:2] == ["Step", "PotEng"]:
            thermo = [float(w) for w in lines[k + 1].split()]
            break
    if thermo is None:
        raise RuntimeError(f"no thermo output in {log}")
    energy = thermo[1]
    volume = thermo[8]
    virial = [p * volume / NKTV2P_METAL for p in thermo[2:8]]
    forces, atom_energy = {}, {}
    dump_lines = open(dump).read().splitlines()
    start = dump_lines.index("ITEM: ATOMS id fx fy fz c_peatom") + 1
    for line in dump_lines[start:]:
        w = line.split()
        forces[int(w[0])] = [float(v) for v in w[1:4]]
        atom_energy[int(w[0])] = float(w[4])
    n = len(forces)
    return {"energy": energy, "virial": virial,
            "forces": [forces[i] for i in range(1, n + 1)],
            "atom_energy": [atom_energy[i] for i in range(1, n + 1)]}


def run_baton(reference, potential, xyz):
    run = subprocess.run([reference, potential, xyz], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{reference} failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    out = {"forces": [], "atom_energy": [], "rho": []}
    for line in run.stdout.splitlines():
        w = line.split()
        if w[0] in ("energy", "rho_max", "rhomax"):
            out[w[0]] = float(w[1])
        elif w[0] == "virial":
            out["virial"] = [float(v) for v in w[1:]]
        elif w[0] == "atom":
            out["forces"].append([float(v) for v in w[2:5]])
            out["atom_energy"].append(float(w[5]))
            out["rho"].append(float(w[6]))
    return out


def compare(baton, lammps):
    n = len(lammps["forces"])
    if len(baton["forces"]) != n:
        raise RuntimeError(f"Baton has {len(baton['forces'])} atoms, LAMMPS {n}")
    e_rel = abs(baton["energy"] - lammps["energy"]) / abs(lammps["energy"])
    f_scale = max(math.sqrt(sum(c * c for c in f)) for f in lammps["forces"])
    f_err = max(math.dist(fb, fl) for fb, fl in zip(baton["forces"], lammps["forces"]))
    a_scale = max(abs(e) for e in lammps["atom_energy"])
    a_err = max(abs(eb - el) for eb, el in zip(baton["atom_energy"], lammps["atom_energy"]))
    w_scale = max(abs(w) for w in lammps["virial"])
    w_err = max(abs(wb - wl) for wb, wl in zip(baton["virial"], lammps["virial"]))
    return {"energy": e_rel, "forces": f_err / f_scale, "atom_energy": a_err / a_scale,
            "virial": w_err / w_scale, "fmax": f_scale}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lmp", default="")
    parser.add_argument("--reference", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--funcfl", default="")
    parser.add_argument("--setfl", default="")
    parser.add_argument("--alloy", default="", help="a two-element setfl file (CuNi.eam.alloy)")
    parser.add_argument("--tolerance", type=float, default=1e-10)
    args = parser.parse_args()

    if not args.lmp or not os.access(args.lmp, os.X_OK):
        print(f"SKIP: no LAMMPS executable (lmp) found ({args.lmp!r})")
        return SKIP
    potentials = []
    if args.funcfl and os.path.exists(args.funcfl):
        potentials.append(("eam", args.funcfl, ["Cu"]))
    if args.setfl and os.path.exists(args.setfl):
        potentials.append(("eam/alloy", args.setfl, ["Cu"]))
    if args.alloy and os.path.exists(args.alloy):
        potentials.append(("eam/alloy", args.alloy, ["Ni", "Cu"]))
    if not potentials:
        print("SKIP: none of the potential files (Cu_u3.eam, Cu_mishin1.eam.alloy) was found")
        return SKIP
    os.makedirs(args.work, exist_ok=True)
    potentials += write_synthetic(args.work)

    rng = random.Random(20240611)
    ball = fcc_ball(3.615, 6.0, rng, 0.12)
    clusters = [("ball", ball), ("squeezed", [[0.75 * c for c in x] for x in ball]),
                ("crushed", [[0.6 * c for c in x] for x in ball]),
                ("gas", random_gas(40, 9.0, 1.9, rng))]
    masses = {"Cu": 63.55, "Ni": 58.69}

    worst = {}
    failed = False
    print(f"{'potential':<22} {'cluster':<9} {'atoms':>5} {'energy (eV)':>22} {'fmax':>9} "
          f"{'rho_max/rhomax':>14} {'dE/E':>9} {'dF/Fmax':>9} {'de_i':>9} {'dW':>9}")
    for style, potential, elements in potentials:
        base = os.path.basename(potential)
        for cname, atoms in clusters:
            species = [elements[i % len(elements)] for i in range(len(atoms))]
            if len(elements) > 1:
                rng.shuffle(species)
            name = (base + "_" + cname).replace(".", "_")
            xyz, data = write_cluster(args.work, name, atoms, species, elements,
                                      [masses[e] for e in elements])
            try:
                lammps = run_lammps(args.lmp, args.work, name, data, style, potential, elements)
                baton = run_baton(args.reference, potential, xyz)
                err = compare(baton, lammps)
            except (RuntimeError, OSError, ValueError, KeyError, IndexError) as e:
                print(f"FAIL: {base} {cname}: {e}")
                failed = True
                continue
            print(f"{base:<22} {cname:<9} {len(atoms):>5} {lammps['energy']:>22.15g} "
                  f"{err['fmax']:>9.3g} {baton['rho_max'] / baton['rhomax']:>14.3g} "
                  f"{err['energy']:>9.2e} {err['forces']:>9.2e} {err['atom_energy']:>9.2e} "
                  f"{err['virial']:>9.2e}")
            for key in ("energy", "forces", "atom_energy", "virial"):
                worst[(base, key)] = max(worst.get((base, key), 0.0), err[key])
                if not err[key] <= args.tolerance:
                    print(f"FAIL: {base} {cname}: relative {key} error {err[key]:.3e} > "
                          f"{args.tolerance:g}")
                    failed = True
    print("largest relative differences from LAMMPS:")
    for style, potential, elements in potentials:
        base = os.path.basename(potential)
        print(f"  {base}: energy {worst.get((base, 'energy'), math.nan):.2e}, forces "
              f"{worst.get((base, 'forces'), math.nan):.2e}, per-atom energy "
              f"{worst.get((base, 'atom_energy'), math.nan):.2e}, virial "
              f"{worst.get((base, 'virial'), math.nan):.2e}")
    print("FAILED" if failed else f"all within {args.tolerance:g}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
