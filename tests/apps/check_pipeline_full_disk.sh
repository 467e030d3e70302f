#!/bin/bash
# baton-pipeline on a full disk: the error names the cause ("No space left on device") and says
# where the results are only when a results file holds some. Needs a small tmpfs, so root with
# mount rights; exits 77 (skipped) otherwise.
#   check_pipeline_full_disk.sh APP MPIEXEC NP_FLAG OPENMPI WORK
umount "$5/full" 2> /dev/null  # left mounted by a run that was killed
source "$(dirname "$0")/pipeline_script.sh"
mkdir full
mount -t tmpfs -o size=64k tmpfs full 2> /dev/null || { echo "skipped: cannot mount a tmpfs here"; exit 77; }
trap 'end_jobs; umount "$work/full"' EXIT
dd if=/dev/zero of=full/fill bs=4k count=64 2> /dev/null  # fills it

# The spill file cannot grow before any system finished: no results file is named, none is left.
"$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" --systems 200 --overflow 1 --spill full \
  --capacity-systems 2 --output res.xyz --progress off > spill.log 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "spill on a full disk: exit $rc, expected 1: $(cat spill.log)"
grep -q "writing the spill file '.*' failed: No space left on device" spill.log \
  || fail "spill on a full disk: the cause is not named: $(cat spill.log)"
grep -q "no result was written, so no results file was kept" spill.log \
  || fail "spill on a full disk: no word on the results: $(cat spill.log)"
grep -q "res.xyz.part" spill.log && fail "a results file that does not exist is named: $(cat spill.log)"
[ -e res.xyz.part ] && fail "res.xyz.part left behind without results"

# The results file itself on the full disk.
rm full/fill && dd if=/dev/zero of=full/fill bs=1k count=64 2> /dev/null  # not a page left
"$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" --systems 200 --output full/res.xyz --progress off \
  > out.log 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "results on a full disk: exit $rc, expected 1: $(cat out.log)"
grep -q "No space left on device" out.log || fail "results on a full disk: the cause is not named: $(cat out.log)"
grep -q "no result was written, so no results file was kept" out.log \
  || fail "results on a full disk: no word on the results: $(cat out.log)"
[ -e full/res.xyz.part ] && fail "full/res.xyz.part left behind without a complete result"
echo "ok: a full disk is named, and only a results file that holds results is"
