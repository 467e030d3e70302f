#!/usr/bin/env python3
"""Extended XYZ interop with ASE: ASE writes, Baton reads and writes back, ASE reads.

Usage: check_ase_interop.py XYZ_ROUNDTRIP WORK_DIR

XYZ_ROUNDTRIP is tests/xyz/xyz_roundtrip.cpp built (read_xyz_file IN, write_xyz_file OUT). ASE
writes frames with a triclinic cell and pbc "T T F", a cluster (no cell), a cubic periodic cell and
a cell that is not periodic; Baton rewrites the file; ASE reads both files and every frame must
agree exactly: species, positions, cell, pbc, masses, the velo column and system_id. The cell must
also equal the one ASE was given, bit for bit (ASE writes cell numbers in full precision, positions
with 8 decimals).

Exit status: 0 when everything agrees, 1 otherwise, 77 (skipped) when ASE is not installed for this
Python.
"""

import os
import subprocess
import sys

SKIP = 77


def frames(np):
    """The frames ASE writes: (atoms, has_cell)."""
    from ase import Atoms
    from ase.build import bulk

    triclinic = Atoms(
        "Cu2Ar",
        positions=[[0.0, 0.0, 0.0], [1.0 / 3.0, 2.5, -1.25], [6000.5, 3.75, 4.0]],
        cell=[[12345.678901234567, 0.0, 0.0], [1.0 / 3.0, 7.25, 0.0], [1e-17, -2.0 / 3.0, 9.5]],
        pbc=[True, True, False],
    )
    triclinic.set_masses([63.546, 63.546, 39.948])
    velocities = [[1e-3, -2e-3, 0.5], [0.0, 0.25, -0.125], [3.0, 2.0, 1.0]]
    triclinic.new_array("velo", np.array(velocities))
    triclinic.info["system_id"] = 7

    cluster = Atoms("Ar3", positions=[[0.0, 0.0, 0.0], [1.12, 0.0, 0.0], [0.56, 0.97, 0.0]])
    cluster.info["system_id"] = 8

    cubic = bulk("Cu", "fcc", a=3.615, cubic=True)
    cubic.info["system_id"] = 9

    boxed = Atoms("Ar", positions=[[1.0, 2.0, 3.0]], cell=[10.0, 11.0, 12.0], pbc=False)
    boxed.info["system_id"] = 10

    return [(triclinic, True), (cluster, False), (cubic, True), (boxed, True)]


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    try:
        import ase
        import ase.io
        import numpy as np
    except ImportError as e:
        print(f"ASE is not installed for {sys.executable} ({e}): test skipped "
              "(configure with -DPython3_EXECUTABLE=<a python with ASE> to run it)")
        return SKIP
    roundtrip, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    ase_path = os.path.join(work, "ase_written.xyz")
    baton_path = os.path.join(work, "baton_written.xyz")

    originals = frames(np)
    ase.io.write(ase_path, [atoms for atoms, _ in originals], format="extxyz")
    run = subprocess.run([roundtrip, ase_path, baton_path], capture_output=True, text=True)
    sys.stdout.write(run.stdout + run.stderr)
    if run.returncode != 0:
        print(f"FAILED: xyz_roundtrip exited with {run.returncode}")
        return 1

    reference = ase.io.read(ase_path, index=":", format="extxyz")
    rewritten = ase.io.read(baton_path, index=":", format="extxyz")
    with open(baton_path) as f:
        lines = f.read().splitlines()

    problems = []
    if len(reference) != len(originals) or len(rewritten) != len(originals):
        problems.append(f"frames: ASE wrote {len(originals)}, read {len(reference)} back from its "
                        f"own file and {len(rewritten)} from Baton's")
    comment_line = 1
    for i, ((original, has_cell), ref, got) in enumerate(zip(originals, reference, rewritten)):
        def check(what, ok):
            if not ok:
                problems.append(f"frame {i}: {what} differs")

        check("species", got.get_chemical_symbols() == ref.get_chemical_symbols())
        check("positions", np.array_equal(got.positions, ref.positions))
        check("cell", np.array_equal(got.cell.array, ref.cell.array))
        check("cell (against the one ASE was given)",
              np.array_equal(got.cell.array, original.cell.array))
        check("pbc", np.array_equal(got.pbc, ref.pbc) and np.array_equal(got.pbc, original.pbc))
        check("masses", np.array_equal(got.get_masses(), ref.get_masses()))
        check("velo", ("velo" in got.arrays) == ("velo" in ref.arrays) and
              ("velo" not in ref.arrays or np.array_equal(got.arrays["velo"], ref.arrays["velo"])))
        check("system_id", got.info.get("system_id") == ref.info.get("system_id"))
        scale = max(1.0, float(np.abs(original.positions).max()))
        check("positions (against ASE's, to its 8 decimals)",
              np.allclose(got.positions, original.positions, rtol=0, atol=1e-8 * scale))
        comment = lines[comment_line]
        lattice_first = comment.startswith("Lattice=\"")
        check("Lattice placement (first key with a cell, absent without)",
              lattice_first == has_cell and comment.count("Lattice=") == has_cell)
        comment_line += len(original) + 2

    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        print("--- ASE wrote ---\n" + open(ase_path).read())
        print("--- Baton wrote ---\n" + "\n".join(lines))
        return 1
    print(f"ASE {ase.__version__}: {len(originals)} frames (triclinic pbc T T F, cluster, cubic, "
          "boxed cluster) identical after Baton's read and write")
    return 0


if __name__ == "__main__":
    sys.exit(main())
