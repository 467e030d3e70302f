#!/bin/bash
# baton-pipeline --potential torch: an energy-only model of two species (tests/models/make_models.py
# manybody.pt, which Baton's code knows nothing of) relaxes clusters and periodic cells through
# --stages fire; the results are bit-identical at 1 and 2 ranks, batched or one system per call, and
# match the model's own energies, forces and virials at the output structures (check_results.py);
# a pair term added with --model-plus gives the sum;
# bad models and inputs are exit 2 with one line naming the cause; NaN energies fail systems (exit 4).
#   check_pipeline_torch.sh APP MPIEXEC NP_FLAG OPENMPI WORK MODELS PYTHON
models=$6 python=$7
source "$(dirname "$0")/pipeline_script.sh"
checks=$(dirname "$0")/../models/check_results.py
run() {  # run NP OUTPUT ARGS...: baton-pipeline on NP ranks over the models' systems.xyz
  local np=$1 out=$2
  shift 2
  "$mpiexec" "$np_flag" "$np" "${extra[@]}" "$app" --potential torch --units lj \
    --input "$models/systems.xyz" --output "$out" --progress off "$@"
}
same() {  # same A B: the same systems with the same numbers (frames in any order)
  "$python" - "$1" "$2" << 'PY'
import re, sys
def frames(path):
    lines, out, i = open(path).read().splitlines(), {}, 0
    while i < len(lines) and lines[i].strip():
        n = int(lines[i])
        head = re.sub(r' baton_run=("[^"]*"|\S+)', '', lines[i + 1])
        out[re.search(r'system_id=(\d+)', head).group(1)] = (head, lines[i + 2:i + 2 + n])
        i += 2 + n
    return out
a, b = frames(sys.argv[1]), frames(sys.argv[2])
sys.exit(0 if a == b and len(a) == 6 else 1)
PY
}

# 1 rank with batched calls, 2 ranks with one system per call: the same numbers.
run 1 fire1.xyz --model "$models/manybody.pt" --stages fire --fmax 1e-5 > fire1.log 2>&1 ||
  fail "fire at 1 rank: exit $?: $(cat fire1.log)"
grep -q "6 systems in" fire1.log || fail "fire at 1 rank: no summary: $(cat fire1.log)"
run 2 fire2.xyz --model "$models/manybody.pt" --stages fire --fmax 1e-5 --model-per-system \
  > fire2.log 2>&1 || fail "fire at 2 ranks, --model-per-system: exit $?: $(cat fire2.log)"
same fire1.xyz fire2.xyz ||
  fail "fire: the results at 1 rank (batched) and 2 ranks (--model-per-system) differ"
"$python" "$checks" "$models/manybody.pt" fire1.xyz || fail "fire: results are not the model's"
"$python" - fire1.xyz << 'PY' || fail "fire: not every system relaxed to fmax 1e-5"
import re, sys
heads = [re.sub(r' baton_run=("[^"]*"|\S+)', '', l) for l in open(sys.argv[1]) if 'system_id=' in l]
fmax = [float(re.search(r' fmax=(\S+)', h).group(1)) for h in heads]
sys.exit(0 if len(fmax) == 6 and max(fmax) <= 1e-5 else 1)
PY
# The model's memory, measured at setup, and the calls it allows, in the header and the summary.
[ "$(grep -c '^model memory (measured on system .*per atom, .*per edge$' fire1.log)" -eq 2 ] ||
  fail "fire at 1 rank: no model memory line in the header and the summary: $(cat fire1.log)"
grep -q "^model calls: .* MB per rank (the node's available memory over its 1 rank), half kept free: at most [0-9]* edges per call" fire1.log ||
  fail "fire at 1 rank: no model calls line: $(cat fire1.log)"
# A small --model-memory: fewer atoms per batch than --capacity-atoms, the same results.
run 2 small.xyz --model "$models/manybody.pt" --stages fire --fmax 1e-5 --capacity-atoms 512 \
  --model-memory 4 > small.log 2>&1 || fail "--model-memory 4: exit $?: $(cat small.log)"
grep -q "^model calls: 4 MB per rank (--model-memory), half kept free: at most [0-9]* edges per call; .* atoms per stage batch (of --capacity-atoms 512)" small.log ||
  fail "--model-memory 4: the batch was not made smaller: $(cat small.log)"
same fire1.xyz small.xyz || fail "--model-memory 4: the results differ from the unlimited run's"

# NVE and Langevin over a model that returns its own forces and virial.
run 2 md.xyz --model "$models/lj_forces.pt" --stages nve,langevin --nve-steps 50 \
  --langevin-steps 50 > md.log 2>&1 || fail "nve,langevin: exit $?: $(cat md.log)"
"$python" "$checks" "$models/lj_forces.pt" md.xyz || fail "nve,langevin: results are not the model's"

# A pair term added to the model (--model-plus): the results are the model's plus Lennard-Jones to
# 2.52 (beyond lj.pt's r_max 2.5; the crystals allow no more), at the output structures.
run 2 plus.xyz --model "$models/lj.pt" --model-plus lj --cutoff 2.52 --stages fire > plus.log 2>&1 ||
  fail "--model-plus lj: exit $?: $(cat plus.log)"
"$python" "$checks" "$models/lj.pt" plus.xyz --plus-lj 2.52 || fail "--model-plus lj: not the sum"

# Bad models and inputs: exit 2, one line naming the cause.
expect_usage() {  # expect_usage NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  run 1 bad.xyz "$@" > "$name.log" 2>&1
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, expected 2: $(cat "$name.log")"
  grep -q -- "$pattern" "$name.log" || fail "$name: no '$pattern' in: $(cat "$name.log")"
  # One line from baton-pipeline (Open MPI's mpiexec adds its own note on the exit code).
  [ "$(grep -c '^baton-pipeline' "$name.log")" -eq 1 ] || fail "$name: not one line: $(cat "$name.log")"
}
expect_usage not_a_model "--model: .*not_a_model.pt' is not a TorchScript model libtorch can load: " \
  --model "$models/not_a_model.pt"
expect_usage missing "--model: .*missing.pt" --model "$models/missing.pt"
expect_usage no_cutoff "no usable cutoff" --model "$models/no_cutoff.pt"
expect_usage no_energy "the model's output has no total_energy" --model "$models/no_energy.pt"
expect_usage too_many_edges "--model-memory: system [0-9]* has [0-9]* edges within the model's cutoff, but 0.4 MB per rank (--model-memory) allows [0-9]* edges in one call" \
  --model "$models/manybody.pt" --model-memory 0.4 --capacity-atoms 108
expect_usage no_room "--model-memory: 0.01 MB per rank (--model-memory) cannot hold a model call of 108 atoms" \
  --model "$models/manybody.pt" --model-memory 0.01 --capacity-atoms 108
sed 's/^B /C /' "$models/systems.xyz" > c.xyz
"$mpiexec" "$np_flag" 1 "${extra[@]}" "$app" --potential torch --units lj --input c.xyz \
  --model "$models/lj.pt" --output bad.xyz --progress off > species.log 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "species: exit $rc, expected 2: $(cat species.log)"
grep -q "has species 'C', which .*lj.pt does not have (it has A, B)" species.log ||
  fail "species: the missing species is not named: $(cat species.log)"
# Metal units: element symbols get their standard masses; other labels need a masses column.
"$mpiexec" "$np_flag" 1 "${extra[@]}" "$app" --potential torch --input "$models/systems.xyz" \
  --model "$models/lj.pt" --output bad.xyz --progress off > masses.log 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "masses: exit $rc, expected 2: $(cat masses.log)"
grep -q "species 'A' is not an element symbol: give a masses column" masses.log ||
  fail "masses: the cause is not named: $(cat masses.log)"

# A model whose energy is NaN for systems with a B atom: they fail, the run says so (exit 4).
run 1 nan.xyz --model "$models/nan.pt" --stages fire > nan.log 2>&1
rc=$?
[ "$rc" -eq 4 ] || fail "nan.pt: exit $rc, expected 4: $(cat nan.log)"
[ "$(grep -c 'failed=T' nan.xyz)" -eq 6 ] || fail "nan.pt: not every system (all have B) failed"
grep -q 'failure="non-finite energy"' nan.xyz || fail "nan.pt: no failure reason in the results"
echo "ok: a TorchScript model runs through baton-pipeline, identical at 1 and 2 ranks"
