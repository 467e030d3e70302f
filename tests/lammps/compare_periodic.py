#!/usr/bin/env python3
"""Baton against LAMMPS on periodic systems, both run here on the same starting state.

usage: compare_periodic.py --lmp LMP --baton BATON_MD_CASE --work DIR --funcfl Cu_u3.eam
                           --setfl Cu_mishin1.eam.alloy

For each case, baton_md_case builds the system (fcc crystal, jittered, velocities drawn), writes it
as a LAMMPS data file and prints Baton's step-0 energy, virial and forces and the potential and
kinetic energy after 100 velocity-Verlet steps; LAMMPS reads the data file and computes the same.
Checked: step-0 energy, virial and forces to 1e-10 (relative; forces relative to the largest),
the step-0 stress and pressure of Baton's extended-XYZ frame (velocities included) against LAMMPS'
`compute pressure thermo_temp` to 1e-9 (stress = -pressure tensor / nktv2p; relative to the largest
component), and both energies after 100 steps to 1e-8. Exits 77 (skipped) without LAMMPS or its potential files.
"""
import argparse
import os
import re
import subprocess
import sys

CASES = {
    # name: (units, dt, nktv2p, pair lines, file)
    "lj": ("lj", 0.005, 1.0, ["pair_style lj/cut 2.5", "pair_coeff 1 1 1.0 1.0 2.5"], None),
    "lj_tri": ("lj", 0.005, 1.0, ["pair_style lj/cut 2.5", "pair_coeff 1 1 1.0 1.0 2.5"], None),
    "eam": ("metal", 0.001, 1.6021765e6, ["pair_style eam", "pair_coeff 1 1 {file}"], "funcfl"),
    "eam_tri": ("metal", 0.001, 1.6021765e6,
                ["pair_style eam/alloy", "pair_coeff * * {file} Cu"], "setfl"),
}


def baton(binary, name, work, potential):
    cmd = [binary, name, work] + ([potential] if potential else [])
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    out = {"forces": {}}
    for line in run.stdout.splitlines():
        words = line.split()
        if words[0] == "step0":
            out["energy"] = float(words[1])
            out["virial"] = [float(w) for w in words[2:8]]
        elif words[0] == "force":
            out["forces"][int(words[1])] = [float(w) for w in words[2:5]]
        elif words[0] == "step100":
            out["pe100"], out["ke100"] = float(words[1]), float(words[2])
    comment = open(os.path.join(work, f"{name}.xyz")).read().splitlines()[1]
    stress = re.search(r' stress="([^"]*)"', comment)
    pressure = re.search(r' pressure=(\S+)', comment)
    if not stress or not pressure:
        sys.exit(f"{name}.xyz: no stress or pressure in the frame: {comment}")
    m = [float(w) for w in stress.group(1).split()]
    out["stress"] = [m[0], m[4], m[8], m[1], m[2], m[5]]  # xx yy zz xy xz yz
    out["pressure"] = float(pressure.group(1))
    return out


def lammps(lmp, name, work, potential):
    units, dt, nktv2p, pair, _ = CASES[name]
    skin = "0.3" if units == "lj" else "1.0"
    lines = [f"units {units}", "atom_style atomic", "boundary p p p",
             f"read_data {name}.data"] + [p.format(file=potential) for p in pair] + [
        f"neighbor {skin} bin", "neigh_modify every 1 delay 0 check yes",
        "compute w all pressure NULL virial", "compute p all pressure thermo_temp",
        "thermo_style custom step pe ke c_w[1] c_w[2] c_w[3] c_w[4] c_w[5] c_w[6] vol "
        "c_p[1] c_p[2] c_p[3] c_p[4] c_p[5] c_p[6] c_p",
        "thermo_modify format float %.17g norm no",
        f"dump f all custom 1 {name}.forces id fx fy fz",
        "dump_modify f format float %.17g sort id", "run 0", "undump f",
        "fix 1 all nve", f"timestep {dt}", "thermo 100", "run 100"]
    with open(os.path.join(work, f"{name}.in"), "w") as f:
        f.write("\n".join(lines) + "\n")
    run = subprocess.run([lmp, "-in", f"{name}.in", "-log", f"{name}.log", "-screen", "none",
                          "-nocite"], cwd=work, capture_output=True, text=True)
    if run.returncode != 0:
        log = open(os.path.join(work, f"{name}.log")).read()[-3000:]
        sys.exit(f"LAMMPS failed on {name} ({run.returncode}):\n{run.stdout}{run.stderr}{log}")
    rows = []
    reading = False
    for line in open(os.path.join(work, f"{name}.log")):
        words = line.split()
        if words[:2] == ["Step", "PotEng"]:
            reading = True
            continue
        if reading and words and words[0].isdigit() and len(words) == 17:
            rows.append([float(w) for w in words])
        elif reading:
            reading = False
    step0, step100 = rows[0], rows[-1]
    assert step100[0] == 100, f"no step 100 in {name}.log"
    volume = step0[9]
    out = {"energy": step0[1], "virial": [p * volume / nktv2p for p in step0[3:9]],
           "stress": [-p / nktv2p for p in step0[10:16]], "pressure": step0[16] / nktv2p,
           "pe100": step100[1], "ke100": step100[2], "forces": {}}
    lines = open(os.path.join(work, f"{name}.forces")).read().splitlines()
    start = lines.index("ITEM: ATOMS id fx fy fz") + 1
    for line in lines[start:]:
        words = line.split()
        out["forces"][int(words[0])] = [float(w) for w in words[1:4]]
    return out


def relative(a, b, scale=None):
    return abs(a - b) / (scale if scale else max(abs(b), 1e-300))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lmp", default="")
    parser.add_argument("--baton", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--funcfl", default="")
    parser.add_argument("--setfl", default="")
    args = parser.parse_args()
    if not args.lmp or not os.access(args.lmp, os.X_OK):
        print(f"SKIP: no LAMMPS executable (lmp) found ({args.lmp!r})")
        return 77
    os.makedirs(args.work, exist_ok=True)
    files = {"funcfl": args.funcfl, "setfl": args.setfl}
    failures = []
    print(f"{'case':8} {'atoms':>6} {'energy':>9} {'virial':>9} {'forces':>9} {'stress':>9} "
          f"{'pressure':>9} {'pe(100)':>9} {'ke(100)':>9}")
    for name, (_, _, _, _, kind) in CASES.items():
        potential = files[kind] if kind else None
        if kind and not potential:
            print(f"{name:8} skipped: no {kind} file")
            continue
        b = baton(args.baton, name, args.work, potential)
        l = lammps(args.lmp, name, args.work, potential)
        fscale = max(abs(c) for f in l["forces"].values() for c in f)
        wscale = max(abs(w) for w in l["virial"])
        err = {
            "energy": relative(b["energy"], l["energy"]),
            "virial": max(relative(x, y, wscale) for x, y in zip(b["virial"], l["virial"])),
            "forces": max(relative(x, y, fscale) for i in l["forces"]
                          for x, y in zip(b["forces"][i], l["forces"][i])),
            "stress": max(relative(x, y, max(abs(v) for v in l["stress"]))
                          for x, y in zip(b["stress"], l["stress"])),
            "pressure": relative(b["pressure"], l["pressure"]),
            "pe100": relative(b["pe100"], l["pe100"]),
            "ke100": relative(b["ke100"], l["ke100"]),
        }
        print(f"{name:8} {len(l['forces']):6d} " +
              " ".join(f"{err[k]:9.1e}" for k in ("energy", "virial", "forces", "stress", "pressure",
                                                  "pe100", "ke100")))
        limits = {"energy": 1e-10, "virial": 1e-10, "forces": 1e-10, "stress": 1e-9, "pressure": 1e-9,
                  "pe100": 1e-8, "ke100": 1e-8}
        for k, limit in limits.items():
            if not err[k] <= limit:
                failures.append(f"{name}: {k} differs by {err[k]:.2e} (limit {limit:g}): "
                                f"Baton {b.get(k)} LAMMPS {l.get(k)}")
    if failures:
        print("\n".join(failures))
        return 1
    print("Baton and LAMMPS agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
