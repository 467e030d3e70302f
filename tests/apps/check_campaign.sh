#!/bin/bash
# docs/pipeline.md's campaign (share/examples/campaign.sh): relax cells, NVT, NPT, for LJ cells and
# (with Cu_u3.eam) Cu cells. Checks the exit code and that every system comes out with a volume per
# atom in its phase's range (LJ at T 0.6, P 0.1: 1.0-1.1 sigma^3; Cu at 300 K: 11.8-12.3 A^3).
# usage: check_campaign.sh PIPELINE MPIEXEC OPENMPI(0|1) WORK SCRIPT [Cu_u3.eam]
set -u
pipeline=$1 mpiexec=$2 openmpi=$3 work=$4 script=$5 eam=${6:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export MPIEXEC="$mpiexec" MPIEXEC_FLAGS=""
if [ "$openmpi" = 1 ] || [ "$openmpi" = ON ] || [ "$openmpi" = TRUE ]; then
  export MPIEXEC_FLAGS="--oversubscribe"
fi
out=$(sh "$script" "$pipeline" $eam 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: the campaign exited with $rc"; cat ./*.log; exit 1; }
lj=$(echo "$out" | awk '/^  LJ/ { n++; v = $(NF - 2) + 0; if (v < 1.0 || v > 1.1) bad++ } END { print n + 0, bad + 0 }')
[ "$lj" = "4 0" ] || { echo "FAIL: LJ results (count, out of range): $lj"; exit 1; }
if [ -n "$eam" ]; then
  cu=$(echo "$out" | awk '/^  Cu/ { n++; v = $(NF - 2) + 0; if (v < 11.8 || v > 12.3) bad++ } END { print n + 0, bad + 0 }')
  [ "$cu" = "2 0" ] || { echo "FAIL: Cu results (count, out of range): $cu"; exit 1; }
fi
echo "campaign: every system relaxed, equilibrated and run at pressure"
