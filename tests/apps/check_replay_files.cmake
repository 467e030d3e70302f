# Runs baton-replay at 4 ranks with --json/--csv/--trace and checks that the files parse and hold
# what the run recorded.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(launch ${MPIEXEC} ${NP_FLAG} 4)
if(OPENMPI)
  list(APPEND launch --oversubscribe)
endif()
execute_process(COMMAND ${launch} ${APP} --mode late --iterations 6 --batch 32 --json ${WORK}/report.json
                        --csv ${WORK}/imbalance.csv --trace ${WORK}/trace.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "baton-replay failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${PYTHON} -c "
import csv, json, sys
w = sys.argv[1]
report = json.load(open(w + '/report.json'))
assert 'time_info' in report and 'load_imbalance' in report, report.keys()
rows = list(csv.DictReader(open(w + '/imbalance.csv')))
steps = {r['step'] for r in rows}
assert 'overall' in steps and 'sample' in steps and 'merge' in steps, steps
for r in rows:
    assert 0.0 <= float(r['efficiency']) <= 1.0, r
trace = json.load(open(w + '/trace.json'))
events = trace['traceEvents']
tracks = {e['tid'] for e in events if e.get('ph') == 'X'}
assert tracks == {0, 1, 2, 3}, tracks
samples = [e for e in events if e.get('ph') == 'X' and e['name'] == 'sample']
assert len(samples) == 2 * 6, len(samples)  # two agents, six batches each
print('replay files ok:', len(rows), 'csv rows,', len(events), 'trace events')
" ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the files of baton-replay do not parse or hold the wrong data:\n${out}\n${err}")
endif()
message(STATUS "${out}")
