"""What the LAMMPS references (tests/lammps/compare_relax_cell.py, compare_fire2.py, compare_npt.py,
compare_mtk.py) share: their command line, and running LAMMPS on an input."""
import argparse
import os
import subprocess
import sys


def arguments(binary="pipeline", needs_funcfl=False):
    """--lmp, --BINARY (the Baton program the script runs), --work, --funcfl; None (print SKIP)
    when there is no LAMMPS to run, or, with `needs_funcfl`, no Cu_u3.eam."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--lmp", default="")
    parser.add_argument(f"--{binary}", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--funcfl", default="")
    args = parser.parse_args()
    if not args.lmp or not os.access(args.lmp, os.X_OK):
        print(f"SKIP: no LAMMPS executable (lmp) found ({args.lmp!r})")
        return None
    if needs_funcfl and not args.funcfl:
        print("SKIP: no Cu_u3.eam")
        return None
    os.makedirs(args.work, exist_ok=True)
    return args


def run_lammps(lmp, work, name, lines):
    """Writes `lines` to WORK/NAME.in, runs LAMMPS on it and returns its log's text; exits with
    LAMMPS' output when it fails."""
    with open(os.path.join(work, f"{name}.in"), "w") as f:
        f.write("\n".join(lines) + "\n")
    run = subprocess.run([lmp, "-in", f"{name}.in", "-log", f"{name}.log", "-screen", "none",
                          "-nocite"], cwd=work, capture_output=True, text=True)
    log = open(os.path.join(work, f"{name}.log")).read()
    if run.returncode != 0:
        sys.exit(f"LAMMPS failed on {name} ({run.returncode}):\n{run.stdout}{run.stderr}"
                 f"{log[-3000:]}")
    return log


def result_words(log):
    """The words of the log's last line printed as `RESULT ...`."""
    return [line.split() for line in log.splitlines() if line.startswith("RESULT ")][-1]
