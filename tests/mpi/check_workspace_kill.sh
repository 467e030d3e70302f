#!/bin/bash
# A writer killed mid-write leaves the old record or the new one, never a torn one.
#   check_workspace_kill.sh WRITER MPIEXEC NP_FLAG OPENMPI WORK [atomic|in-place]
# atomic (the test): 1. a writer dies (SIGXFSZ, from a file size limit) after exactly BYTES bytes
# of its fourth record: its temporary file holds those bytes, the record is still version 3,
# whole. 2. five writers rewriting a record in a loop are SIGKILLed at varied moments: each time
# the record decodes and is one of the versions written (the last announced, or the one after).
# in-place (the check of the check): the same death while writing the record file in place must
# be caught as torn; the script passes only if it is.
set -u  # every check exits 1 through fail(); the script exits 0 only at its end
writer=$1 mpiexec=$2 np_flag=$3 openmpi=$4 work=$5 mode=${6:-atomic}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
extra=()
[ "$openmpi" = "TRUE" ] || [ "$openmpi" = "ON" ] || [ "$openmpi" = "1" ] && extra=(--oversubscribe)
run() { "$mpiexec" "$np_flag" 1 "${extra[@]}" "$writer" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
mb=8                       # records of 8 MiB
die_at=$((3 * 1048576 + 12345))  # bytes into the new record when its writer dies

# 1. Killed at a known byte of version 4.
mkdir root1
if [ "$mode" = "in-place" ]; then
  run write root1 k1 $mb 3 --die-at $die_at --in-place > write.log 2>&1 \
    && fail "the writer was not killed: $(cat write.log)"
  grep -q "to die after $die_at bytes" write.log || fail "the writer did not get to version 4: $(cat write.log)"
  run check root1 k1 > check.log 2>&1
  rc=$?
  cat check.log
  [ $rc -eq 3 ] && grep -q "TORN" check.log || fail "writing in place and dying mid-write was not caught as torn (exit $rc)"
  echo "ok: the check catches a record written in place and cut at byte $die_at"
  exit 0
fi
run write root1 k1 $mb 3 --die-at $die_at > write.log 2>&1 \
  && fail "the writer was not killed: $(cat write.log)"
grep -q "to die after $die_at bytes" write.log || fail "the writer did not get to version 4: $(cat write.log)"
grep -q "committed 4" write.log && fail "version 4 was committed although its writer died"
temps=(root1/baton-k1/kill/rank-0.btnr.tmp.*)
[ ${#temps[@]} -eq 1 ] && [ -f "${temps[0]}" ] || fail "no temporary file left by the killed writer: $(ls -la root1/baton-k1/kill)"
size=$(stat -c %s "${temps[0]}")
[ "$size" -eq $die_at ] || fail "the killed writer's temporary file has $size bytes, expected $die_at (not killed mid-write?)"
run check root1 k1 > check.log 2>&1 || fail "check failed after the kill: $(cat check.log)"
grep -q "^version 3, consistent" check.log || fail "expected version 3, whole: $(cat check.log)"
echo "ok: killed after $die_at bytes of version 4 (temporary file of $size bytes left); the record is version 3, whole"

# 2. SIGKILL at varied moments of a writing loop.
for attempt in 1 2 3 4 5; do
  root=root2.$attempt
  mkdir $root
  run loop $root k2 $mb > loop.$attempt.log 2>&1 &
  job=$!
  for _ in $(seq 600); do  # until version 2 is committed (at most 60 s)
    grep -q "committed 2" loop.$attempt.log && break
    kill -0 $job 2> /dev/null || fail "the loop writer ended: $(cat loop.$attempt.log)"
    sleep 0.1
  done
  grep -q "committed 2" loop.$attempt.log || fail "the loop writer committed nothing in 60 s"
  pid=$(cat $root/writer.pid)
  sleep "0.0$(( attempt * 17 % 10 ))$(( attempt * 7 % 10 ))"  # a different moment each time
  kill -9 "$pid"
  for _ in $(seq 300); do kill -0 $job 2> /dev/null || break; sleep 0.1; done
  kill -0 $job 2> /dev/null && { kill -9 $job; fail "mpiexec did not end after its rank was killed"; }
  wait $job 2> /dev/null
  last=$(grep -o "committed [0-9]*" loop.$attempt.log | tail -1 | cut -d' ' -f2)
  run check $root k2 > check.$attempt.log 2>&1 || fail "attempt $attempt: $(cat check.$attempt.log)"
  got=$(sed -n 's/^version \([0-9]*\), consistent.*/\1/p' check.$attempt.log)
  [ -n "$got" ] && { [ "$got" -eq "$last" ] || [ "$got" -eq $((last + 1)) ]; } \
    || fail "attempt $attempt: last announced version $last, read: $(cat check.$attempt.log)"
  left=$(ls $root/baton-k2/kill | grep -c '\.tmp\.')
  echo "ok: SIGKILL after version $last was announced: the record is version $got, whole ($left temporary file(s) left)"
done
echo "ok: every killed writer left a whole record"
