"""The strained, sheared, jittered fcc crystal of the variable-cell reference tests
(tests/lammps/compare_relax_cell.py, tests/ase/compare_relax_cell.py), built the same way for both."""
import random

STRAIN = (1.03, 0.98, 1.01)
TILT = (0.04, -0.03, 0.02)  # xy, xz, yz as fractions of the cell's side


def crystal(a, cells, seed):
    """Positions and the LAMMPS-form cell (rows a, b, c) of cells^3 fcc unit cells of side a,
    strained by STRAIN, tilted by TILT, each coordinate jittered by up to 2% of a."""
    basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
    rng = random.Random(seed)
    side = a * cells
    cell = [[side * STRAIN[0], 0.0, 0.0], [TILT[0] * side, side * STRAIN[1], 0.0],
            [TILT[1] * side, TILT[2] * side, side * STRAIN[2]]]
    pos = []
    for k in range(cells):
        for j in range(cells):
            for i in range(cells):
                for b in basis:
                    f = [(i + b[0]) / cells, (j + b[1]) / cells, (k + b[2]) / cells]
                    x = [sum(f[r] * cell[r][d] for r in range(3)) for d in range(3)]
                    pos.append([c + rng.uniform(-0.02, 0.02) * a for c in x])
    return pos, cell


def determinant(m):
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
