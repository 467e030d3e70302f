#!/bin/bash
# Runs baton-pipeline on 10^4 and 10^5 LJ13 clusters (FIRE) and prints, for each, the throughput and
# the peak resident memory of every rank (the run summary's getrusage figures), then the growth
# from the small campaign to the large one: memory should not grow with the campaign, and the
# throughput per system should not fall.
#   share/scripts/pipeline-scale.sh [path/to/baton-pipeline] [ranks] [extra baton-pipeline args]
# Environment: MPIEXEC (default mpiexec), SIZES (default "10000 100000").
set -eu
app=${1:-build/apps/baton-pipeline}
ranks=${2:-2}
shift $(( $# < 2 ? $# : 2 ))
mpiexec=${MPIEXEC:-mpiexec}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
extra=()
"$mpiexec" --version 2>&1 | grep -q "Open MPI" && extra=(--oversubscribe)

printf '%-9s %14s %s\n' systems systems/s "peak RSS per rank (MB)"
declare -a rate rss
for n in ${SIZES:-10000 100000}; do
  "$mpiexec" -n "$ranks" "${extra[@]}" "$app" --systems "$n" --sizes 13 --stages fire \
    --progress off --output "$work/out.xyz" "$@" > "$work/log" 2>&1 \
    || { cat "$work/log"; exit 1; }
  r=$(sed -n 's/.* on [0-9]* ranks* ([a-z_]*): \([0-9.]*\) systems\/s.*/\1/p' "$work/log")
  m=$(sed -n 's/^peak memory (RSS) per rank, MB: //p' "$work/log")
  printf '%-9s %14s %s\n' "$n" "$r" "$m"
  rate+=("$r")
  rss+=("$(echo "$m" | tr ' ' '\n' | sort -g | tail -1)")
  rm -f "$work/out.xyz"
done
awk -v r0="${rate[0]}" -v r1="${rate[-1]}" -v m0="${rss[0]}" -v m1="${rss[-1]}" 'BEGIN {
  printf "largest rank RSS grows %.1f%% (target < 10%%); throughput per system changes %+.1f%% (target within 5%%)\n",
         100 * (m1 - m0) / m0, 100 * (r1 - r0) / r0 }'
