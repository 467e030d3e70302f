#!/bin/bash
# docs/models.md's example end to end: share/examples/export_model.py writes a TorchScript model and
# a crystal, and baton-pipeline relaxes the crystal with it on 2 ranks.
#   check_export_model.sh APP MPIEXEC NP_FLAG OPENMPI WORK PYTHON EXAMPLE
python=$6 example=$7
source "$(dirname "$0")/pipeline_script.sh"
"$python" "$example" > export.log 2>&1 || fail "export_model.py: exit $?: $(cat export.log)"
[ -s cu_morse.pt ] && [ -s cu.xyz ] || fail "export_model.py wrote no cu_morse.pt or cu.xyz"
"$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" --potential torch --model cu_morse.pt --input cu.xyz \
  --stages fire --output cu_relaxed.xyz --progress off > run.log 2>&1 ||
  fail "baton-pipeline: exit $?: $(cat run.log)"
grep -q "^1 systems in" run.log || fail "no summary: $(cat run.log)"
header=$(sed -n 2p cu_relaxed.xyz | sed 's/ baton_run=.*//')
fmax=$(echo "$header" | grep -o ' fmax=[^ ]*' | cut -d= -f2)
awk -v f="$fmax" 'BEGIN {exit !(f != "" && f <= 1e-6)}' || fail "not relaxed (fmax '$fmax'): $header"
echo "ok: the exported model relaxed the crystal to fmax $fmax"
