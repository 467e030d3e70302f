"""Writes the TorchScript models Baton's model tests use (no model file is kept in the repository).

Usage: make_models.py OUTDIR. Needs torch (Debian: /usr/bin/python3 with python3-torch).

Every model takes the batched NequIP/Allegro dict (docs/models.md) and returns a dict:
  lj.pt            Lennard-Jones (eps 1, sigma 1, cutoff 2.5, shifted), energy only: Baton takes
                   forces and virial by autograd.
  lj_forces.pt     the same, returning its own forces and virial (analytic).
  lj32.pt          lj.pt in float32.
  manybody.pt      an energy-only embedding model of two species (A, B): E = sum_i F(rho_i),
                   rho_i = sum_j w(t_i, t_j) phi(r_ij), smooth at its cutoff 2.0.
  nan.pt           lj.pt whose energy is NaN for systems with an atom of type 1 (B).
  no_energy.pt     returns {"energy": ...}: no total_energy.
  no_cutoff.pt     lj.pt without its r_max entry.
  not_a_model.pt   text.
  systems.xyz      input for baton-pipeline: 4 clusters (fcc fragments of 32 atoms) and 2 periodic
                   fcc cells of 108 atoms (orthorhombic and triclinic), species A and B, in
                   Lennard-Jones units.
"""
import math
import os
import sys
from typing import Dict

import torch


def edge_vectors(data: Dict[str, torch.Tensor]) -> torch.Tensor:
    pos = data["pos"]
    i = data["edge_index"][0]
    j = data["edge_index"][1]
    cell = data["cell"][data["batch"][i]]  # [E, 3, 3], rows are cell vectors
    shift = torch.bmm(data["edge_cell_shift"].unsqueeze(1), cell).squeeze(1)
    return pos[j] - pos[i] + shift


class LJ(torch.nn.Module):
    def __init__(self, eps: float, sigma: float, rc: float, nan_type: int):
        super().__init__()
        self.register_buffer("eps", torch.tensor(eps, dtype=torch.float64))
        self.sigma = sigma
        self.rc = rc
        self.nan_type = nan_type
        sr6 = (sigma / rc) ** 6
        self.shift = 4.0 * eps * (sr6 * sr6 - sr6)

    def forward(self, data: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        return {"total_energy": self.energy(data).unsqueeze(-1)}

    def energy(self, data: Dict[str, torch.Tensor]) -> torch.Tensor:
        vec = edge_vectors(data)
        r2 = (vec * vec).sum(-1)
        sr6 = (self.sigma * self.sigma / r2) ** 3
        pair = 4.0 * self.eps * (sr6 * sr6 - sr6) - self.shift
        n = data["pos"].shape[0]
        s = data["ptr"].shape[0] - 1
        atom = torch.zeros(n, dtype=pair.dtype, device=pair.device)
        atom = atom.index_add(0, data["edge_index"][0], 0.5 * pair)
        total = torch.zeros(s, dtype=pair.dtype, device=pair.device)
        total = total.index_add(0, data["batch"], atom)
        if self.nan_type >= 0:
            bad = torch.zeros(s, dtype=pair.dtype, device=pair.device)
            bad = bad.index_add(0, data["batch"], (data["atom_types"] == self.nan_type).to(pair.dtype))
            total = torch.where(bad > 0, torch.full_like(total, math.nan), total)
        return total


class LJForces(LJ):
    def forward(self, data: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        energy = self.energy(data)
        vec = edge_vectors(data)  # r_ij = x_j - x_i
        r2 = (vec * vec).sum(-1)
        sr6 = (self.sigma * self.sigma / r2) ** 3
        # dE_pair/dr / r; the force on i from j is -(dE/dr / r) (x_i - x_j) = (dE/dr / r) r_ij.
        de_r = -(48.0 * self.eps * sr6 * sr6 - 24.0 * self.eps * sr6) / r2
        fij = (de_r.unsqueeze(-1) * vec)  # force on i from this edge
        n = data["pos"].shape[0]
        s = data["ptr"].shape[0] - 1
        forces = torch.zeros((n, 3), dtype=vec.dtype, device=vec.device)
        forces = forces.index_add(0, data["edge_index"][0], fij)
        # virial = sum over pairs (x_i - x_j) (x) F_ij, half per edge of the full list.
        w = 0.5 * (-vec).unsqueeze(-1) * fij.unsqueeze(-2)
        virial = torch.zeros((s, 3, 3), dtype=vec.dtype, device=vec.device)
        virial = virial.index_add(0, data["batch"][data["edge_index"][0]], w)
        return {"total_energy": energy, "forces": forces, "virial": virial}


class ManyBody(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rc = 2.0
        self.register_buffer("w", torch.tensor([[1.0, 0.7], [0.7, 1.3]], dtype=torch.float64))

    def forward(self, data: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        vec = edge_vectors(data)
        r = torch.sqrt((vec * vec).sum(-1))
        i = data["edge_index"][0]
        j = data["edge_index"][1]
        t = data["atom_types"]
        x = r / self.rc
        phi = torch.exp(-2.0 * r) * (1.0 - x * x) ** 3  # smooth to zero at rc
        rho = torch.zeros(data["pos"].shape[0], dtype=vec.dtype, device=vec.device)
        rho = rho.index_add(0, i, self.w[t[i], t[j]] * phi)
        # Repulsion between pairs plus an embedding energy -sqrt(rho): binding, many-body.
        rep = torch.zeros_like(rho).index_add(0, i, 0.5 * 4.0 * torch.exp(-4.0 * r) * (1.0 - x * x) ** 3)
        atom = rep - torch.sqrt(rho + 1e-12)
        s = data["ptr"].shape[0] - 1
        total = torch.zeros(s, dtype=vec.dtype, device=vec.device).index_add(0, data["batch"], atom)
        return {"total_energy": total}


class NoEnergy(torch.nn.Module):
    def forward(self, data: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        return {"energy": data["pos"].sum().unsqueeze(0)}


def save(module: torch.nn.Module, path: str, r_max, types: str, dtype: str = "") -> None:
    extra = {"type_names": types}
    if r_max is not None:
        extra["r_max"] = str(r_max)
    if dtype:
        extra["model_dtype"] = dtype
    torch.jit.save(torch.jit.script(module), path, _extra_files=extra)


def fcc(cells: int, a: float, jitter: float, seed: int):
    gen = torch.Generator().manual_seed(seed)
    basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
    pos = []
    for z in range(cells):
        for y in range(cells):
            for x in range(cells):
                for b in basis:
                    p = [(x + b[0]) * a, (y + b[1]) * a, (z + b[2]) * a]
                    d = (torch.rand(3, generator=gen, dtype=torch.float64) * 2 - 1) * jitter
                    pos.append([p[k] + float(d[k]) for k in range(3)])
    return pos


def write_systems(path: str) -> None:
    frames = []
    for k in range(4):  # clusters: fcc fragments of 2^3 cells
        pos = fcc(2, 1.6, 0.05, k)
        frames.append((k, None, pos))
    a = 3 * 1.7  # 3^3 fcc cells, wider than twice lj.pt's cutoff
    frames.append((4, [a, 0, 0, 0, a, 0, 0, 0, a], fcc(3, 1.7, 0.05, 4)))
    tri = fcc(3, 1.7, 0.05, 5)  # tilted: x += 0.5 y / a + 0.3 z / a, y -= 0.2 z / a (fractions kept)
    frames.append((5, [a, 0, 0, 0.5, a, 0, 0.3, -0.2, a],
                   [[p[0] + 0.5 * p[1] / a + 0.3 * p[2] / a, p[1] - 0.2 * p[2] / a, p[2]]
                    for p in tri]))
    with open(path, "w") as f:
        for sid, cell, pos in frames:
            f.write(f"{len(pos)}\n")
            lattice = "" if cell is None else 'Lattice="' + " ".join(repr(c) for c in cell) + '" pbc="T T T" '
            f.write(f"{lattice}Properties=species:S:1:pos:R:3 system_id={sid}\n")
            for i, p in enumerate(pos):
                f.write(f"{'B' if i % 3 == 1 else 'A'} {p[0]!r} {p[1]!r} {p[2]!r}\n")


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    save(LJ(1.0, 1.0, 2.5, -1), f"{out}/lj.pt", 2.5, "A B")
    save(LJForces(1.0, 1.0, 2.5, -1), f"{out}/lj_forces.pt", 2.5, "A B")
    save(LJ(1.0, 1.0, 2.5, -1).to(torch.float32), f"{out}/lj32.pt", 2.5, "A B", "float32")
    save(ManyBody(), f"{out}/manybody.pt", 2.0, "A B")
    save(LJ(1.0, 1.0, 2.5, 1), f"{out}/nan.pt", 2.5, "A B")
    save(NoEnergy(), f"{out}/no_energy.pt", 2.5, "A B")
    save(LJ(1.0, 1.0, 2.5, -1), f"{out}/no_cutoff.pt", None, "A B")
    with open(f"{out}/not_a_model.pt", "w") as f:
        f.write("this is not a TorchScript archive\n")
    write_systems(f"{out}/systems.xyz")


if __name__ == "__main__":
    main(sys.argv[1])
