"""Checks baton-pipeline's results against the model's own numbers at the output structures.

Usage: check_results.py MODEL.pt RESULTS.xyz [--plus-lj RC]. For every frame of RESULTS.xyz (an
extended XYZ written by baton-pipeline: species, pos, energy, fmax, virial), evaluates MODEL.pt in
Python on the same atoms (edges by brute force: every image within the model's r_max) and compares
energy, fmax (from forces by autograd, or the model's own) and virial to 1e-9 relative (absolute
below 1). With --plus-lj RC, the reference is the model plus Lennard-Jones (epsilon 1, sigma 1, cut
and shifted at RC: baton-pipeline --model-plus lj --cutoff RC). Exits 1 at the first mismatch.
"""
import re
import sys

import torch


def frames(path):
    with open(path) as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines) and lines[i].strip():
        n = int(lines[i])
        head = lines[i + 1]
        rows = [line.split() for line in lines[i + 2:i + 2 + n]]
        i += 2 + n
        keys = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', head))
        cell = [float(v) for v in keys["Lattice"].strip('"').split()] if "Lattice" in keys else [0.0] * 9
        pbc = keys.get("pbc", '"F F F"').strip('"').split() == ["T", "T", "T"]
        yield {
            "id": keys["system_id"], "species": [r[0] for r in rows],
            "pos": torch.tensor([[float(v) for v in r[1:4]] for r in rows], dtype=torch.float64),
            "cell": torch.tensor(cell, dtype=torch.float64).reshape(3, 3), "pbc": pbc,
            "energy": float(keys["energy"]), "fmax": float(keys["fmax"]),
            "virial": [float(v) for v in keys["virial"].strip('"').split()],
        }


def main():
    model_path, results = sys.argv[1], sys.argv[2]
    plus_lj = float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--plus-lj" else 0.0
    extra = {"r_max": "", "type_names": ""}
    model = torch.jit.load(model_path, _extra_files=extra)
    rc = max(float(extra["r_max"]), plus_lj)
    names = extra["type_names"].decode().split() if isinstance(extra["type_names"], bytes) else extra["type_names"].split()
    checked = 0
    for fr in frames(results):
        pos, cell, n = fr["pos"], fr["cell"], len(fr["species"])
        reach = 1 if fr["pbc"] else 0
        edges, shifts = [], []
        for a in range(-reach, reach + 1):
            for b in range(-reach, reach + 1):
                for c in range(-reach, reach + 1):
                    shift = torch.tensor([a, b, c], dtype=torch.float64)
                    d = pos.unsqueeze(0) - pos.unsqueeze(1) + shift @ cell  # [i, j]
                    close = ((d * d).sum(-1) < rc * rc).nonzero()
                    for i, j in close.tolist():
                        if i != j or a or b or c:
                            edges.append((i, j))
                            shifts.append([a, b, c])
        p = pos.clone().requires_grad_(True)
        strain = torch.zeros(1, 3, 3, dtype=torch.float64, requires_grad=True)
        sym = 0.5 * (strain + strain.transpose(1, 2))
        data = {
            "pos": p + p @ sym[0], "cell": (cell + cell @ sym[0]).unsqueeze(0),
            "edge_index": torch.tensor(edges, dtype=torch.long).t().contiguous(),
            "edge_cell_shift": torch.tensor(shifts, dtype=torch.float64),
            "atom_types": torch.tensor([names.index(s) for s in fr["species"]], dtype=torch.long),
            "batch": torch.zeros(n, dtype=torch.long), "ptr": torch.tensor([0, n]),
            "pbc": torch.tensor([[fr["pbc"]] * 3]),
        }
        r_max = float(extra["r_max"])
        ei, es = data["edge_index"], data["edge_cell_shift"]
        vec = data["pos"][ei[1]] - data["pos"][ei[0]] + es @ data["cell"][0]
        inside = ((vec * vec).sum(-1) < r_max * r_max).nonzero().reshape(-1)  # the model's edges
        out = model(dict(data, edge_index=ei[:, inside].contiguous(), edge_cell_shift=es[inside]))
        energy = out["total_energy"].reshape(-1)[0]
        extra_energy = torch.zeros((), dtype=torch.float64)
        if plus_lj > 0:
            r2 = (vec * vec).sum(-1)
            near = r2 < plus_lj * plus_lj
            shift = 4.0 * ((1 / plus_lj) ** 12 - (1 / plus_lj) ** 6)
            sr6 = (1.0 / r2[near]) ** 3
            extra_energy = (0.5 * (4.0 * (sr6 * sr6 - sr6) - shift)).sum()
        g_pos, g_strain = torch.autograd.grad(energy + extra_energy, [p, strain])
        x_pos, x_strain = torch.zeros_like(p), torch.zeros_like(strain)
        if plus_lj > 0 and ("forces" in out or "virial" in out):
            x_pos, x_strain = torch.autograd.grad(extra_energy, [p, strain])
        forces = out["forces"] - x_pos if "forces" in out else -g_pos
        virial = out["virial"][0] - x_strain[0] if "virial" in out else -g_strain[0]
        energy = energy + extra_energy
        fmax = float(forces.norm(dim=1).max())
        want = {"energy": float(energy), "fmax": fmax}
        for k in range(9):
            want[f"virial[{k}]"] = float(virial.reshape(-1)[k])
        got = {"energy": fr["energy"], "fmax": fr["fmax"]}
        for k in range(9):
            got[f"virial[{k}]"] = fr["virial"][k]
        for key, w in want.items():
            # fmax is 1e-6 after a relaxation: compared to the largest force's scale, not its own.
            scale = max(1.0, abs(w)) if key != "fmax" else max(1.0, float(forces.abs().max()))
            if abs(got[key] - w) > 1e-9 * scale:
                print(f"FAIL: system {fr['id']}: {key} {got[key]!r}, the model gives {w!r}")
                sys.exit(1)
        checked += 1
    print(f"ok: {checked} systems match {model_path}'s energies, fmax and virials")


if __name__ == "__main__":
    main()
