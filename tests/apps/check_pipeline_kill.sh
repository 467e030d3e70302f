#!/bin/bash
# A rank killed mid-run (kill -9): the job ends within seconds, the results file is not there (a run
# that did not complete leaves none), and FILE.part holds whole frames up to its last flush and at
# most a cut last frame; --resume then finishes the campaign, every system exactly once.
#   check_pipeline_kill.sh APP MPIEXEC NP_FLAG OPENMPI WORK
source "$(dirname "$0")/pipeline_script.sh"
args=(--systems 20000 --sizes 13 --stages fire --progress off --output out.xyz)

"$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" "${args[@]}" > run.log 2>&1 &
job=$!
for _ in $(seq 200); do  # until some results are on disk (at most 20 s)
  [ -s out.xyz.part ] && [ "$(grep -c system_id out.xyz.part)" -gt 100 ] && break
  sleep 0.1
done
[ -s out.xyz.part ] || fail "no results on disk after 20 s: $(cat run.log)"
rank=$(my_ranks | tail -n 1)
[ -n "$rank" ] || fail "no rank to kill"
kill -9 "$rank"
start=$(date +%s)
while kill -0 "$job" 2> /dev/null; do
  [ $(( $(date +%s) - start )) -lt 30 ] || { kill -9 "$job"; fail "the job did not end within 30 s of a rank's death"; }
  sleep 0.1
done
wait "$job" && fail "the job exited 0 after a rank was killed"
[ -e out.xyz ] && fail "out.xyz exists although the run did not complete"
before=$(grep -c system_id out.xyz.part)
echo "killed rank $rank: the job ended after $(( $(date +%s) - start )) s; $before systems in out.xyz.part"

"$mpiexec" "$np_flag" 2 "${extra[@]}" "$app" "${args[@]}" --resume > resume.log 2>&1 \
  || fail "--resume failed: $(cat resume.log)"
grep -q "finished by an earlier run" resume.log || fail "--resume did not go on: $(cat resume.log)"
[ -e out.xyz.part ] && fail "out.xyz.part left after a complete run"
total=$(grep -c system_id out.xyz)
unique=$(grep -o 'system_id=[0-9]*' out.xyz | sort -u | wc -l)
[ "$total" -eq 20000 ] && [ "$unique" -eq 20000 ] || fail "$total frames, $unique ids, expected 20000 each"
echo "ok: --resume finished the campaign, 20000 systems exactly once"
