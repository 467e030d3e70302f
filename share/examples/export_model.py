"""A Morse pair model for copper as a TorchScript file in Baton's batched convention, and a
strained copper crystal to relax with it (needs torch and ASE):
    python3 export_model.py      # writes cu_morse.pt and cu.xyz
    mpiexec -n 2 baton-pipeline --potential torch --model cu_morse.pt --input cu.xyz --stages fire
"""
from typing import Dict

import torch
from ase.build import bulk
from ase.io import write


class Morse(torch.nn.Module):
    """E = sum over pairs D ((1 - exp(-a (r - r0)))^2 - 1), shifted to 0 at the cutoff."""

    def __init__(self, depth: float, alpha: float, r0: float, cutoff: float):
        super().__init__()
        self.depth, self.alpha, self.r0 = depth, alpha, r0
        self.shift = depth * ((1 - torch.exp(torch.tensor(-alpha * (cutoff - r0)))) ** 2 - 1).item()

    def forward(self, data: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        i, j = data["edge_index"][0], data["edge_index"][1]  # every pair, both ways
        cell = data["cell"][data["batch"][i]]  # each edge's cell, rows a, b, c
        shift = torch.bmm(data["edge_cell_shift"].unsqueeze(1), cell).squeeze(1)
        vec = data["pos"][j] - data["pos"][i] + shift
        r = torch.sqrt((vec * vec).sum(dim=1))
        pair = self.depth * ((1 - torch.exp(-self.alpha * (r - self.r0))) ** 2 - 1) - self.shift
        atom = torch.zeros_like(data["pos"][:, 0]).index_add(0, i, 0.5 * pair)
        systems = data["ptr"].shape[0] - 1
        total = torch.zeros(systems, dtype=atom.dtype).index_add(0, data["batch"], atom)
        return {"total_energy": total}  # forces and virial: Baton takes them by autograd


model = torch.jit.script(Morse(depth=0.3429, alpha=1.3588, r0=2.866, cutoff=5.0))  # eV, 1/A, A
torch.jit.save(model, "cu_morse.pt", _extra_files={"r_max": "5.0", "type_names": "Cu"})

crystal = bulk("Cu", "fcc", a=3.7, cubic=True).repeat((3, 3, 3))  # 108 atoms, 2 % stretched
crystal.rattle(0.05, seed=1)
write("cu.xyz", crystal, format="extxyz")
